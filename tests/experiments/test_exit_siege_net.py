"""Expert iteration of the move network: the teacher's journal replays to the games it
played, a stopped collection resumes without replaying finished deals, evaluation deals are
refused, and a fit writes a model that loads as an agent and a leaf value the search reads;
with a student (DAgger) the student's moves are played and the teacher labels every decision,
and the teacher's unsearched moves (the endgame planner's) can be learnt too; the endgame
planner alone labels the known-deck decisions of a student's games."""

import json

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

from castle_envs.agents import make_agent  # noqa: E402
from castle_envs.experiments import exit_siege_net as E  # noqa: E402

from castle_envs.castle_siege.rules import State  # noqa: E402

TEACHER = "ismcts:iterations=20,width=3,endgame=500"


def _collect(journal, games, seed=20_000_000):
    E.main(
        [
            "collect",
            "--seed",
            str(seed),
            "--games",
            str(games),
            "--journal",
            str(journal),
            "--teacher",
            TEACHER,
        ]
    )


def test_the_journal_replays_the_teachers_games_and_resumes(tmp_path, capsys):
    journal = tmp_path / "j.jsonl"
    _collect(journal, 1)
    _collect(journal, 2)  # resumes: plays only the second deal
    games = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [g["seed"] for g in games] == [20_000_000, 20_000_001]
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["played"] == 1
    agent = make_agent(TEACHER, "castle-siege", seed=0)
    again = E.play(agent, 20_000_000, "very_hard")
    again["teacher"] = TEACHER
    assert again == games[0]  # a game depends only on its deal and the agent seed
    for g in games:
        state = State.new_game(np.random.default_rng(g["seed"]), difficulty="very_hard")
        searched = dict((step, kids) for step, kids in g["searched"])
        for step, action in enumerate(g["actions"]):
            if searched.get(step):  # empty where every world was already lost at the root
                assert action == max(searched[step], key=lambda k: k[1])[0]
            state.apply_action(action)
        assert state.outcome == g["outcome"]
    with pytest.raises(SystemExit, match="evaluation deals"):
        _collect(tmp_path / "bad.jsonl", 1, seed=1_000_000)


def test_fit_writes_a_model_and_a_leaf_value(tmp_path):
    journal = tmp_path / "j.jsonl"
    _collect(journal, 2)
    out = tmp_path / "model"
    E.main(
        ["fit", "--journals", str(journal), "--out", str(out), "--epochs", "1", "--holdout", "0.5"]
    )
    history = json.loads((out / "history.json").read_text())
    assert [h["epoch"] for h in history] == [0, 1]
    assert history[1]["fit"]["ce"] > 0
    assert json.loads((out / "model.json").read_text())["trained"]["teachers"] == [TEACHER]
    net_agent = make_agent(f"model:{out}", "castle-siege", seed=0)
    state = State.new_game(np.random.default_rng(20_000_005), difficulty="very_hard")
    assert state.legal_action_mask()[net_agent.act(None, None, state=state)]
    search = make_agent(f"{TEACHER},value={out / 'value.npz'},lam=0.5", "castle-siege", seed=0)
    assert state.legal_action_mask()[search.act(None, None, state=state.player_view())]
    # a journal whose moves no longer reach its outcome is refused, not silently learnt
    game = json.loads(journal.read_text().splitlines()[0])
    game["outcome"] = -game["outcome"]
    (tmp_path / "bad.jsonl").write_text(json.dumps(game) + "\n")
    with pytest.raises(ValueError, match="do not replay"):
        E.load_positions([str(tmp_path / "bad.jsonl")], 256, 0.0)


STUDENT = "model:models/castle_siege_hard_move_ppo"


def test_dagger_plays_the_students_moves_and_labels_every_choice(tmp_path):
    journal = tmp_path / "d.jsonl"
    E.main(
        [
            "collect",
            "--seed",
            "20000003",
            "--games",
            "2",
            "--journal",
            str(journal),
            "--teacher",
            TEACHER,
            "--student",
            STUDENT,
            "--beta",
            "0",
        ]
    )
    student = make_agent(STUDENT, "castle-siege", seed=0)
    for g in [json.loads(line) for line in journal.read_text().splitlines()]:
        assert g["student"] == STUDENT and g["teacher"] == TEACHER and g["beta"] == 0
        labelled = [s for s, _ in g["searched"]] + [s for s, _ in g["planned"]]
        assert len(labelled) == len(set(labelled))
        state = State.new_game(np.random.default_rng(g["seed"]), difficulty="very_hard")
        for step, action in enumerate(g["actions"]):
            view = state.player_view()
            assert action == student.act(None, None, state=view)
            # the teacher answers wherever there is a choice, and nowhere else
            assert (step in labelled) == (int(state.legal_action_mask().sum()) > 1)
            state.apply_action(action)
        assert state.outcome == g["outcome"]
    with pytest.raises(SystemExit, match="--beta"):
        E.main(
            [
                "collect",
                "--seed",
                "20000003",
                "--games",
                "1",
                "--journal",
                str(tmp_path / "b.jsonl"),
                "--teacher",
                TEACHER,
                "--student",
                STUDENT,
                "--beta",
                "1.5",
            ]
        )


