"""The client's tests (standard library ``unittest``). Run them with ``python3 tests/run.py``
from ``clients/python``, against a platform (see ``_support.py``)."""
