"""The games by name: one place the CLI, the agents and the harness look them up.

Entries name their modules as strings so that ``import castle_envs`` stays cheap and a
game's import errors surface only when that game is used.

Each entry describes its game to the shared code, which reads these attributes instead of
comparing slugs: whether it is a solitaire, its renderer, its compiled envs, its
move-feature view, its
hand-written policies, the agents made for it alone, its solve command, its position value
for reward shaping and whether it has the CEM linear move scorer. The attributes name
objects of any layer as ``"module:name"`` strings (a game's heuristic may live in
``castle_envs.agents``); nothing here imports them, the code that uses one loads it
(``load``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GameSpec:
    slug: str  # command-line name, e.g. "castle-siege"
    title: str
    api: str  # "gymnasium" or "pettingzoo"
    env_class: str  # "module:Class" of the env
    variant_arg: str  # the keyword that picks a variant
    variants: tuple  # its allowed values, default first
    gym_id: str | None = None
    rules_doc: str = ""
    extra: dict = field(default_factory=dict)
    #: the module with ``render_ansi``, ``render_rgb``, ``render_svg`` and ``events`` (and
    #: what the play and replay commands read from it: ``LEGEND``, ``describe``, ...)
    renderer: str = ""
    #: ``"module:Class"`` of the batched env on compiled kernels (``make_vec``) and of the
    #: compiled single env (``make_single``), for a game with kernels in ``vector``
    vector_env: str | None = None
    compiled_env: str | None = None
    #: ``"module:Class"`` of the move-feature view (``castle_envs.moves``), and its default
    #: capacity (rows)
    move_view: str | None = None
    move_capacity: int = 0
    #: hand-written policies ``policy(state, rng)`` by agent name (``heuristic``, ``greedy``)
    heuristics: dict = field(default_factory=dict)
    #: the agents of ``castle_envs.agents.registry`` made for this game alone
    agents: tuple = ()
    #: ``"module:run"`` behind ``castle-envs solve --game SLUG`` (perfect-information solver)
    solver: str | None = None
    #: ``"module:value"``: the heuristic position value ``value(state)`` (one ordeal, or
    #: the game's unit of progress, about 1) that ``shaping: heuristic_potential`` turns
    #: into a potential-based reward
    potential: str | None = None
    #: the CEM linear move scorer exists for it (``algo: cem``, ``linear:PATH``, and its
    #: columns close the move view)
    linear_scorer: bool = False

    @property
    def solitaire(self) -> bool:
        """A one-player Gymnasium game (else a PettingZoo AEC game of 2-4 players)."""
        return self.api == "gymnasium"

    def load_env_class(self):
        return load(self.env_class)

    def load_renderer(self):
        return importlib.import_module(self.renderer)

    def make(self, **kwargs):
        """The env, unwrapped (AEC games: the raw env)."""
        return self.load_env_class()(**kwargs)

    def state_type(self):
        return self.load_env_class().state_type()


def load(target: str):
    """The object a ``"module:name"`` string names (``module`` alone: the module)."""
    module, _, name = target.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, name) if name else loaded


GAMES = {
    spec.slug: spec
    for spec in [
        GameSpec(
            "castle-siege",
            "Castle Siege",
            "gymnasium",
            "castle_envs.castle_siege.env:CastleSiegeEnv",
            "difficulty",
            ("very_hard", "easy", "medium", "hard"),
            "castle_envs/CastleSiege-v0",
            "castle_envs/castle_siege/RULES.md",
            renderer="castle_envs.castle_siege.render",
            vector_env="castle_envs.vector.castle_siege:CastleSiegeVectorEnv",
            compiled_env="castle_envs.vector.single:CompiledCastleSiegeEnv",
            move_view="castle_envs.vector.moves:SiegeMoves",
            move_capacity=256,
            heuristics={
                "heuristic": "castle_envs.agents.castle_siege:heuristic_policy",
                "greedy": "castle_envs.agents.castle_siege:greedy_policy",
            },
            agents=("linear", "search", "ismcts"),
            solver="castle_envs.experiments.solve:run_castle_siege",
            linear_scorer=True,
        ),
        GameSpec(
            "castellion",
            "Castellion",
            "gymnasium",
            "castle_envs.castellion.env:CastellionEnv",
            "level",
            ("school", "academy", "menace"),
            "castle_envs/Castellion-v0",
            "castle_envs/castellion/RULES.md",
            renderer="castle_envs.castellion.render",
            vector_env="castle_envs.vector.castellion:CastellionVectorEnv",
            compiled_env="castle_envs.vector.castellion:CompiledCastellionEnv",
            move_view="castle_envs.vector.moves:CastellionMoves",
            move_capacity=137,
            heuristics={"heuristic": "castle_envs.agents.castellion:heuristic_policy"},
            agents=("planner", "pimc"),
            solver="castle_envs.experiments.solve_castellion:run",
            potential="castle_envs.agents.castellion:heuristic_potential",
        ),
        GameSpec(
            "castle-rooms",
            "Castle Rooms",
            "pettingzoo",
            "castle_envs.castle_rooms.env:raw_env",
            "num_players",
            (2, 3, 4),
            None,
            "castle_envs/castle_rooms/RULES.md",
            renderer="castle_envs.castle_rooms.render",
            move_view="castle_envs.castle_rooms.moves:RoomsMoves",
            move_capacity=109,
            heuristics={"heuristic": "castle_envs.castle_rooms.balance:greedy_policy"},
        ),
        GameSpec(
            "castell",
            "Castell",
            "pettingzoo",
            "castle_envs.castell.env:raw_env",
            "num_players",
            (2, 3, 4),
            None,
            "castle_envs/castell/RULES.md",
            renderer="castle_envs.castell.render",
            move_view="castle_envs.castell.moves:CastellMoves",
            move_capacity=395,
            heuristics={"heuristic": "castle_envs.castell.measure:heuristic_policy"},
        ),
    ]
}


def get_game(slug: str) -> GameSpec:
    try:
        return GAMES[slug]
    except KeyError:
        raise ValueError(f"unknown game {slug!r}; choose one of {sorted(GAMES)}") from None
