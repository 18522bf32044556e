"""Packaging: what the wheel holds and what a bare install can do.

The fast tests read the checkout; the slow one builds the wheel, installs it in a fresh
virtual environment with the core dependencies only (numpy, gymnasium, pettingzoo: no
extras), and runs every env, ``castle-envs --help``, the shipped ``best`` agent, and the
subcommands that need an extra (exit 2 naming it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def package_folders() -> dict[str, Path]:
    """Every importable package of the project: the name it installs under -> its folder."""
    mapped = {Path(folder): name for name, folder in SETUPTOOLS["package-dir"].items()}
    found = {}
    for init in sorted(ROOT.glob("**/__init__.py")):
        folder = init.parent.relative_to(ROOT)
        if folder.parts[0] in ("tests", ".venv", "build") or "site-packages" in folder.parts:
            continue
        for base, name in mapped.items():
            if folder == base or base in folder.parents:
                found[".".join([name, *folder.relative_to(base).parts])] = folder
                break
        else:
            found[".".join(folder.parts)] = folder
    return found


def test_every_package_folder_is_listed_for_the_wheel():
    listed = set(SETUPTOOLS["packages"])
    folders = package_folders()
    assert set(folders) <= listed, sorted(set(folders) - listed)
    assert all(name == "castle_envs" or name.startswith("castle_envs.") for name in listed)
    for name, folder in SETUPTOOLS["package-dir"].items():  # mapped data folders exist
        assert (ROOT / folder).is_dir(), (name, folder)


def test_license_changelog_and_type_marker():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{PYPROJECT['project']['version']}]" in changelog
    assert (ROOT / "castle_envs" / "py.typed").is_file()


def test_shipped_models_and_configs_are_found_from_any_folder(tmp_path, monkeypatch):
    from castle_envs.agents.registry import make_agent, shipped_models_dir
    from castle_envs.experiments.config import load_config, shipped_configs_dir

    assert (shipped_models_dir() / "castle_siege_very_hard_linear" / "model.json").is_file()
    assert (shipped_configs_dir() / "tiny").is_dir()
    monkeypatch.chdir(tmp_path)  # no models/ or configs/ here
    assert load_config("configs/tiny/castle_siege_easy.yaml").name
    assert make_agent("model:models/castle_siege_very_hard_linear", "castle-siege")
    assert make_agent("best", "castle-siege")
    with pytest.raises(FileNotFoundError, match="no config file"):
        load_config("configs/no_such.yaml")


# --- the wheel, installed bare --------------------------------------------------------------------
BARE_RUN = r"""
import subprocess, sys, warnings
from pathlib import Path
import numpy as np, gymnasium, castle_envs
from castle_envs.registry import make_single
from castle_envs.registry import make_vec

for env_id in ("castle_envs/CastleSiege-v0", "castle_envs/Castellion-v0"):
    env = gymnasium.make(env_id)
    obs, info = env.reset(seed=0)
    done, steps = False, 0
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[-1])
        obs, reward, term, trunc, info = env.step(action)
        done, steps = term or trunc, steps + 1
    print(env_id, "played", steps)
for game in ("castle-siege", "castellion"):
    make_single(game).reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # numba is an extra: the kernels run as Python
        envs = make_vec(game, 2)
    envs.reset(seed=0)
    envs.step(np.array([np.flatnonzero(m)[0] for m in envs.action_masks()]))
    print(game, "batched ok")
for module in (castle_envs.castle_rooms_v0, castle_envs.castell_v0):
    env = module.env(num_players=3)
    env.reset(seed=0)
    for agent in env.agent_iter(max_iter=300):
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    print(module.__name__, "played")
import castle_envs.agents, castle_envs.experiments
for name in ("agents", "experiments"):
    try:
        __import__(name)
    except ImportError:
        print("no top-level", name)
