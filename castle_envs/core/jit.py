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
from typing import TYPE_CHECKING, Any

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


def source_cache_dir() -> str | None:
    """Where compiled kernels are cached: a folder named by a hash of every castle-envs source
    file. numba checks only a kernel's own file before reusing its cached machine code, but a
    kernel bakes in the constants and the functions it imports from other files (a row
    layout grew a word once, and kernels of an unchanged file kept copying the old number of
    words), so any change to the package's sources gets a fresh cache. ``NUMBA_CACHE_DIR``, if
    set, is left to numba; so is a cache folder that cannot be written (numba's default,
    beside the sources, is used then)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "castle-envs", "numba-" + digest.hexdigest()[:16])
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, f".write-test-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError:
        return None
    return folder


try:
    import numba
    from numba import prange

    HAVE_NUMBA = True
    _folder = source_cache_dir()
    if _folder is not None:  # before any kernel is decorated: numba reads it then
        # (numba.config makes its names at import: the checker does not see them)
        numba.config.CACHE_DIR = _folder  # type: ignore[attr-defined]
except ImportError:  # numba is a dependency, but the envs must work where it cannot install
    numba = None  # type: ignore[assignment]  # HAVE_NUMBA says which
    HAVE_NUMBA = False
    prange = range  # type: ignore[misc]  # numba's prange runs as range uncompiled

    def njit(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda func: func


#: the kernels run compiled: numba is there and ``NUMBA_DISABLE_JIT`` is not set. Uncompiled
#: they run as plain Python on NumPy scalars, which do not widen int8 arithmetic as numba
#: does, so rows that are int8 compiled are int64 then.
COMPILED = HAVE_NUMBA and not numba.config.DISABLE_JIT  # type: ignore[attr-defined]

INSTALL_HINT = "pip install numba (a dependency of castle-envs that did not install here)"


if HAVE_NUMBA:
    from numba.core import event as _event

    def njit(*args: Any, **kwargs: Any) -> Any:
        """``numba.njit`` with ``cache=True`` unless told otherwise."""
        kwargs.setdefault("cache", True)
        return numba.njit(*args, **kwargs)

    class _CompileListener(_event.Listener):
        """numba broadcasts ``numba:compile`` only when it compiles (a signature found in the
        disk cache is loaded without it): the first one for a castle-envs kernel writes the
        notice."""

        def on_start(self, event: Any) -> None:
            dispatcher = (event.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if module.startswith("castle_envs"):
                _compile_notice()

        def on_end(self, event: Any) -> None:
            pass

    _event.register("numba:compile", _CompileListener())

if TYPE_CHECKING:

    def unowned(arr: Any) -> Any:
        """As the kernels call it (numba's intrinsic below takes its typing context first)."""
elif COMPILED:
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def unowned(typingctx: Any, arr: Any) -> Any:
        """``arr`` as an array without a reference count (no meminfo): numba then does no
        atomic reference counting for it or for the row views taken from it. Only for an
        array the caller keeps alive meanwhile, such as an argument of the running kernel."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            src = context.make_array(arr)(context, builder, value=args[0])
            out = context.make_array(arr)(context, builder)
            for name in ("data", "nitems", "itemsize", "shape", "strides"):
                setattr(out, name, getattr(src, name))
            out.meminfo = cgutils.get_null_value(out.meminfo.type)
            out.parent = cgutils.get_null_value(out.parent.type)
            return out._getvalue()

        return arr(arr), codegen
else:

    def unowned(arr: Any) -> Any:
        return arr
