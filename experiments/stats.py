"""Interval and rating arithmetic for win rates, paired comparisons and tournaments."""
from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson_interval(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion (Wilson 1927)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if wins <= 0 else max(0.0, centre - half)
    high = 1.0 if wins >= n else min(1.0, centre + half)
    return (low, high)


def mean_interval(values, z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval (sample standard deviation)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(x.mean())
    if n == 1:
        return (mean, -math.inf, math.inf)
    half = z * float(x.std(ddof=1)) / math.sqrt(n)
    return (mean, mean - half, mean + half)


def paired_difference(a, b, z: float = Z95) -> dict:
    """Paired comparison of two agents on the same deals: the mean of ``a - b`` with its
    normal 95% interval, and the discordant counts (``a`` better / ``b`` better) behind it.
    Pairing removes the deal-to-deal variance both agents share (common random numbers)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    mean, low, high = mean_interval(a - b, z)
    return {"mean": mean, "low": low, "high": high, "n": int(len(a)),
            "a_better": int((a > b).sum()), "b_better": int((a < b).sum())}


def bradley_terry(wins: np.ndarray, iterations: int = 10000, tol: float = 1e-10,
                  prior: float = 0.0) -> np.ndarray:
    """Bradley–Terry strengths from ``wins[i, j]`` = times i beat j (ties counted as half a
    win each way), by Hunter's (2004) MM iteration; normalized to geometric mean 1.
    ``prior`` adds that many virtual wins each way per pair (keeps unbeaten players finite)."""
    w = np.asarray(wins, dtype=float) + prior * (1 - np.eye(len(wins)))
    n = len(w)
    games = w + w.T
    total_wins = w.sum(axis=1)
    p = np.ones(n)
    for _ in range(iterations):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1), p)
        new = np.maximum(new, 1e-300)
        new /= math.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < tol:
            p = new
            break
        p = new
    return p


def elo_scale(strengths: np.ndarray, anchor: int | None = None) -> np.ndarray:
    """Bradley–Terry strengths as Elo points (400·log10), mean 0 or ``anchor``'s rating 0.
    A 100-point gap means the stronger side wins 64% of its pairings."""
    r = 400.0 * np.log10(np.asarray(strengths, dtype=float))
    return r - (r.mean() if anchor is None else r[anchor])


def pairwise_from_returns(seats_agents: list, returns: list, num_agents: int) -> np.ndarray:
    """``wins[i, j]`` over games: every pair of seats held by different agents is a pairing
    won by the higher return (a tie gives each half)."""
    wins = np.zeros((num_agents, num_agents))
    for agents, ret in zip(seats_agents, returns):
        for s in range(len(agents)):
            for t in range(s + 1, len(agents)):
                i, j = agents[s], agents[t]
                if i == j:
                    continue
                if ret[s] > ret[t]:
                    wins[i, j] += 1
                elif ret[s] < ret[t]:
                    wins[j, i] += 1
                else:
                    wins[i, j] += 0.5
                    wins[j, i] += 0.5
    return wins


def bt_ratings_with_intervals(seats_agents: list, returns: list, num_agents: int,
                              bootstrap: int = 200, seed: int = 0, prior: float = 0.5) -> dict:
    """Elo-scale Bradley–Terry ratings (mean 0) with 95% percentile-bootstrap intervals
    (games resampled with replacement, ``bootstrap`` times, from ``seed``)."""
    per_game = [pairwise_from_returns([a], [r], num_agents)
                for a, r in zip(seats_agents, returns)]
    stack = np.array(per_game) if per_game else np.zeros((0, num_agents, num_agents))
    ratings = elo_scale(bradley_terry(stack.sum(axis=0), prior=prior))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap if len(stack) else 0):
        pick = rng.integers(len(stack), size=len(stack))
        samples.append(elo_scale(bradley_terry(stack[pick].sum(axis=0), prior=prior,
                                               iterations=2000, tol=1e-8)))
    if samples:
        low, high = np.percentile(np.array(samples), [2.5, 97.5], axis=0)
    else:
        low = high = np.full(num_agents, math.nan)
    return {"rating": ratings.tolist(), "low": low.tolist(), "high": high.tolist(),
            "wins": stack.sum(axis=0).tolist()}
