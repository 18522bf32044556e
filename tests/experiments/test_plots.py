"""The plots' layouts: ``evaluate``'s PNG has room for its title and legend
whatever the number of variants and agents; the studies' SVGs keep every text inside their
viewBox (measured with DejaVu Sans' own metrics, the widest common sans-serif) and draw no
series where no games were played; the committed pictures are what the code draws from the
committed data."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from castle_envs.experiments import solve, solve_castellion
from castle_envs.experiments.evaluate import MIN_FIGURE, plot_win_rates, win_rate_figure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "data"
SIEGE_SUMMARIES = [
    DATA / "castle_siege_winnability" / p
    for p in (
        "easy5k_20000.json",
        "medium5k_20000.json",
        "nested/hard_pass2.summary.json",
        "nested/very_hard_pass5.summary.json",
    )
]
SIEGE_AGENTS = [
    DATA / "castle_siege_winnability" / p for p in ("agents_heuristic.csv", "agents_mcts.csv")
]
CASTELLION_SUMMARY = DATA / "castellion_winnability" / "settled.json"
CASTELLION_AGENTS = DATA / "castellion_winnability" / "agents_0_499.csv"

NS = "{http://www.w3.org/2000/svg}"


def _text_width(text: str, size: float) -> float:
    """The advance of ``text`` in DejaVu Sans (matplotlib ships it), else 0.62 em a glyph."""
    try:
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import TextToPath
    except ImportError:
        return len(text) * size * 0.62
    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(family="DejaVu Sans", size=size), ismath=False
    )
    return width


def text_boxes(svg: str):
    """(text, x0, y0, x1, y1) of every <text>, and the viewBox (x, y, w, h)."""
    root = ET.fromstring(svg)
    box = tuple(float(v) for v in root.attrib["viewBox"].split())
    base = float(root.attrib.get("font-size", 16))
    out = []
    for t in root.iter(NS + "text"):
        size = float(t.attrib.get("font-size", base))
        x, y = float(t.attrib["x"]), float(t.attrib["y"])
        w = _text_width(t.text or "", size)
        anchor = t.attrib.get("text-anchor", "start")
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        out.append((t.text, x0, y - 0.8 * size, x0 + w, y + 0.25 * size))
    return out, box


def assert_texts_inside(svg: str):
    boxes, (vx, vy, vw, vh) = text_boxes(svg)
    assert boxes
    for text, x0, y0, x1, y1 in boxes:
        assert vx <= x0 and x1 <= vx + vw and vy <= y0 and y1 <= vy + vh, (text, x0, x1, vw)


def series(svg: str) -> list[str]:
    return [e.attrib["data-series"] for e in ET.fromstring(svg).iter() if "data-series" in e.attrib]


# --- the studies' SVGs ------------------------------------------------------------------------
def _siege_svg():
    return solve.plot_svg(
        [solve.read_summary(str(p)) for p in SIEGE_SUMMARIES],
        solve.read_agent_csv([str(p) for p in SIEGE_AGENTS]),
    )


def _castellion_svg():
    import json

    data = json.loads(CASTELLION_SUMMARY.read_text())
    return solve_castellion.plot_svg(
        data if isinstance(data, list) else [data],
        solve_castellion.read_agent_csv([str(CASTELLION_AGENTS)]),
    )


@pytest.mark.parametrize(
    "draw,committed",
    [(_siege_svg, "castle_siege_winnability.svg"), (_castellion_svg, "castellion_winnability.svg")],
)
def test_committed_study_pictures_fit_and_are_what_the_code_draws(draw, committed):
    svg = draw()
    assert_texts_inside(svg)
    assert (ROOT / "docs" / committed).read_text() == svg


def test_castellion_panels_say_what_each_measures():
    svg = _castellion_svg()
    root = ET.fromstring(svg)
    panels: dict = {}
    for t in root.iter(NS + "text"):
        if "data-panel" in t.attrib:
            panels.setdefault(t.attrib["data-panel"], []).append(t)
    assert set(panels) == {"left", "right"}
    left = " ".join(t.text for t in panels["left"])
    right = " ".join(t.text for t in panels["right"])
    # the left panel counts every proof, the right one the solver's run alone, by budget
    assert "every source of proof" in left and "win rates" in left
    assert "solver's run alone" in right and "node budget" in right
    # each title sits above the plots, over its own panel
    boxes, _ = text_boxes(svg)
    grid = [b for b in boxes if b[0] == "100%"]
    assert len(grid) == 2
    plot_top = min(b[2] for b in grid)
    for side, texts in panels.items():
        for t in texts:
            (box,) = [b for b in boxes if b[0] == t.text]
            assert box[4] < plot_top, t.text
            x = float(t.attrib["x"])
            assert (x < grid[1][1]) == (side == "left"), t.text


def test_castellion_curve_labels_are_whole_and_apart():
    svg = _castellion_svg()
    boxes, _ = text_boxes(svg)
    labels = [b for b in boxes if b[0] in ("school", "academy", "menace") and b[1] > 380]
    assert sorted(b[0] for b in labels) == ["academy", "menace", "school"]
    ys = sorted(b[2] for b in labels)
    assert all(b - a >= 11 for a, b in zip(ys, ys[1:]))


def test_no_random_series_where_no_random_games_were_played():
    summaries = [solve.read_summary(str(p)) for p in SIEGE_SUMMARIES]
    played = [s["difficulty"] for s in summaries if s["random"]["games"] > 0]
    assert played == ["easy", "medium"]  # Hard and Very Hard ran no random games
    svg = _siege_svg()
    # one line and one dot per difficulty with random games, none elsewhere
    assert series(svg).count("random") == 2 * len(played)


def _summary(difficulty, random_games, deals=100):
    rate = None if random_games == 0 else 0.01
    return {
        "difficulty": difficulty,
        "deals": deals,
        "budget": 1000,
        "winnable_fraction": 0.5,
        "winnable_interval_95": [0.4, 0.6],
        "random": {
            "games": random_games,
            "wins": 0,
            "win_rate": rate,
            "interval_95": [0.0, 1.0] if random_games == 0 else [0.0, 0.05],
        },
    }


NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz:=_-,0123456789", min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(
    games=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    agents=st.dictionaries(NAMES, st.integers(0, 50), max_size=5),
)
def test_siege_svg_layout_and_zero_game_series(games, agents):
    difficulties = ["easy", "medium", "hard", "very_hard"][: len(games)]
    summaries = [_summary(d, g) for d, g in zip(difficulties, games)]
    table = {d: {name: (0.1, 0.05, 0.2, n) for name, n in agents.items()} for d in difficulties}
    svg = solve.plot_svg(summaries, table)
    assert_texts_inside(svg)
    drawn = series(svg)
    expect_random = sum(g > 0 for g in games) + (
        sum(g == 0 for g in games) if agents.get("random", 0) > 0 else 0
    )
    assert drawn.count("random") == 2 * expect_random
    for name, n in agents.items():
        if name != "random":
            assert drawn.count(name) == (2 * len(difficulties) if n > 0 else 0), name
    legend = {b[0] for b in text_boxes(svg)[0]}
    for name, n in agents.items():
        if n == 0 and name != "random" and name not in ("easy", "medium", "hard", "very_hard"):
            assert name not in legend


@settings(max_examples=30, deadline=None)
@given(
    agents=st.dictionaries(NAMES, st.integers(0, 50), max_size=4),
    levels=st.lists(
        st.sampled_from(["school", "academy", "menace"]), min_size=1, max_size=3, unique=True
    ),
    finals=st.lists(st.floats(0, 1), min_size=3, max_size=3),
)
def test_castellion_svg_layout(agents, levels, finals):
    summaries = []
    for level, final in zip(levels, finals):
        curve = [
            {"budget_nodes": b, "winnable": round(final * 100 * b / 500_000)}
            for b in (50_000, 125_000, 250_000, 500_000)
        ]
        summaries.append(
            {
                "game": "castellion",
                "level": level,
                "deals": 100,
                "winnable_fraction": final,
                "winnable_interval_95": [final, final],
                "budget_curve": curve,
            }
        )
    table = {lv: {name: (0.1, 0.05, 0.2, n) for name, n in agents.items()} for lv in levels}
    svg = solve_castellion.plot_svg(summaries, table)
    assert_texts_inside(svg)
    drawn = series(svg)
    for name, n in agents.items():
        assert drawn.count(name) == (2 * len(levels) if n > 0 else 0)


# --- evaluate's PNG -----------------------------------------------------------------------------
def _eval_summary(variants, agents, episodes=1000):
    results = [
        {"agent": a, "difficulty": v, "win_rate": 0.3, "win_low": 0.2, "win_high": 0.4}
        for v in variants
        for a in agents
    ]
    return {
        "variant_arg": "difficulty",
        "agents": agents,
        "game": "castle-siege",
        "episodes": episodes,
        "results": results,
    }


def _inside(inner, outer) -> bool:
    return (
        inner.x0 >= outer.x0 - 0.5
        and inner.y0 >= outer.y0 - 0.5
        and inner.x1 <= outer.x1 + 0.5
        and inner.y1 <= outer.y1 + 0.5
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variants=st.lists(
        st.sampled_from(["easy", "medium", "hard", "very_hard"]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    agents=st.lists(NAMES, min_size=1, max_size=6, unique=True),
    episodes=st.integers(1, 10**7),
)
def test_evaluate_plot_keeps_title_and_legend_inside(variants, agents, episodes):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = win_rate_figure(_eval_summary(variants, agents, episodes))
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        assert fig.bbox.width >= MIN_FIGURE[0] * fig.dpi - 0.5
        assert fig.bbox.height >= MIN_FIGURE[1] * fig.dpi - 0.5
        (legend,) = fig.legends
        names = [t.get_text() for t in legend.get_texts()]
        assert names[: len(agents)] == agents
        # Castle Siege's ceilings are known at every difficulty: one more entry marks them
        assert len(names) == len(agents) + 1 and names[-1].startswith("proven winnable")
        for artist in (ax.title, legend, *ax.get_xticklabels(), ax.yaxis.label):
            assert _inside(artist.get_window_extent(renderer), fig.bbox), artist
        # the legend does not cover the title or the axes
        assert not legend.get_window_extent(renderer).overlaps(ax.title.get_window_extent(renderer))
        assert not legend.get_window_extent(renderer).overlaps(ax.bbox)
    finally:
        plt.close(fig)


def test_one_difficulty_png_is_not_a_sliver(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    path = plot_win_rates(
        _eval_summary(["very_hard"], ["random", "heuristic"]), str(tmp_path / "p.png")
    )
    width, height = Image.open(path).size
    assert width >= 640 and height >= 400  # was 310 px wide


# --- the four-agent, four-difficulty evaluate chart -------------------------------------
MODEL = "model:/home/someone/runs/castle_siege_very_hard_linear"
FOUR = ["random", "greedy", "heuristic", MODEL]


def _all_difficulties_summary(episodes=50):
    """What ``evaluate --difficulty all --agent random,greedy,heuristic,model:... --episodes
    50`` summarises: the variants as the command listed them, several bars at 100%."""
    rates = {"random": 0.0, "greedy": 0.3, "heuristic": 1.0, MODEL: 1.0}
    results = []
    for v in ("very_hard", "easy", "medium", "hard"):
        for a in FOUR:
            rate = rates[a] if v == "easy" else rates[a] / 4
            results.append(
                {
                    "agent": a,
                    "difficulty": v,
                    "win_rate": rate,
                    "win_low": max(0.0, rate - 0.1),
                    "win_high": min(1.0, rate + 0.07),
                }
            )
    return {
        "variant_arg": "difficulty",
        "agents": FOUR,
        "game": "castle-siege",
        "episodes": episodes,
        "results": results,
    }


def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def test_evaluate_chart_runs_in_the_games_order_on_a_percent_axis():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = win_rate_figure(_all_difficulties_summary())
    try:
        _drawn(fig)
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            "easy",
            "medium",
            "hard",
            "very_hard",
        ]
        ticks = ax.get_yticks()
        assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 1.0
        assert max(ticks) == pytest.approx(1.0) and min(ticks) == 0
        texts = [t.get_text() for t in ax.get_yticklabels()]
        assert texts[-1] == "100%" and all(t.endswith("%") for t in texts), texts
    finally:
        plt.close(fig)


@pytest.mark.parametrize("episodes", [50, 1000])
def test_evaluate_chart_value_labels_stay_apart_inside_the_axes(episodes):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    fig = win_rate_figure(_all_difficulties_summary(episodes))
    try:
        renderer = _drawn(fig)
        ax = fig.axes[0]
        labels = [t for t in ax.texts if t.get_text().endswith("%")]
        assert len(labels) == 16
        title = ax.title.get_window_extent(renderer)
        boxes = [t.get_window_extent(renderer) for t in labels]
        for text, box in zip(labels, boxes):
            assert _inside(box, ax.bbox), text.get_text()
            assert not box.overlaps(title), text.get_text()
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b)
    finally:
        plt.close(fig)


def test_evaluate_chart_marks_the_proven_ceiling_of_each_difficulty():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from castle_envs.experiments.ceilings import ceiling

    fig = win_rate_figure(_all_difficulties_summary())
    try:
        _drawn(fig)
        ax = fig.axes[0]
        lines = [c for c in ax.collections if c.get_linestyle() and c.get_linestyle()[0][1]]
        heights = sorted(
            (round(float(seg[0][0]), 3), round(float(seg[0][1]), 4))
            for c in lines
            for seg in c.get_segments()
        )
        want = [ceiling("castle-siege", v).share for v in ("easy", "medium", "hard", "very_hard")]
        assert [h for _, h in heights] == pytest.approx(want)
        (legend,) = fig.legends
        names = [t.get_text() for t in legend.get_texts()]
        assert names[:4] == ["random", "greedy", "heuristic", "model:castle_siege_very_hard_linear"]
        assert names[4].startswith("proven winnable")
    finally:
        plt.close(fig)


def test_the_ceilings_are_the_studies_figures():
    import json

    from castle_envs.experiments.ceilings import CEILINGS

    for game, table in CEILINGS.items():
        for variant, c in table.items():
            data = json.loads((DATA / c.source).read_text())
            rows = data if isinstance(data, list) else [data]
            key = "difficulty" if game == "castle-siege" else "level"
            (row,) = [r for r in rows if r[key] == variant]
            assert (row["winnable"], row["deals"], tuple(row["seeds"])) == (
                c.winnable,
                c.deals,
                c.seeds,
            ), (game, variant)


# --- tournament's rating chart ------------------------------------------------------------------
def test_tournament_chart_names_agents_briefly_and_keeps_labels_apart():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from castle_envs.experiments.tournament import ratings_figure

    agents = [
        "model:/home/someone/experiments/runs/castle_rooms_2p_move_ppoheuristic",
        "model:/home/someone/experiments/runs/castle_rooms_2p_move_ppo_selfplay",
        "mcts:sims=200,rollout=heuristic",
        "heuristic",
        "random",
    ]
    summary = {
        "game": "castle-rooms",
        "players": 2,
        "games": 1000,
        "results": [
            {
                "agent": a,
                "rating": 100.0 * i,
                "rating_low": 100.0 * i - 1234.5,
                "rating_high": 100.0 * i + 1234.5,
            }
            for i, a in enumerate(agents)
        ],
    }
    fig = ratings_figure(summary)
    try:
        renderer = _drawn(fig)
        ax = fig.axes[0]
        ticks = ax.get_xticklabels()
        names = [t.get_text().replace("\n", "") for t in ticks]
        assert names[:2] == [
            "model:castle_rooms_2p_move_ppoheuristic",
            "model:castle_rooms_2p_move_ppo_selfplay",
        ]
        boxes = [t.get_window_extent(renderer) for t in ticks]
        for i, a in enumerate(boxes):
            assert _inside(a, fig.bbox), names[i]
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b), names[i]
        ylabel = ax.yaxis.label.get_window_extent(renderer)
        assert _inside(ylabel, fig.bbox)
        for t in ax.get_yticklabels():
            if t.get_text():
                assert not ylabel.overlaps(t.get_window_extent(renderer)), t.get_text()
    finally:
        plt.close(fig)


def test_the_ceilings_are_the_deal_sets_proven_wins():
    from castle_envs.experiments.ceilings import CEILINGS
    from castle_envs.experiments.deals import WON, load_deals

    for game, table in CEILINGS.items():
        for variant, c in table.items():
            deals = load_deals(game, variant, "study")
            rows = [r for r in deals.rows if c.seeds[0] <= r.seed <= c.seeds[1]]
            assert len(rows) == c.deals, (game, variant)
            assert sum(r.verdict == WON for r in rows) == c.winnable, (game, variant)
