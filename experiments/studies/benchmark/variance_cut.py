"""How much the benchmark's control-variate estimate narrows the interval, measured on the
stored results: each reference agent of a held-out set plays the part of a new agent (its
own column left out of the controls), and its win rate over the whole set is estimated from
the quick protocol's first 200 deals, plainly and with the controls (the verdicts and the
other references). From the repository root:

    python experiments/studies/benchmark/variance_cut.py [DEALS] [SUBSETS]
    python experiments/studies/benchmark/variance_cut.py --played JOURNAL GAME VARIANT LABEL

prints, per set and agent: the plain and the controlled interval's width on the first
DEALS (default 200) deals, the reported variance cut (``1 - variance_ratio``), and the cut
measured over SUBSETS (default 2,000) random parts of DEALS deals of the set: one minus the
variance of the controlled estimates over that of the plain means, each about the set's win
rate (which the stored column gives exactly) plus the set's own sampling variance ``S^2/N``
(as the reported cut counts it, the estimand being the win rate over all deals), with each
one's mean error. ``--played``: the same for an agent that is no reference, played on every
deal of the held-out set by ``play_refs.py`` (JOURNAL), every reference a control.
"""

import sys

import numpy as np
from castle_envs.experiments.benchmark import control_columns, control_variate_estimate
from castle_envs.experiments.deals import available, load_deals
from castle_envs.experiments.journal import read
from castle_envs.experiments.stats import regression_estimate, wilson_interval


def measure(deals, name: str, n: int, subsets: int, rng, full=None) -> dict | None:
    """``name``'s cut: a reference's (left out of the controls), or with ``full`` a new
    agent's results on every deal of the set (every reference a control)."""
    exclude = None if full is not None else name
    full = deals.results(name) if full is None else full
    if full is None or full.sum() in (0, len(full)):
        return None
    first = control_variate_estimate(deals, full[:n], exclude=exclude)
    low, high = wilson_interval(int(full[:n].sum()), n)
    # the same controls as the first deals' estimate, over the whole set
    names, columns = control_columns(deals, exclude=exclude)
    x = columns[:, [names.index(c) for c in first["controls"]]]
    plain, controlled = [], []
    for _ in range(subsets):
        part = rng.choice(len(full), n, replace=False)
        est = regression_estimate(full[part], x[part], x.mean(axis=0), len(full))
        plain.append(full[part].mean())
        controlled.append(est["value"])
    truth, own = full.mean(), full.var(ddof=1) / len(full)
    return {
        "set": deals.name,
        "agent": name,
        "set_rate": truth,
        "plain_width": high - low,
        "cv_width": first["high"] - first["low"],
        "reported_cut": first["variance_cut"],
        "controls": first["controls"],
        # the population's variance is the part over the set plus the set's own, S^2 / N
        "measured_cut": 1 - (np.var(controlled) + own) / (np.var(plain) + own),
        "plain_bias": np.mean(plain) - truth,
        "cv_bias": np.mean(controlled) - truth,
    }


def row(r: dict) -> str:
    return (
        f"| {r['set']} | {r['agent']} | {r['set_rate']:.2%} | "
        f"{100 * r['plain_width']:.1f} points | {100 * r['cv_width']:.1f} points | "
        f"{r['reported_cut']:.0%} | {r['measured_cut']:.0%} | "
        f"{100 * r['plain_bias']:+.2f} / {100 * r['cv_bias']:+.2f} points | "
        f"{', '.join(r['controls']) or 'none (under 10 wins)'} |"
    )


def main(n: int = 200, subsets: int = 2000) -> None:
    rng = np.random.default_rng(0)
    print(
        "| set | agent (left out) | its win rate on the set | plain width (first 200) | "
        "controlled width | reported cut | measured cut | mean error plain / controlled | "
        "controls |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in available():
        if entry["split"] != "heldout":
            continue
        deals = load_deals(entry["game"], entry["variant"], entry["split"])
        for ref in deals.references:
            r = measure(deals, ref.name, n, subsets, rng)
            if r is not None:
                print(row(r), flush=True)


def played(journal: str, game: str, variant: str, label: str, n: int = 200) -> None:
    """The cut for a new agent played on every deal of a held-out set (``play_refs.py``'s
    journal), every reference a control."""
    deals = load_deals(game, variant, "heldout")
    won = {r["seed"]: r["won"] for r in read(journal)}
    full = np.array([won[s] for s in deals.seeds], dtype=np.int8)
    print(row(measure(deals, label, n, 2000, np.random.default_rng(0), full=full)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--played"]:
        played(*sys.argv[2:6])
    else:
        main(*(int(a) for a in sys.argv[1:3]))
