"""``castle-envs benchmark``: its report against a direct evaluation of the same deals, the
paired comparisons with the stored references, the control-variate estimate, and the
multi-player protocol."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from castle_envs.experiments import benchmark as B
from castle_envs.experiments import deals as D
from castle_envs.experiments.cli import main
from castle_envs.experiments.evaluate import evaluate
from castle_envs.experiments.stats import (
    paired_proportion_difference,
    regression_estimate,
    wilson_interval,
)


# --- the control-variate estimate -------------------------------------------------------------
def synthetic_set(rng, size, rho_strength):
    """0/1 outcomes ``y`` and a 0/1 control ``x`` over a set of ``size`` units: ``y`` follows
    ``x`` with probability ``rho_strength``, else is a coin of its own."""
    x = (rng.random(size) < 0.4).astype(float)
    own = (rng.random(size) < 0.3).astype(float)
    y = np.where(rng.random(size) < rho_strength, x, own)
    return y, x


def test_the_estimate_is_unbiased_and_narrower_with_a_correlated_control():
    rng = np.random.default_rng(1)
    y, x = synthetic_set(rng, 2000, 0.8)
    estimates, plain, ratios = [], [], []
    for _ in range(3000):
        part = rng.choice(len(y), 200, replace=False)
        est = regression_estimate(y[part], x[part, None], [x.mean()], len(y))
        estimates.append(est["value"])
        plain.append(y[part].mean())
        ratios.append(est["variance_ratio"])
    spread = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - y.mean()) < 4 * spread  # unbiased for the set's mean
    assert np.var(estimates) < 0.6 * np.var(plain)  # the control explains most of y
    # the reported ratio is what the subsets show (the finite-set part dominates here)
    assert np.mean(ratios) == pytest.approx(np.var(estimates) / np.var(plain), abs=0.08)


def test_an_unrelated_control_neither_biases_nor_narrows():
    rng = np.random.default_rng(2)
    y, _ = synthetic_set(rng, 2000, 0.0)
    x = (rng.random(2000) < 0.5).astype(float)
    est = [
        regression_estimate(y[p], x[p, None], [x.mean()], 2000)
        for p in (rng.choice(2000, 200, replace=False) for _ in range(1500))
    ]
    values = np.array([e["value"] for e in est])
    assert abs(values.mean() - y.mean()) < 4 * values.std() / np.sqrt(len(values))
    assert np.mean([e["variance_ratio"] for e in est]) > 0.95


def test_on_the_whole_set_the_estimate_is_the_plain_mean():
    rng = np.random.default_rng(3)
    y, x = synthetic_set(rng, 300, 0.9)
    est = regression_estimate(y, x[:, None], [x.mean()], 300)
    assert est["value"] == pytest.approx(y.mean())
    assert est["se"] == pytest.approx(est["plain_se"])
    assert est["variance_ratio"] == pytest.approx(1.0)
    none = regression_estimate(y[:100], np.zeros((100, 0)), [], 300)
    assert none["value"] == pytest.approx(y[:100].mean()) and none["kept"] == []


def memory_set(columns: dict, verdicts=None) -> D.DealSet:
    """A set held in memory: one deal a row of the 0/1 ``columns`` (one a reference)."""
    size = len(next(iter(columns.values())))
    verdicts = verdicts if verdicts is not None else ["won"] * size
    rows = tuple(
        D.Deal(
            i,
            verdicts[i],
            "",
            (1,) if verdicts[i] == "won" else (),
            "",
            {k: int(v[i]) for k, v in columns.items()},
        )
        for i in range(size)
    )
    refs = tuple(D.Reference(k, k, "test") for k in columns)
    return D.DealSet("t", "castle-siege", "difficulty", "hard", "study", range(size), refs, rows)


def test_the_controls_are_left_out_with_few_wins_or_losses():
    rng = np.random.default_rng(4)
    ref = (rng.random(400) < 0.3).astype(int)
    deals = memory_set({"ref": ref})
    few = np.zeros(100, int)
    few[[3, 50, 70]] = 1  # 3 wins: below MIN_OUTCOMES
    est = B.control_variate_estimate(deals, few)
    assert est["controls"] == [] and est["variance_cut"] == 0.0
    assert (est["low"], est["high"]) == wilson_interval(3, 100)
    many = np.where(rng.random(100) < 0.95, ref[:100], 1 - ref[:100])
    est = B.control_variate_estimate(deals, many)
    assert est["controls"] == ["ref"] and est["variance_cut"] > 0.3
    assert est["low"] < est["value"] < est["high"]


def test_a_reference_standing_for_the_agent_leaves_its_own_proofs_out_of_the_controls():
    a = np.array([1, 1, 0, 0, 0, 1, 0, 0] * 10)
    b = np.array([1, 0, 1, 0, 0, 0, 0, 1] * 10)
    # deals 0, 1, 2, 5, 7 of each 8 are proven, each by a game of a or b alone
    verdicts = ["won" if a[i] or b[i] else "unknown" for i in range(80)]
    deals = memory_set({"a": a, "b": b}, verdicts)
    deals = D.DealSet(
        *[
            getattr(deals, f)
            for f in ("name", "game", "variant_arg", "variant", "split", "seeds", "references")
        ],
        tuple(
            D.Deal(
                r.seed,
                r.verdict,
                "agent:a" if a[r.seed] else ("agent:b" if b[r.seed] else ""),
                r.line,
                "",
                r.results,
            )
            for r in deals.rows
        ),
    )
    names, x = B.control_columns(deals, exclude="a")
    assert names == ["proven", "b"]
    # proven without a's games is exactly what b won: nothing of a's results leaks in
    assert (x[:, 0] == b).all()
    names, x = B.control_columns(deals)
    assert (x[:, names.index("proven")] == (a | b)).all()
    # a proof from a reference played on some deals only is no control: it would be measured
    # on those deals and not on the others
    partial = D.Reference("c", "c", "test")
    rows = tuple(
        D.Deal(r.seed, "won", "agent:c", (1,), "", {**r.results, "c": 1 if r.seed < 40 else None})
        if r.verdict != "won"
        else D.Deal(
            r.seed,
            r.verdict,
            r.found_by,
            r.line,
            "",
            {**r.results, "c": 0 if r.seed < 40 else None},
        )
        for r in deals.rows
    )
    mixed = D.DealSet(
        "t",
        "castle-siege",
        "difficulty",
        "hard",
        "study",
        deals.seeds,
        (*deals.references, partial),
        rows,
    )
    names, x = B.control_columns(mixed)
    assert names == ["proven", "a", "b"] and (x[:, 0] == (a | b)).all()


# --- the solitaire report against a direct evaluation ------------------------------------------
LINEAR = "model:models/castle_siege_very_hard_linear"
REFS = ("random", "heuristic", "linear")


def tiny_set(tmp_path, count):
    """The first ``count`` Hard held-out deals with their stored random, heuristic and linear
    scorer's results, as a set of their own."""
    full = D.load_deals("castle-siege", "hard", "heldout")
    rows = [
        D.Deal(r.seed, r.verdict, r.found_by, r.line, r.proof, {k: r.results[k] for k in REFS})
        for r in full.rows[:count]
    ]
    data = D.write_set(rows, list(REFS))
    name = "castle-siege-hard-heldout"
    (tmp_path / f"{name}.csv.gz").write_bytes(data)
    entry = {
        "name": name,
        "game": "castle-siege",
        "variant_arg": "difficulty",
        "variant": "hard",
        "split": "heldout",
        "seeds": [rows[0].seed, rows[-1].seed],
        "file": f"{name}.csv.gz",
        "sha256": hashlib.sha256(data).hexdigest(),
        "counts": {},
        "references": [
            {"name": r, "spec": LINEAR if r == "linear" else r, "source": "test"} for r in REFS
        ],
    }
    (tmp_path / "index.json").write_text(json.dumps({"schema": D.SCHEMA, "sets": {name: entry}}))
    return rows


