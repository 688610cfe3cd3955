"""The Lambda runtime that assets are built for: its Python version and its OS's glibc."""

from __future__ import annotations

__all__ = ["LAMBDA_GLIBC_MINOR", "LAMBDA_PYTHON_VERSION"]

#: Python version of generated functions (``MAJOR.MINOR``): the bytecode's and the wheels'
#: (pip ``--python-version``). ``constructs.defaults.LAMBDA_RUNTIME`` is derived from it.
LAMBDA_PYTHON_VERSION = "3.13"
#: glibc minor version of the runtime's OS (python3.12+ run on Amazon Linux 2023, glibc 2.34):
#: the newest ``manylinux_2_<minor>`` wheel tag a function's dependencies may use.
LAMBDA_GLIBC_MINOR = 34
