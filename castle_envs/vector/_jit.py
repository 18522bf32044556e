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


if HAVE_NUMBA:
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def unowned(typingctx, arr):
        """``arr`` as an array without a reference count (no meminfo): numba then does no
        atomic reference counting for it or for the row views taken from it. Only for an
        array the caller keeps alive meanwhile, such as an argument of the running kernel."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context, builder, signature, args):
            src = context.make_array(arr)(context, builder, value=args[0])
            out = context.make_array(arr)(context, builder)
            for name in ("data", "nitems", "itemsize", "shape", "strides"):
                setattr(out, name, getattr(src, name))
            out.meminfo = cgutils.get_null_value(out.meminfo.type)
            out.parent = cgutils.get_null_value(out.parent.type)
            return out._getvalue()

        return arr(arr), codegen
else:
    def unowned(arr):
        return arr
