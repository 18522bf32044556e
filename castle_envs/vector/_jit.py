"""numba when installed; otherwise the kernels run as plain Python (correct, slow).

The kernels are written in the subset of Python that numba compiles, so one source serves
both: ``make_vec`` warns once when it has to run them uncompiled.

Every kernel is compiled with ``cache=True`` (``njit`` here makes it the default), so only a
process that finds no cached machine code compiles. That first use takes up to a minute;
so that it does not pass in silence, the first real compile of a castle-envs kernel in a
process writes one line to stderr (``COMPILE_NOTICE``), and nothing when every kernel comes
from the cache. ``CASTLE_ENVS_COMPILE_NOTICE=0`` in the environment silences it (the test
suite does).
"""
from __future__ import annotations

import os
import sys

COMPILE_NOTICE = "castle-envs: compiling numba kernels (first use only, cached afterwards)..."
_notice_written = False


def _compile_notice() -> bool:
    """Write ``COMPILE_NOTICE`` to stderr once per process; True if it wrote it now."""
    global _notice_written
    if _notice_written or os.environ.get("CASTLE_ENVS_COMPILE_NOTICE", "1") == "0":
        return False
    _notice_written = True
    print(COMPILE_NOTICE, file=sys.stderr, flush=True)
    return True


try:
    import numba
    from numba import prange
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
    from numba.core import event as _event

    def njit(*args, **kwargs):
        """``numba.njit`` with ``cache=True`` unless told otherwise."""
        kwargs.setdefault("cache", True)
        return numba.njit(*args, **kwargs)

    class _CompileListener(_event.Listener):
        """numba broadcasts ``numba:compile`` only when it compiles (a signature found in the
        disk cache is loaded without it): the first one for a castle-envs kernel writes the
        notice."""

        def on_start(self, event):
            dispatcher = (event.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if module.startswith("castle_envs"):
                _compile_notice()

        def on_end(self, event):
            pass

    _event.register("numba:compile", _CompileListener())

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
