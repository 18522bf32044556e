"""Game records: one game as JSON, enough to replay it exactly and to check it.

    {"format": "castle-envs game record", "version": 1,
     "game": "castle-siege", "variant": {"difficulty": "hard"}, "env_options": {},
     "seed": 7,                  # the deal: np.random.default_rng(seed) (null: dealt unseeded)
     "start": {...},             # the dealt position, State.to_dict() (hidden cards included)
     "agents": ["heuristic"],    # one spec per seat ("human" for a person at the terminal)
     "agent_seeds": [[0, 7, 0]], # what each agent was reset with (null when not seeded)
     "actions": [12, 1669, ...], # the action ids, in order
     "digests": ["3f9a...", ...],# a hash of the position after each action
     "outcome": {"returns": [1.0], "steps": 41, "terminal": true},
     "source": "castle-envs evaluate", "castle_envs_version": "0.1.0"}

``replay`` rebuilds the game from ``start`` (loaded as the env loads a saved state, so it
must be of the record's variant and player count, and checking that ``seed`` deals it),
plays the actions, and refuses a record whose actions are illegal, whose positions differ
from its digests, or whose outcome differs from the replay's, naming the step and what
differs. ``load`` reads the file through ``core.files`` (a size and a nesting limit) and
checks every field's kind, the outcome's too (``returns`` one number per seat, ``steps``
the number of actions) before anything is replayed.
``castle-envs evaluate --record N`` and ``tournament --record N`` write their first N games;
``castle-envs play --save FILE`` writes the game a person played; ``castle-envs replay FILE``
shows one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import castle_envs
from castle_envs.core.files import UnreadableFile, kind, read_json
from castle_envs.registry import get_game

from .common import describer

FORMAT = "castle-envs game record"
VERSION = 1


class RecordError(ValueError):
    """A file that is not a valid game record, or one whose replay disagrees with it."""


def digest(state) -> str:
    """A short hash of a whole position (hidden cards included)."""
    return hashlib.sha256(state.to_json().encode()).hexdigest()[:16]


def _plain(value):
    """JSON-ready copies of numpy scalars and tuples."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class RecordHeader:
    """What a game record says before its moves: the game, its variant and env keywords,
    the deal's seed and starting position, the agents by seat (with their seeds) and
    what played it (``source``)."""

    game: str
    variant: dict
    env_options: dict
    seed: Any
    start: dict
    agents: list
    source: str
    agent_seeds: Any = None


def make_record(header: RecordHeader, actions, digests, returns, terminal: bool) -> dict:
    """The record of a game: ``header``, the actions with the position digest after each,
    and the outcome."""
    return _plain(
        {
            "format": FORMAT,
            "version": VERSION,
            "game": header.game,
            "variant": dict(header.variant),
            "env_options": dict(header.env_options),
            "seed": header.seed,
            "start": header.start,
            "agents": list(header.agents),
            "agent_seeds": header.agent_seeds,
            "actions": [int(a) for a in actions],
            "digests": list(digests),
            "outcome": {
                "returns": [float(r) for r in returns],
                "steps": len(actions),
                "terminal": bool(terminal),
            },
            "source": header.source,
            "castle_envs_version": castle_envs.__version__,
        }
    )


class Recorder:
    """Builds a record while a game is played: ``step(action)`` after each action is
    applied to ``state`` (the live position), ``finish()`` at the end."""

    def __init__(
        self,
        game: str,
        variant: dict,
        env_options: dict,
        seed,
        state,
        agents,
        source: str,
        agent_seeds=None,
    ):
        self.header = RecordHeader(
            game, variant, env_options, seed, state.to_dict(), agents, source, agent_seeds
        )
        self.actions: list[int] = []
        self.digests: list[str] = []

    def step(self, action: int, state_after) -> None:
        self.actions.append(int(action))
        self.digests.append(digest(state_after))

    def finish(self, state) -> dict:
        return make_record(
            self.header, self.actions, self.digests, state.returns(), state.is_terminal()
        )


def save(record: dict, path: str) -> str:
    """Write ``record`` to ``path`` whole (a crash leaves the old file or the new one)."""
    from .journal import write_atomic

    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    write_atomic(path, json.dumps(record, separators=(",", ":")) + "\n")
    return path


