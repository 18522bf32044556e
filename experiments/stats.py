"""Interval and rating arithmetic for win rates, paired comparisons and tournaments."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054


def wilson_interval(wins: float, n: float, z: float = Z95) -> tuple[float, float]:
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


def win_record(wins: int, episodes: int, interval_key: str) -> dict:
    """``episodes``, ``wins``, ``win_rate`` and its 95% Wilson interval as ``[low, high]``
    under ``interval_key`` (each report's own name for it)."""
    return {
        "episodes": episodes,
        "wins": wins,
        "win_rate": wins / episodes,
        interval_key: list(wilson_interval(wins, episodes)),
    }


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
    return {
        "mean": mean,
        "low": low,
        "high": high,
        "n": int(len(a)),
        "a_better": int((a > b).sum()),
        "b_better": int((a < b).sum()),
    }


def paired_proportion_difference(a, b, z: float = Z95) -> dict:
    """Paired comparison of two agents' wins (0/1) on the same deals: the difference of the
    win rates with Newcombe's hybrid score interval for paired proportions (Newcombe 1998,
    method 10: the two Wilson intervals combined with the pairs' correlation), which stays
    within [-1, 1] and keeps its coverage near 0% and 100% where the normal interval of the
    mean difference does not (it gave [+99.01%, +100.32%]). Keys as ``paired_difference``'s."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    if not np.isin(a, (0, 1)).all() or not np.isin(b, (0, 1)).all():
        raise ValueError("paired proportions need 0/1 outcomes")
    n = int(len(a))
    if n == 0:
        return {
            "mean": math.nan,
            "low": -1.0,
            "high": 1.0,
            "n": 0,
            "a_better": 0,
            "b_better": 0,
            "method": "newcombe",
        }
    both = float(((a == 1) & (b == 1)).sum())
    only_a = float(((a == 1) & (b == 0)).sum())
    only_b = float(((a == 0) & (b == 1)).sum())
    neither = n - both - only_a - only_b
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_interval(int(both + only_a), n, z)
    l2, u2 = wilson_interval(int(both + only_b), n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    if margins == 0:
        phi = 0.0
    else:
        cross = both * neither - only_a * only_b
        cross = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
        phi = cross / math.sqrt(margins)
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return {
        "mean": d,
        "low": max(-1.0, low),
        "high": min(1.0, high),
        "n": n,
        "a_better": int(only_a),
        "b_better": int(only_b),
        "method": "newcombe",
    }


def regression_estimate(y, controls, control_means, population: int, z: float = Z95) -> dict:
    """The mean of ``y`` over a population, from its ``n`` values on a random part of a set of
    ``population`` units on which ``controls`` (``n`` x ``k``: other quantities measured on
    the same units) are known everywhere, their means over the whole set ``control_means``:
    the double-sampling regression estimator (Cochran, *Sampling Techniques*, 3rd ed., 12.6),
    ``mean(y) - beta . (mean(controls) - control_means)`` with ``beta`` the least-squares
    slope of ``y`` on the controls. Its variance, ``S_e^2 (1/n - 1/N) + S_y^2 / N`` (``S_e``
    the residual spread), is the plain mean's ``S_y^2 / n`` where the controls explain
    nothing, and falls towards ``S_y^2 / N`` as they explain ``y``: controls correlated with
    ``y`` narrow the interval (control variates). Returns ``value`` with its normal 95%
    ``low``/``high`` (clipped to [0, 1] for 0/1 data), ``se``, the plain mean's ``plain_se``
    on the same units, ``variance_ratio`` (se^2 / plain_se^2), ``beta`` and the controls
    used (``kept``: those that vary on the units)."""
    y = np.asarray(y, dtype=float).ravel()
    x = np.asarray(controls, dtype=float).reshape(len(y), -1)
    means = np.asarray(control_means, dtype=float).ravel()
    n, big = len(y), int(population)
    if n < 2 or big < n:
        raise ValueError("the estimate needs at least 2 units and population >= units")
    kept = [j for j in range(x.shape[1]) if x[:, j].std() > 0]
    if n - len(kept) - 1 < 1:
        kept = []
    s_y2 = float(y.var(ddof=1))
    resid = y - y.mean()
    beta = np.zeros(len(kept))
    if kept and s_y2 > 0:
        xc = x[:, kept] - x[:, kept].mean(axis=0)
        beta = np.linalg.lstsq(xc, resid, rcond=None)[0]
        resid = resid - xc @ beta
    value = (
        float(y.mean() - (x[:, kept].mean(axis=0) - means[kept]) @ beta)
        if kept
        else float(y.mean())
    )
    s_e2 = float((resid**2).sum() / max(1, n - len(kept) - 1))
    var = s_e2 * (1 / n - 1 / big) + s_y2 / big
    plain = s_y2 / n
    se = math.sqrt(max(0.0, var))
    binary = bool(np.isin(y, (0, 1)).all())
    low, high = value - z * se, value + z * se
    if binary:
        low, high = max(0.0, low), min(1.0, high)
    return {
        "value": value,
        "low": low,
        "high": high,
        "se": se,
        "plain_se": math.sqrt(plain),
        "variance_ratio": var / plain if plain > 0 else 1.0,
        "beta": beta.tolist(),
        "kept": kept,
        "n": n,
        "population": big,
    }


def iqm(values) -> float:
    """Interquartile mean: the mean of the middle 50% of ``values`` (rliable's robust
    aggregate; Agarwal et al. 2021), with fractional weights at the quartiles."""
    x = np.sort(np.asarray(values, dtype=float).ravel())
    n = len(x)
    if n == 0:
        return math.nan
    lo, hi = 0.25 * n, 0.75 * n
    edges = np.arange(n + 1)
    weights = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
    return float((weights * x).sum() / weights.sum())


def stratified_bootstrap(
    tasks: dict, statistic=iqm, resamples: int = 2000, seed: int = 0, z: float = Z95
) -> dict:
    """An aggregate over tasks (``{task: per-episode scores}``, e.g. wins per difficulty)
    with a 95% percentile interval from a stratified bootstrap: each task's episodes are
    resampled within the task, so every task keeps its weight (rliable's protocol).
    ``statistic`` gets all tasks' scores together (default ``iqm``; ``np.mean`` gives the
    mean win rate over the tasks when they have equal sizes)."""
    groups = [np.asarray(v, dtype=float).ravel() for v in tasks.values()]
    if not groups or any(len(g) == 0 for g in groups):
        raise ValueError("every task needs at least one score")
    rng = np.random.default_rng(seed)
    point = float(statistic(np.concatenate(groups)))
    samples = np.empty(resamples)
    for k in range(resamples):
        samples[k] = statistic(
            np.concatenate([g[rng.integers(len(g), size=len(g))] for g in groups])
        )
    tail = 100 * (1 - math.erf(z / math.sqrt(2))) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return {
        "value": point,
        "low": float(low),
        "high": float(high),
        "tasks": len(groups),
        "resamples": resamples,
    }


def bradley_terry(
    wins: np.ndarray, iterations: int = 10000, tol: float = 1e-10, prior: float = 0.0
) -> np.ndarray:
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


def bt_ratings_with_intervals(
    seats_agents: list,
    returns: list,
    num_agents: int,
    bootstrap: int = 200,
    seed: int = 0,
    prior: float = 0.5,
) -> dict:
    """Elo-scale Bradley–Terry ratings (mean 0) with 95% percentile-bootstrap intervals
    (games resampled with replacement, ``bootstrap`` times, from ``seed``)."""
    per_game = [pairwise_from_returns([a], [r], num_agents) for a, r in zip(seats_agents, returns)]
    stack = np.array(per_game) if per_game else np.zeros((0, num_agents, num_agents))
    ratings = elo_scale(bradley_terry(stack.sum(axis=0), prior=prior))
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap if len(stack) else 0):
        pick = rng.integers(len(stack), size=len(stack))
        samples.append(
            elo_scale(
                bradley_terry(stack[pick].sum(axis=0), prior=prior, iterations=2000, tol=1e-8)
            )
        )
    if samples:
        low, high = np.percentile(np.array(samples), [2.5, 97.5], axis=0)
    else:
        low = high = np.full(num_agents, math.nan)
    return {
        "rating": ratings.tolist(),
        "low": low.tolist(),
        "high": high.tolist(),
        "wins": stack.sum(axis=0).tolist(),
    }
