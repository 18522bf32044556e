"""numba when installed; otherwise the kernels run as plain Python (correct, slow).

The kernels are written in the subset of Python that numba compiles, so one source serves
both: ``make_vec`` warns once when it has to run them uncompiled.
"""
from __future__ import annotations

try:
    import numba
    from numba import njit, prange
    HAVE_NUMBA = True
except ImportError:   # the core package must work without the ``fast`` extra
    numba = None
    HAVE_NUMBA = False
    prange = range

    def njit(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda func: func

INSTALL_HINT = "pip install 'castle-envs[fast]' (or: pip install numba)"