def is_record_file(path: str) -> bool:
    """Is ``path`` a regular file that begins as the game records ``save`` writes?"""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(200)
    except OSError:
        return False
    return re.match(rb'\{\s*"format"\s*:\s*"' + FORMAT.encode() + rb'"', head) is not None


def check_save_path(path: str, flag: str) -> str:
    """Check now that a game record can be saved to ``path``: its folder can be written,
    and whatever is there already is a game record (so saving never overwrites a file
    castle-envs did not write); else ``ValueError`` naming ``flag``."""
    from .common import writable_file

    writable_file(path, flag)
    if os.path.exists(path) and not is_record_file(path):
        raise ValueError(
            f"{flag} {path!r} exists and is not a castle-envs game record; give another "
            "file name, or move that file away"
        )
    return path


#: the longest file stem ``file_stem`` gives: a record's name (with ``.json`` and the
#: temporary file's suffix) stays within the 255 bytes most file systems take
MAX_STEM = 200


def file_stem(text: str) -> str:
    """A file-name-safe version of an agent spec or variant, at most ``MAX_STEM``
    characters: a longer one (an agent spec naming a deep folder) keeps its start and end
    and a hash of the whole, so that two long names still differ."""
    stem = re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(text)).strip("_") or "game"
    if len(stem) <= MAX_STEM:
        return stem
    tag = hashlib.sha256(stem.encode()).hexdigest()[:12]
    keep = (MAX_STEM - len(tag) - 2) // 2
    return f"{stem[:keep]}-{tag}-{stem[-keep:]}"


def load(path: str) -> dict:
    """The game record in file ``path``, its fields checked (``check_fields``); the file is
    read through ``core.files.read_json`` (a regular file, at most ``MAX_BYTES``, nested at
    most ``MAX_DEPTH`` deep); a missing file is the ``FileNotFoundError`` of ``open``."""
    try:
        record = read_json(path, "game record", max_bytes=MAX_BYTES, max_depth=MAX_DEPTH)
    except UnreadableFile as err:
        raise RecordError(str(err)) from None
    check_fields(record, path)
    return record


#: far more than a game record nests (its start position: about four levels) or weighs
MAX_DEPTH = 32
MAX_BYTES = 64 * 2**20

_FIELDS = {
    "game": str,
    "variant": dict,
    "env_options": dict,
    "start": dict,
    "agents": list,
    "actions": list,
    "outcome": dict,
}