def test_planned_moves_are_learnt_as_one_hot_targets(tmp_path):
    journal = tmp_path / "j.jsonl"
    # Medium deals 20,000,000-001: both won through a proven endgame (14 and 6 planned moves)
    E.main(
        [
            "collect",
            "--seed",
            "20000000",
            "--games",
            "2",
            "--journal",
            str(journal),
            "--teacher",
            TEACHER,
            "--difficulty",
            "medium",
        ]
    )
    games = [json.loads(line) for line in journal.read_text().splitlines()]
    without, _, _ = E.load_positions([str(journal)], 256, 0.0)
    with_planned, _, _ = E.load_positions([str(journal)], 256, 0.0, planned=True)
    extra = sum(len(g["planned"]) for g in games)
    assert extra > 0
    assert len(with_planned) == len(without) + extra
    one_hot = [t for t in with_planned.target if t.max() == 1.0]
    assert len(one_hot) >= extra
    # a journal of the teacher's own games written before "planned" was kept gives the
    # same targets, read from the moves it played
    for g in games:
        del g["planned"]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(g) + "\n" for g in games))
    legacy, _, _ = E.load_positions([str(old)], 256, 0.0, planned=True)
    assert len(legacy) == len(with_planned)
    assert all(np.array_equal(a, b) for a, b in zip(legacy.target, with_planned.target))


def test_value_targets_rank_the_children_by_their_mean_values(tmp_path):
    """With ``q_temp`` the target is the softmax of the children's mean values (children
    with too few visits left out), not their visit shares."""
    journal = tmp_path / "j.jsonl"
    _collect(journal, 1)
    game = json.loads(journal.read_text().splitlines()[0])
    visits, _, _ = E.load_positions([str(journal)], 256, 0.0)
    values, _, _ = E.load_positions([str(journal)], 256, 0.0, q_temp=0.01, q_visits=3)
    assert len(values) == len(visits) > 0
    from castle_envs.moves import move_view

    view = move_view("castle-siege", 256)
    state = State.new_game(np.random.default_rng(game["seed"]), difficulty="very_hard")
    searched = dict((step, kids) for step, kids in game["searched"] if kids)
    checked = 0
    for step, action in enumerate(game["actions"]):
        if step in searched:
            out, n = view.from_state(state)
            where = {int(a): i for i, a in enumerate(out["move_ids"][:n])}
            kids = searched[step]
            sure = [k for k in kids if k[1] >= 3] or kids
            target = values.target[checked]
            assert abs(target.sum() - 1) < 1e-5
            if len(kids) > 1:
                best = max(sure, key=lambda k: k[2])
                assert target[where[best[0]]] == target.max()
                for a, n_visits, q in kids:
                    if n_visits < 3 and len(sure) < len(kids):
                        assert target[where[a]] == 0
                    elif (a, n_visits, q) in map(tuple, sure):
                        want = np.exp((q - best[2]) / 0.01)
                        assert target[where[a]] == pytest.approx(
                            want / sum(np.exp((k[2] - best[2]) / 0.01) for k in sure), rel=1e-4
                        )
            checked += 1
        state.apply_action(action)
    assert checked == len(values)


def _collect_endgame(journal, beta, teacher="endgame:2000", student=STUDENT):
    # Hard deal 20,000,001: the student reaches a known deck the planner proves won, then
    # throws it away when it plays on alone
    E.main(
        [
            "collect",
            "--seed",
            "20000001",
            "--games",
            "1",
            "--difficulty",
            "hard",
            "--journal",
            str(journal),
            "--teacher",
            teacher,
            "--student",
            student,
            "--beta",
            str(beta),
        ]
    )
    return json.loads(journal.read_text())


def test_the_endgame_planner_labels_the_known_deck_decisions_the_student_reaches(tmp_path):
    student = make_agent(STUDENT, "castle-siege", seed=0)
    games = {beta: _collect_endgame(tmp_path / f"{beta}.jsonl", beta) for beta in (0, 1)}
    assert games[0]["outcome"] == -1 and games[1]["outcome"] == 1
    for beta, g in games.items():
        assert g["searched"] == [] and g["planned"] and g["beta"] == beta
        labels = dict(g["planned"])
        state = State.new_game(np.random.default_rng(g["seed"]), difficulty="hard")
        for step, action in enumerate(g["actions"]):
            view = state.player_view()
            if step in labels:  # only where every card left in the deck is known
                assert view.deck_size == int(view.recycled.sum())
                assert state.legal_action_mask()[labels[step]]
            # beta 0: the student plays every move; beta 1: the planner's where it has one
            want = labels[step] if beta == 1 and step in labels else None
            assert action == (want if want is not None else student.act(None, None, state=view))
            state.apply_action(action)
        assert state.outcome == g["outcome"]
    # the planner's labels are learnt as one-hot targets
    data, _, _ = E.load_positions([str(tmp_path / "1.jsonl")], 256, 0.0, planned=True)
    assert len(data) == len(games[1]["planned"])
    assert all(t.max() == 1.0 for t in data.target)
    with pytest.raises(SystemExit, match="give a --student"):
        _collect_endgame(tmp_path / "x.jsonl", 1, student="")
    with pytest.raises(SystemExit, match="NODES a positive integer"):
        _collect_endgame(tmp_path / "y.jsonl", 1, teacher="endgame:lots")