from castle_envs.experiments.deals import load_deals
print("deal set rows", len(load_deals("castle-siege", "very_hard", "heldout").rows))
"""


def run(cmd, cwd, check=True):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if check and done.returncode:
        raise AssertionError(f"{cmd} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


@pytest.mark.slow
def test_the_wheel_installs_bare_and_runs(tmp_path):
    wheel_dir = tmp_path / "wheel"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), str(ROOT)],
        tmp_path,
    )
    (wheel,) = wheel_dir.glob("castle_envs-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {
        "castle_envs",
        wheel.name.split("-py3")[0] + ".dist-info",
    }
    assert "castle_envs/py.typed" in names
    assert "castle_envs/models/castle_siege_very_hard_linear/model.json" in names
    assert "castle_envs/configs/castle_siege/very_hard.yaml" in names
    assert "castle_envs/experiments/deal_sets/index.json" in names  # the labelled deals
    assert "castle_envs/experiments/deal_sets/castle-siege-very_hard-heldout-v1.csv.gz" in names
    assert not [n for n in names if "/tb/" in n or "tfevents" in n]  # TensorBoard logs stay out
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], tmp_path)
    core = [f"{name}=={metadata.version(name)}" for name in ("numpy", "gymnasium", "pettingzoo")]
    deps = run([str(python), "-m", "pip", "install", "-q", *core], tmp_path, check=False)
    if deps.returncode:
        pytest.skip(f"the core dependencies could not be installed here: {deps.stderr[-300:]}")
    extras = {"torch", "stable-baselines3", "pyyaml", "numba", "ray", "matplotlib", "tqdm"}
    installed = run([str(python), "-m", "pip", "list", "--format=freeze"], tmp_path).stdout
    assert not {line.split("==")[0].lower() for line in installed.splitlines()} & extras

    work = tmp_path / "work"  # a folder without the checkout's models/ or configs/
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(python), "-c", BARE_RUN],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    for line in (
        "castle_envs/CastleSiege-v0 played",
        "castle_envs/Castellion-v0 played",
        "castle-siege batched ok",
        "castellion batched ok",
        "castle_envs.castle_rooms_v0 played",
        "castle_envs.castell_v0 played",
        "no top-level agents",
        "no top-level experiments",
        "deal set rows 2000",
    ):
        assert line in out.stdout, out.stdout

    cli = str(venv / "bin" / "castle-envs")
    help_ = subprocess.run([cli, "--help"], cwd=work, capture_output=True, text=True, env=env)
    assert help_.returncode == 0 and "train" in help_.stdout
    demo = subprocess.run(
        [cli, "demo", "--episodes", "2", "--agent", "best"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert demo.returncode == 0, demo.stderr  # the shipped linear model, from the wheel
    assert "castle_envs/models/castle_siege_very_hard_linear" in demo.stderr
    for argv, extra in (
        (["train", "--config", "configs/tiny/castle_siege_easy.yaml"], "train"),
        (
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--episodes",
                "1",
                "--agent",
                "model:models/castle_siege_very_hard",
                "--no-plot",
            ],
            "train",
        ),
        (
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--episodes",
                "1",
                "--backend",
                "ray",
                "--no-plot",
            ],
            "distributed",
        ),
    ):
        done = subprocess.run([cli, *argv], cwd=work, capture_output=True, text=True, env=env)
        assert done.returncode == 2 and f"castle-envs[{extra}]" in done.stderr, (argv, done.stderr)
        assert "Traceback" not in done.stderr


def test_every_data_folder_is_listed_so_the_install_is_quiet():
    """setuptools warns "Package would be ignored" (some 40 lines each) for every folder of
    package data that Python could import but ``packages`` does not list: each folder under
    models/ and configs/ holding files the package data installs must be listed."""
    import fnmatch

    listed = set(SETUPTOOLS["packages"])
    data = SETUPTOOLS["package-data"]
    missing = []
    for name, folder in SETUPTOOLS["package-dir"].items():
        patterns = [p.split("/")[-1] for p in data.get(name, [])] + data.get("*", [])
        for sub in sorted(p for p in (ROOT / folder).rglob("*") if p.is_dir()):
            rel = sub.relative_to(ROOT / folder).parts
            if not all(part.isidentifier() for part in rel):
                continue  # not importable: setuptools says nothing
            if (
                any(
                    f.is_file() and any(fnmatch.fnmatch(f.name, p) for p in patterns)
                    for f in sub.iterdir()
                )
                and ".".join([name, *rel]) not in listed
            ):
                missing.append(".".join([name, *rel]))
    assert not missing, f"add to pyproject.toml's packages: {missing}"


@pytest.mark.slow
def test_the_makefiles_editable_install_prints_no_setuptools_notice(tmp_path):
    """The editable install as the Makefile writes it (``make -n`` prints the command), run
    here without dependencies into a scratch prefix: setuptools' "Editable installation"
    notice block (nothing for the user to act on) is not printed."""
    dry = run(["make", "-n", "-B", ".venv/.installed-docs"], ROOT)
    (line,) = [cmd for cmd in dry.stdout.splitlines() if " install " in cmd and " -e " in cmd]
    command = line.replace(".venv/bin/python", sys.executable)
    # --ignore-installed: pip would otherwise uninstall the running checkout's install first
    command += f" --no-deps --ignore-installed --prefix {tmp_path / 'prefix'}"
    done = subprocess.run(
        command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert "Editable installation" not in printed and "Please be careful" not in printed, printed