def check_fields(record, where: str = "record") -> None:
    """The record's fields have the types ``make_record`` writes (the replay checks what
    they say against the rules)."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise RecordError(f'{where} is not a castle-envs game record (no "format": "{FORMAT}")')
    if record.get("version") != VERSION:
        raise RecordError(
            f"{where} has record version {record.get('version')!r}; this "
            f"castle-envs reads version {VERSION}"
        )
    for key, typ in _FIELDS.items():
        if not isinstance(record.get(key), typ):
            raise RecordError(
                f"{where}: field {key!r} must be a {typ.__name__}, got "
                f"{type(record.get(key)).__name__}"
            )
    for i, a in enumerate(record["actions"]):
        if isinstance(a, bool) or not isinstance(a, int):
            raise RecordError(f"{where}: action {i} is {a!r}, not an action id")
    digests = record.get("digests")
    if digests is not None and (
        not isinstance(digests, list) or len(digests) != len(record["actions"])
    ):
        raise RecordError(f"{where}: 'digests' must list one hash per action")
    seed = record.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise RecordError(f"{where}: 'seed' must be a non-negative integer or null, got {seed!r}")
    if not record["agents"] or not all(isinstance(a, str) for a in record["agents"]):
        raise RecordError(f"{where}: 'agents' must name the agent of each seat (strings)")
    check_outcome(record, where)


def check_outcome(record: dict, where: str) -> None:
    """``outcome``: ``returns`` a list of finite numbers, ``steps`` the number of actions,
    ``terminal`` true or false."""
    outcome = record["outcome"]
    returns = outcome.get("returns")
    if not isinstance(returns, list) or not all(
        not isinstance(r, bool) and isinstance(r, (int, float)) and math.isfinite(r)
        for r in returns
    ):
        raise RecordError(
            f"{where}: the outcome's 'returns' must be a list of numbers, one per seat, "
            f"got {kind(returns) if not isinstance(returns, list) else returns!r}"
        )
    steps = outcome.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps != len(record["actions"]):
        raise RecordError(
            f"{where}: the outcome's 'steps' is {steps!r}, but the record has "
            f"{len(record['actions'])} actions"
        )
    if not isinstance(outcome.get("terminal"), bool):
        raise RecordError(f"{where}: the outcome's 'terminal' must be true or false")


@dataclass
class Step:
    """One replayed move: the position before it, the action, the move in words."""

    index: int
    before: object
    action: int
    move: str
    after: object = field(repr=False, default=None)


def make_env(record: dict):
    try:
        spec = get_game(record["game"])
    except ValueError as err:
        raise RecordError(f"the record's game: {err}") from None
    variant = record["variant"]
    if set(variant) != {spec.variant_arg}:
        raise RecordError(f"the record's variant {variant} must name {spec.variant_arg!r} only")
    if variant[spec.variant_arg] not in spec.variants:
        raise RecordError(
            f"unknown {spec.variant_arg} {variant[spec.variant_arg]!r} for "
            f"{spec.slug}; choose one of {list(spec.variants)}"
        )
    try:
        return spec.make(**variant, **record["env_options"])
    except TypeError as err:
        raise RecordError(
            f"the record's env options {record['env_options']} do not fit {spec.slug}: {err}"
        ) from None


def start_state(record: dict, env=None):
    """The dealt position, read the way the env loads a saved state (so that its variant,
    rules and player count must be the env's, seeded or not), and checked against the seed
    when the record has one."""
    env = env or make_env(record)
    try:
        start = env.new_state(np.random.default_rng(0), {"state": record["start"]})
    except ValueError as err:
        raise RecordError(f"the record's start position is invalid: {err}") from None
    if record.get("seed") is not None:
        dealt = env.new_state(np.random.default_rng(record["seed"]), {})
        if dealt != start:
            raise RecordError(
                f"seed {record['seed']} deals a different game than the "
                "record's start position (was the record edited?)"
            )
    if len(record["agents"]) != start.num_players:
        raise RecordError(
            f"the record names {len(record['agents'])} agent(s) for a game of "
            f"{start.num_players} player(s)"
        )
    return start


def replay(record: dict, check: bool = True):
    """Yield each ``Step`` of the recorded game, checking it as it goes (legal actions,
    position digests, and at the end the outcome). The states yielded are copies."""
    check_fields(record)
    env = make_env(record)
    state = start_state(record, env)
    describe = describer(record["game"])
    actions, digests = record["actions"], record.get("digests")
    for i, action in enumerate(actions):
        if state.is_terminal():
            raise RecordError(
                f"step {i}: the game was already over, yet the record has "
                f"{len(actions) - i} more action(s)"
            )
        if not 0 <= action < len(state.actions) or not state.legal_action_mask()[action]:
            why = (
                f"not an action id of {record['game']}"
                if not 0 <= action < len(state.actions)
                else f"{describe(state, action)!r} is not legal: {state.illegal_reason(action)}"
            )
            raise RecordError(f"step {i}: action {action} is illegal ({why})")
        before = state.clone()
        move = describe(state, action)
        state.apply_action(action)
        if check and digests is not None and digests[i] != digest(state):
            raise RecordError(
                f"step {i}: the position after {move!r} differs from the one "
                "recorded (the record was edited, or written by other rules)"
            )
        yield Step(i, before, action, move, state.clone())
    if not check:
        return
    outcome = record["outcome"]
    returns = [float(r) for r in state.returns()]
    recorded = [float(r) for r in outcome.get("returns", [])]
    if recorded != returns:
        raise RecordError(
            f"the record's outcome says returns {recorded}, the replay gives {returns}"
        )
    if bool(outcome.get("terminal")) != state.is_terminal():
        said = "ended" if outcome.get("terminal") else "was unfinished"
        raise RecordError(
            f"the record says the game {said}, the replay "
            f"{'ends' if state.is_terminal() else 'is unfinished'}"
        )


def final_state(record: dict):
    """The position after the last action (checks the whole record)."""
    state = start_state(record)
    for step in replay(record):
        state = step.after
    return state