def test_quick_report_matches_a_direct_evaluation_of_the_same_deals(tmp_path, monkeypatch, capsys):
    data = tmp_path / "sets"
    data.mkdir()
    rows = tiny_set(data, 60)
    monkeypatch.setattr(D, "DATA_DIR", data)
    monkeypatch.setattr(B, "QUICK_DEALS", 30)
    monkeypatch.setattr(B, "MIN_OUTCOMES", 1)  # a few wins in 30 deals: fit the controls
    out = tmp_path / "out"
    argv = ["benchmark", "--game", "castle-siege", "--difficulty", "hard", "--split", "heldout"]
    argv += ["--agent", "heuristic", "--quick", "--out", str(out), "--name", "run", "--no-plot"]
    assert main([*argv, "--no-progress", "--workers", "1"]) == 0
    report = json.loads((out / "run.json").read_text())

    specs = {"random": "random", "heuristic": "heuristic", "linear": LINEAR}
    first = rows[0].seed
    direct = evaluate("castle-siege", ["hard"], list(specs.values()), 30, first, workers=1)
    won = {
        k: np.array([d["returns"][v] > 0 for d in direct["deals"]], int) for k, v in specs.items()
    }
    assert (
        report["protocol"] == "quick"
        and report["episodes"] == 30
        and report["deals"] == [first, first + 29]
    )
    assert report["wins"] == won["heuristic"].sum() > 0
    bounds = wilson_interval(int(won["heuristic"].sum()), 30)
    assert [report["win_low"], report["win_high"]] == list(bounds)
    # the stored references are what the references play today on these deals
    for ref in REFS:
        stored = np.array([r.results[ref] for r in rows[:30]])
        assert (stored == won[ref]).all(), ref
        paired = next(p for p in report["paired"] if p["reference"] == ref)
        expected = paired_proportion_difference(won["heuristic"], won[ref])
        assert paired["win_diff"] == pytest.approx(expected)
    verdicts = np.array([r.verdict == "won" for r in rows[:30]])
    assert report["ceiling"]["proven_won"] == verdicts.sum()
    assert report["ceiling"]["wins_on_proven"] == won["heuristic"][verdicts].sum()
    # the estimate: the stored columns over all 60 deals as controls
    controls = [np.array([r.results[k] for r in rows], float) for k in REFS]
    x = np.column_stack([c for c in controls if 0 < c.sum() < len(c)])
    expected = regression_estimate(won["heuristic"], x[:30], x.mean(axis=0), 60)
    assert report["estimate"]["value"] == pytest.approx(expected["value"])
    assert report["estimate"]["se"] == pytest.approx(expected["se"])
    text = capsys.readouterr().out
    assert "win rate" in text and "against" in text and "variance cut" in text
    csv_rows = (out / "run.csv").read_text().splitlines()
    assert csv_rows[1].startswith("heuristic,agent,30,") and len(csv_rows) == 2 + len(
        report["paired"]
    )
    linear_row = next(r for r in csv_rows if r.startswith("linear,reference,"))
    d = next(p for p in report["paired"] if p["reference"] == "linear")["win_diff"]
    assert linear_row.endswith(f",{d['mean']},{d['low']},{d['high']}")


