"""castle-envs demo: the newcomer's first command prints a win rate per agent, trained agent included."""

import re

from castle_envs.experiments.cli import main


def test_demo_prints_a_win_rate_for_every_agent(capsys):
    assert main(["demo", "--episodes", "3", "--seed", "5", "--best-episodes", "1"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "seeds 5..7" in out
    for name in ("random", "heuristic", "value", "trained"):
        assert re.search(rf"{name}\s+win rate\s+\d+\.\d%\s+95% CI \[", out), out
    # then the strongest shipped agent on the first deals, named
    assert re.search(r"best\s+win rate\s+\d+\.\d%.*first 1 deals; model:.*ismcts", out), out


def test_every_name_the_demo_prints_is_an_agent_evaluate_takes(capsys, tmp_path):
    assert main(["demo", "--episodes", "1", "--best-episodes", "1"]) == 0
    names = re.findall(r"^\s+(\S+)\s+win rate", capsys.readouterr().out, re.M)
    assert names == ["random", "heuristic", "value", "trained", "best"]
    argv = ["evaluate", "--game", "castle-siege", "--episodes", "1", "--workers", "1"]
    argv += ["--no-plot", "--no-progress", "--out", str(tmp_path)]
    for name in names:
        assert main([*argv, "--agent", name, "--name", name]) == 0, capsys.readouterr().err
        assert (tmp_path / f"{name}.json").is_file()


def test_demo_plays_best_when_asked(capsys):
    assert main(["demo", "--episodes", "1", "--agent", "best", "--difficulty", "easy"]) == 0
    captured = capsys.readouterr()
    assert re.search(r"best\s+win rate", captured.out)
    assert "agent 'best' for castle-siege is" in captured.err


def test_demo_takes_other_agents(capsys):
    assert main(["demo", "--episodes", "1", "--agent", "greedy"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"greedy\s+win rate", out) and "heuristic" not in out


def test_demo_rejects_no_episodes(capsys):
    assert main(["demo", "--episodes", "0"]) == 2
    assert "--episodes must be at least 1" in capsys.readouterr().err
    assert main(["demo", "--best-episodes", "-1"]) == 2
    assert "--best-episodes must be 0 or more" in capsys.readouterr().err


def test_best_on_its_own_process_plays_the_games_it_plays_here(capsys):
    from castle_envs.experiments.demo import play_best

    # easy: best wins some of these deals, so that a wrong deal or seed would show
    assert main(["demo", "--episodes", "1", "--best-episodes", "3", "--difficulty", "easy"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "best" in s)
    wins, _ = play_best("easy", 3, 0)
    assert f"win rate {wins / 3:6.1%}" in line, line
