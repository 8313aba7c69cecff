"""The distribution's version (one place, read by the package and by pyproject)."""

__version__ = "0.1.0"
