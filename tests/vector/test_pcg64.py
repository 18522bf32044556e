"""The compiled deal generator is NumPy's ``Generator(PCG64).permutation`` bit for bit."""

import numpy as np

from castle_envs.core import pcg64


def test_permutations_match_numpy_for_many_seeds():
    out = np.empty(52, np.int8)
    for seed in range(200):
        generator = np.random.default_rng(seed)
        words = pcg64.to_words(generator)
        for _ in range(4):
            pcg64.permutation_into(words, out)
            assert np.array_equal(out, generator.permutation(52)), seed


def test_buffered_half_word_carries_over():
    # an odd number of 32-bit draws leaves half a word buffered inside the generator
    generator = np.random.default_rng(123)
    generator.integers(0, 10)  # one 32-bit draw: the high half is now buffered
    words = pcg64.to_words(generator)
    assert words[pcg64.HAS32] == 1
    out = np.empty(52, np.int8)
    pcg64.permutation_into(words, out)
    assert np.array_equal(out, generator.permutation(52))


def test_words_round_trip():
    generator = np.random.default_rng(9)
    generator.permutation(52)
    clone = pcg64.from_words(pcg64.to_words(generator))
    assert np.array_equal(clone.permutation(52), generator.permutation(52))


def test_other_bit_generators_are_refused():
    import pytest

    with pytest.raises(ValueError, match="PCG64"):
        pcg64.to_words(np.random.Generator(np.random.MT19937(0)))


def test_integers_match_numpy_including_rejections_and_the_buffered_half():
    # small bounds (Castellion's ordeal draws: 1, 3, 4) and large ones, where Lemire's
    # rejection step is frequent, interleaved with permutations that leave half a word
    bounds = [1, 2, 3, 4, 7, 12, 1000, 2**31 + 1, 3 * 2**30, 2**32 - 1]
    for seed in range(60):
        generator = np.random.default_rng(seed)
        words = pcg64.to_words(generator)
        out = np.empty(12, np.int8)
        for high in bounds * 3:
            assert pcg64.integers(words, high) == generator.integers(high), (seed, high)
            if high == 3:
                pcg64.permutation_into(words, out)
                assert np.array_equal(out, generator.permutation(12))
        assert np.array_equal(words, pcg64.to_words(generator))
