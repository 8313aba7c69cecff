"""The supervisor's modules (see ../supervisor.py, its entry point)."""
