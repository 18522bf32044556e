import math

import numpy as np
import pytest
from castle_envs.experiments.stats import (
    bradley_terry,
    bt_ratings_with_intervals,
    elo_scale,
    mean_interval,
    paired_difference,
    pairwise_from_returns,
    wilson_interval,
)


def test_wilson_known_values():
    # Wilson (1927) / Newcombe (1998) table values
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 10)[0] == 0.0


def test_mean_and_paired_difference():
    mean, low, high = mean_interval([1, 2, 3, 4])
    half = 1.959963984540054 * np.std([1, 2, 3, 4], ddof=1) / 2
    assert (mean, low, high) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    d = paired_difference([1, 1, 0, 1], [0, 1, 0, 0])
    assert d["mean"] == pytest.approx(0.5) and (d["a_better"], d["b_better"]) == (2, 0)
    assert d["low"] < 0.5 < d["high"]
    with pytest.raises(ValueError):
        paired_difference([1, 2], [1])


def test_pairing_removes_shared_variance():
    rng = np.random.default_rng(0)
    deal = rng.normal(size=400) * 10  # deal difficulty both agents share
    a, b = deal + 0.5 + rng.normal(size=400) * 0.1, deal + rng.normal(size=400) * 0.1
    d = paired_difference(a, b)
    assert d["low"] > 0.4 and d["high"] < 0.6  # unpaired, the interval would span ±2


def test_bradley_terry_known_values():
    # two players, 3 wins to 1: strength ratio 3, i.e. 400·log10(3) = 190.85 Elo points
    p = bradley_terry(np.array([[0, 3], [1, 0]]))
    assert p[0] / p[1] == pytest.approx(3)
    assert elo_scale(p) == pytest.approx([95.42, -95.42], abs=0.01)
    # three players generated from strengths 4:2:1 in expectation
    s = np.array([4.0, 2.0, 1.0])
    w = np.array(
        [[0 if i == j else 1000 * s[i] / (s[i] + s[j]) for j in range(3)] for i in range(3)]
    )
    p = bradley_terry(w)
    assert p / p[2] == pytest.approx([4, 2, 1], rel=1e-6)
    assert elo_scale(p, anchor=2)[0] == pytest.approx(400 * math.log10(4), rel=1e-6)


def test_pairwise_from_returns_splits_ties():
    w = pairwise_from_returns([[0, 1, 0]], [[1.0, -1.0, -1.0]], 2)
    # seat 0 (agent 0) beats seat 1 (agent 1); seats 1 and 2 tie; seats 0 and 2 share agent 0
    assert w.tolist() == [[0, 1.5], [0.5, 0]]


def test_ratings_with_bootstrap_intervals():
    seats = [[0, 1], [1, 0]] * 30
    returns = [[1, -1], [-1, 1]] * 20 + [[-1, 1], [1, -1]] * 10  # agent 0 wins 2/3
    r = bt_ratings_with_intervals(seats, returns, 2, bootstrap=100, seed=0, prior=0)
    assert r["rating"][0] == pytest.approx(200 * math.log10(2), abs=0.01)
    assert r["low"][0] < r["rating"][0] < r["high"][0]
    assert r["rating"][1] == pytest.approx(-r["rating"][0])


# --- paired win-rate differences and aggregates over variants --------------------------------
from castle_envs.experiments.stats import (
    iqm,
    paired_proportion_difference,  # noqa: E402
    stratified_bootstrap,
)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st


def pairs(both, only_a, only_b, neither):
    a = np.r_[np.ones(both + only_a), np.zeros(only_b + neither)]
    b = np.r_[np.ones(both), np.zeros(only_a), np.ones(only_b), np.zeros(neither)]
    return a, b


@settings(max_examples=200, deadline=None)
@given(counts=st.tuples(*[st.integers(0, 60)] * 4).filter(lambda c: sum(c) > 0))
def test_paired_win_difference_interval_stays_within_minus_one_one(counts):
    d = paired_proportion_difference(*pairs(*counts))
    assert -1.0 <= d["low"] <= d["mean"] <= d["high"] <= 1.0
    assert d["a_better"] == counts[1] and d["b_better"] == counts[2] and d["n"] == sum(counts)
    assert d["mean"] == pytest.approx((counts[1] - counts[2]) / sum(counts))


def test_a_near_certain_difference_no_longer_passes_one_hundred_percent():
    # the case the review found: the normal interval of the mean gave [+99.01%, +100.32%]
    a, b = pairs(1, 99, 0, 0)
    normal = paired_difference(a, b)
    assert normal["high"] > 1.0
    d = paired_proportion_difference(a, b)
    assert d["high"] < 1.0 and d["low"] > 0.9


def test_newcombe_interval_covers_the_true_difference():
    """Simulated coverage of the 95% interval at small n and a rate near 0 (where the normal
    interval fails), correlated pairs: at least 93% over 2,000 samples (seeded)."""
    rng = np.random.default_rng(0)
    probs = np.array([0.02, 0.10, 0.03, 0.85])  # both, only a, only b, neither
    truth = probs[1] - probs[2]
    covered = 0
    for _ in range(2000):
        counts = rng.multinomial(40, probs)
        d = paired_proportion_difference(*pairs(*counts))
        covered += d["low"] <= truth <= d["high"]
    assert covered / 2000 >= 0.93


def test_paired_proportions_refuse_non_binary_outcomes():
    with pytest.raises(ValueError, match="0/1"):
        paired_proportion_difference([0, 2], [1, 0])


def test_iqm_is_the_mean_of_the_middle_half():
    assert iqm([1, 2, 3, 4, 5, 6, 7, 8]) == pytest.approx(4.5)
    assert iqm([0, 0, 0, 100]) == pytest.approx(0.0)
    assert iqm([1, 2, 3, 4, 5]) == pytest.approx(3.0)  # fractional weights at the quartiles
    assert math.isnan(iqm([]))


def test_stratified_bootstrap_resamples_within_each_task():
    tasks = {"easy": np.ones(50), "very_hard": np.zeros(50)}
    agg = stratified_bootstrap(tasks, np.mean, resamples=300)
    # every task keeps its 50 episodes: the mean over tasks cannot move
    assert agg["value"] == agg["low"] == agg["high"] == 0.5
    noisy = stratified_bootstrap({"a": np.r_[np.ones(10), np.zeros(30)]}, np.mean, resamples=500)
    assert noisy["low"] < 0.25 < noisy["high"]
    with pytest.raises(ValueError):
        stratified_bootstrap({"a": []})
