"""NumPy's ``Generator(PCG64).permutation(n)``, bit for bit, inside compiled kernels.

The batched env deals each sub-env's games from its own generator, exactly as a single env
seeded the same way would (``rng.permutation(52)``), without a Python call per reset. A
generator's whole state is six uint64 words per env: the 128-bit LCG state and increment
(high, low), NumPy's buffered-uint32 flag and value. ``to_words``/``from_words`` convert
from/to ``numpy.random.Generator`` so the two can be checked against each other.
"""

from __future__ import annotations

import numpy as np

from .jit import njit

M32 = np.uint64(0xFFFFFFFF)
U32 = np.uint64(32)
U58 = np.uint64(58)
U63 = np.uint64(63)
ONE = np.uint64(1)
ZERO = np.uint64(0)
MULT_HI = np.uint64(2549297995355413924)  # PCG_DEFAULT_MULTIPLIER_128
MULT_LO = np.uint64(4865540595714422341)
STATE_HI, STATE_LO, INC_HI, INC_LO, HAS32, BUF32 = range(6)
WORDS = 6
_MASK64 = (1 << 64) - 1


def to_words(generator: np.random.Generator) -> np.ndarray:
    st = generator.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError(f"need a PCG64 generator, got {st['bit_generator']}")
    s, inc = st["state"]["state"], st["state"]["inc"]
    return np.array(
        [s >> 64, s & _MASK64, inc >> 64, inc & _MASK64, st["has_uint32"], st["uinteger"]],
        dtype=np.uint64,
    )


def from_words(words: np.ndarray) -> np.random.Generator:
    w = [int(x) for x in words]
    bg = np.random.PCG64()
    bg.state = {
        "bit_generator": "PCG64",
        "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }
    return np.random.Generator(bg)


@njit(cache=True, inline="always")
def _mul64(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Full 128-bit product of two uint64 as (high, low)."""
    a_lo = a & M32
    a_hi = a >> U32
    b_lo = b & M32
    b_hi = b >> U32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> U32) + (p1 & M32) + (p2 & M32)
    return p3 + (p1 >> U32) + (p2 >> U32) + (mid >> U32), (p0 & M32) | (mid << U32)


@njit(cache=True)
def next64(w: np.ndarray) -> np.uint64:
    """One PCG64 (XSL-RR) output; advances the state held in ``w``."""
    hi, lo = _mul64(w[STATE_LO], MULT_LO)
    hi = hi + w[STATE_HI] * MULT_LO + w[STATE_LO] * MULT_HI
    lo2 = lo + w[INC_LO]
    carry = ONE if lo2 < lo else ZERO
    hi = hi + w[INC_HI] + carry
    w[STATE_HI] = hi
    w[STATE_LO] = lo2
    rot = hi >> U58
    x = hi ^ lo2
    return (x >> rot) | (x << ((ZERO - rot) & U63))


@njit(cache=True)
def next32(w: np.ndarray) -> np.uint64:
    """NumPy's ``next_uint32``: each 64-bit output serves two calls, low half first."""
    if w[HAS32] != ZERO:
        w[HAS32] = ZERO
        return w[BUF32]
    v = next64(w)
    w[HAS32] = ONE
    w[BUF32] = v >> U32
    return v & M32


@njit(cache=True)
def interval(w: np.ndarray, max_value: int) -> np.int64:
    """NumPy's ``random_interval`` for max_value < 2**32: masked rejection on 32-bit draws."""
    top = np.uint64(max_value)
    mask = top
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    value = next32(w) & mask
    while value > top:
        value = next32(w) & mask
    return np.int64(value)


@njit(cache=True)
def permutation_into(w: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = Generator.permutation(len(out))`` (NumPy's ``_shuffle_raw``)."""
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = interval(w, i)
        t = out[j]
        out[j] = out[i]
        out[i] = t


@njit(cache=True)
def integers(w: np.ndarray, high: int) -> np.int64:
    """``Generator.integers(high)`` (an int64 draw in [0, high), 1 <= high <= 2**32 - 1):
    NumPy's ``buffered_bounded_lemire_uint32``; ``high == 1`` draws nothing."""
    rng = np.uint64(high - 1)
    if rng == ZERO:
        return np.int64(0)
    excl = rng + ONE
    m = next32(w) * excl
    leftover = m & M32
    if leftover < excl:
        threshold = (M32 - rng) % excl
        while leftover < threshold:
            m = next32(w) * excl
            leftover = m & M32
    return np.int64(m >> U32)