def test_a_reference_entry_comes_from_the_stored_results_without_playing(tmp_path, monkeypatch):
    data = tmp_path / "sets"
    data.mkdir()
    rows = tiny_set(data, 40)
    monkeypatch.setattr(D, "DATA_DIR", data)
    monkeypatch.setattr(B, "play_deals", lambda *a: pytest.fail("a reference is not played"))
    argv = ["benchmark", "--game", "castle-siege", "--difficulty", "hard", "--split", "heldout"]
    out = tmp_path / "out"
    assert (
        main([*argv, "--reference", "heuristic", "--out", str(out), "--name", "h", "--no-plot"])
        == 0
    )
    report = json.loads((out / "h.json").read_text())
    assert report["wins"] == sum(r.results["heuristic"] for r in rows)
    assert [p["reference"] for p in report["paired"]] == ["random", "linear"]
    assert "heuristic" not in report["estimate"]["controls"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--agent", "heuristic", "--reference", "best"], "one of --agent"),
        (["--reference", "nobody"], "has no reference 'nobody'"),
        (["--agent", "heuristic", "--players", "2"], "--players does not apply"),
        (["--agent", "heuristic", "--level", "school"], "--level does not apply"),
        (["--agent", "heuristic", "--deals", "5000"], "has 2000 deals, not 5000"),
        (["--agent", "heuristic", "--deals", "5", "--quick"], "--quick or --deals"),
        (["--agent", "random,heuristic", "--deals", "2"], "one agent"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(extra, message, capsys, tmp_path):
    argv = ["benchmark", "--game", "castle-siege", "--difficulty", "very_hard", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_list_and_a_sampled_check(capsys):
    assert main(["benchmark", "--list"]) == 0
    assert "castle-siege-very_hard-heldout" in capsys.readouterr().out
    argv = ["benchmark", "--check", "--game", "castellion", "--level", "school", "--sample", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "castellion-school-heldout" in out and "castellion-school-study" in out
    assert "academy" not in out and "ok" in out
    assert main([*argv, "--split", "study"]) == 0
    assert "heldout" not in capsys.readouterr().out


# --- the multi-player protocol --------------------------------------------------------------
def test_every_deal_is_played_with_the_agent_in_every_seat():
    from castle_envs.experiments.episodes import play_episode

    got = B.seat_rotated_returns("castell", 3, "heuristic", "random", 4, 1000000, workers=1)
    assert got.shape == (4, 3)
    for deal in range(4):
        for seat in range(3):
            seats = tuple("heuristic" if s == seat else "random" for s in range(3))
            ret = play_episode("castell", (("num_players", 3),), (), seats, 1000000 + deal, 0)
            assert got[deal, seat] == ret["returns"][seat]


def test_multiplayer_report_and_ratings(tmp_path, capsys):
    argv = ["benchmark", "--game", "castell", "--players", "2", "--agent", "heuristic"]
    argv += ["--deals", "6", "--out", str(tmp_path), "--name", "m", "--no-plot", "--workers", "1"]
    assert main([*argv, "--no-progress"]) == 0
    report = json.loads((tmp_path / "m.json").read_text())
    (match,) = report["matches"]  # the agent is one of the references: only random is left
    assert match["opponent"] == "random" and match["games"] == 12
    direct = B.seat_rotated_returns("castell", 2, "heuristic", "random", 6, 1000000, workers=1)
    assert match["wins"] == int((direct > 0).sum())
    assert {r["agent"] for r in report["ratings"]} == {"heuristic", "random"}
    assert "ratings" in capsys.readouterr().out
