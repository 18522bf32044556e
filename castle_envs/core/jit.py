"""numba when installed; otherwise the kernels run as plain Python (correct, slow).

The kernels are written in the subset of Python that numba compiles, so one source serves
both: ``make_vec`` warns once when it has to run them uncompiled.

Every kernel is compiled with ``cache=True`` (``njit`` here makes it the default), so only a
process that finds no cached machine code compiles. That first use takes up to a minute;
so that it does not pass in silence, the first real compile of a castle-envs kernel in a
process writes one line to stderr (``COMPILE_NOTICE``), and nothing when every kernel comes
from the cache. A module whose kernels take long to compile names them with
``compile_note``: a compile of one of them called from Python (numba compiles what it calls
with it) writes its own line, with the time it takes. ``CASTLE_ENVS_COMPILE_NOTICE=0`` in
the environment silences both (the test suite does).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

COMPILE_NOTICE = "castle-envs: compiling numba kernels (first use only, cached afterwards)..."
#: {module: (what its kernels are, about how many seconds they take to compile)}
_NOTES: dict[str, tuple[str, int]] = {}
_written: set[str] = set()


def compile_note(module: str, what: str, seconds: int) -> None:
    """Name the kernels of ``module`` (its ``__name__``) for the line a compile of one of them
    writes: "castle-envs: compiling {what}, once per install, ~{seconds} s...". ``seconds``:
    as measured on a cold cache on the reference machine (2 cores)."""
    _NOTES[module] = (what, seconds)


def general_notice_written() -> None:
    """Take ``COMPILE_NOTICE`` as written in this process: for a helper process whose parent
    writes it (the modules' own notes, which say what is compiling, are still written)."""
    _written.add("")


def _compile_notice(module: str = "") -> bool:
    """Write ``module``'s note (``compile_note``) or else ``COMPILE_NOTICE`` to stderr, each
    once per process; True if it wrote one now."""
    note = _NOTES.get(module)
    key = module if note else ""
    if key in _written or os.environ.get("CASTLE_ENVS_COMPILE_NOTICE", "1") == "0":
        return False
    _written.add(key)
    text = (
        f"castle-envs: compiling {note[0]}, once per install, ~{note[1]} s..."
        if note
        else COMPILE_NOTICE
    )
    print(text, file=sys.stderr, flush=True)
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
    from numba.core import errors as _errors
    from numba.core import event as _event
    from numba.core import types as _types

    def _canonical(t: Any) -> Any:
        """The type a kernel is compiled for when a compiled caller passes ``t``: a constant
        as its plain type, a narrower integer as int64 (uint64 stays)."""
        t = _types.unliteral(t)
        # (numba sets an Integer's signedness and width in its constructor)
        signed, bits = getattr(t, "signed", True), getattr(t, "bitwidth", 64)
        if isinstance(t, _types.Integer) and (signed or bits < 64):
            return _types.int64
        return t

    def _one_signature(dispatcher: Any) -> Any:
        """Compiled callers get the kernel compiled once: numba would compile it again for
        each constant (``Literal[int](0)``) and integer width a caller passes, each copy
        taking as long as the first (``apply`` about 10 s), and a caller that reaches it
        through several paths links every copy. The caller's values are cast at the call.
        A kernel that needs a constant (a tuple index) is compiled as numba would."""
        typed = getattr(dispatcher, "get_call_template", None)
        if typed is None:  # NUMBA_DISABLE_JIT: numba.njit handed the plain function back
            return dispatcher

        def get_call_template(args: Any, kws: Any) -> Any:
            plain = tuple(_canonical(a) for a in args)
            plain_kws = {k: _canonical(v) for k, v in kws.items()}
            if plain != tuple(args) or plain_kws != kws:
                try:
                    return typed(plain, plain_kws)
                except _errors.NumbaError:
                    pass
            return typed(args, kws)

        dispatcher.get_call_template = get_call_template
        dispatcher.compile = _one_process_at_a_time(dispatcher)
        return dispatcher

    from numba.core.compiler_lock import global_compiler_lock as _global_compiler_lock
    from numba.core.sigutils import normalize_signature

    _held: set[str] = set()  # the kernels whose compile lock this process holds

    def _one_process_at_a_time(dispatcher: Any) -> Any:
        """The dispatcher's ``compile`` under a lock file per kernel, shared by every
        process on the machine: processes started together (``make demo``'s two, a solve's
        workers, the test suite's) would otherwise each compile the same kernel, minutes of
        CPU on a first run. The one that takes the lock compiles and writes the cache; the
        others wait, then find the kernel in the cache (numba looks there inside
        ``compile``). The lock is taken under numba's own (per-process) compiler lock, so
        the order is always numba's lock, then the file locks; a kernel's file lock is held
        while it compiles what it calls, and calls do not go round in circles, so two
        processes never wait on each other."""
        compile_now = dispatcher.compile
        name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"

        def compile(sig: Any) -> Any:
            with _global_compiler_lock:
                # compiled already (numba asks again each time it types a call), or a kernel
                # that calls itself: no lock to wait for
                if name in _held or tuple(normalize_signature(sig)[0]) in dispatcher.overloads:
                    return compile_now(sig)
                lock = _lock_file(name)
                if lock is None:
                    return compile_now(sig)
                _held.add(name)
                try:
                    import fcntl

                    fcntl.flock(lock, fcntl.LOCK_EX)
                    return compile_now(sig)
                finally:
                    _held.discard(name)
                    lock.close()  # releases the lock

        return compile

    def _lock_file(name: str) -> Any:
        """An open lock file for kernel ``name`` beside the cache, or None where the file
        system gives none (locking is then skipped: two processes may compile the same
        kernel, as numba alone would)."""
        try:
            import fcntl  # noqa: F401  (POSIX only)
        except ImportError:
            return None
        import tempfile

        base = numba.config.CACHE_DIR or os.path.join(  # type: ignore[attr-defined]
            tempfile.gettempdir(), f"castle-envs-{os.getuid()}"
        )
        try:
            folder = os.path.join(base, "compile-locks")
            os.makedirs(folder, exist_ok=True)
            return open(os.path.join(folder, name[-200:] + ".lock"), "a")  # noqa: SIM115
        except OSError:
            return None

    def njit(*args: Any, **kwargs: Any) -> Any:
        """``numba.njit`` with ``cache=True`` unless told otherwise, compiled once for the
        scalar types compiled callers pass (``_one_signature``)."""
        kwargs.setdefault("cache", True)
        if args and callable(args[0]):  # @njit
            return _one_signature(numba.njit(**kwargs)(args[0]))
        if args:  # explicit signatures: compiled for those alone
            return numba.njit(*args, **kwargs)
        decorate = numba.njit(**kwargs)
        return lambda func: _one_signature(decorate(func))

    class _CompileListener(_event.Listener):
        """numba broadcasts ``numba:compile`` only when it compiles (a signature found in the
        disk cache is loaded without it): the first one for a castle-envs kernel writes the
        notice, and one called from Python (not from a kernel being compiled) its module's
        note."""

        depth = 0

        def on_start(self, event: Any) -> None:
            dispatcher = (event.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if module.startswith("castle_envs"):
                _compile_notice(module if self.depth == 0 and module in _NOTES else "")
            self.depth += 1

        def on_end(self, event: Any) -> None:
            self.depth -= 1

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
