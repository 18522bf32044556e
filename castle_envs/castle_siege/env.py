"""Castle Siege — a solitaire card game of besieging four castles (Gymnasium env).

```python
import gymnasium, castle_envs
env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="very_hard")
obs, info = env.reset(seed=0)
mask = info["action_mask"]            # or env.unwrapped.action_masks()
```

| | |
|---|---|
| ids | ``castle_envs/CastleSiege-v0`` |
| actions | ``Discrete(1676)``, masked (layout: ``castle_envs.castle_siege.actions``) |
| observation | ``Box(0, 1, (882,), float32)`` (layout: ``castle_envs.castle_siege.observation``) |
| reward | +1 on victory, 0 otherwise; ``reward="shaped"`` adds progress terms |
| rules | ``castle_envs/castle_siege/RULES.md`` |

**Keyword arguments.** ``difficulty`` (``easy``/``medium``/``hard``/``very_hard`` = 1-4
defender rows); rules options ``attack`` (``"any"`` defender in a column, or
``"most_recent"``), ``defeated`` (``"discard"``, or ``"leave_game"``) and ``victory``
(``"any_time"``: the fourth capture wins even with an empty deck; or ``"deck_left"``: it
must come while the deck holds a card, and the game is lost as soon as the deck is empty
while a castle stands); ``reward``
(``"win"`` or ``"shaped"``: +0.01 per defender defeated, +0.1 per castle captured, +1 on
victory); ``illegal_action`` (``"penalty"``, the default, PettingZoo classic's convention
and what Gymnasium's ``check_env`` needs: an illegal action ends the episode with
``illegal_action_penalty``, default -1, and ``info["illegal_action"] = True``; or
``"raise"``: ``IllegalActionError`` naming the move and why, for masked training that wants
to hear of a bug; an id outside the action space raises ``ActionSpaceError`` in both modes
and changes nothing); ``max_episode_steps`` (default 1000; the game provably ends within 45
turns, so this only guards against runaway agents); ``render_mode`` (``"ansi"`` or
``"rgb_array"``); ``observation`` (``"vector"``, the default: the Box below; ``"flat"``: one
``Box(0, 1, (882 + 1676,), float32)``, the vector then the action mask as 0/1, for
SuperSuit-style observation wrappers; the mask stays in ``info["action_mask"]`` and
``action_masks()``). A bad argument raises an error naming it, its value and what is
accepted; an unknown keyword raises ``UnknownOptionError`` (a ``TypeError``) worded as
Python's ``"CastleSiegeEnv.__init__() got an unexpected keyword argument ..."``.

**Reset options.** ``{"deck": [52 card ids, top first]}`` deals exactly that deck;
``{"state": State.to_dict()}`` starts from a saved position. Card id = suit·13 + rank − 1
with suits ♠ ♣ ♥ ♦ (``castle_envs.castle_siege.cards``).

**Info.** The same keys, of the same types, at every step (numbers, bools and arrays
only, so replay buffers and vector envs stack them): ``action_mask`` (bool array, 1676);
``won`` (bool); the rule-event counters so far in the game, one int each, named
``events_<name>`` for every name of ``castle_envs.castle_siege.rules.EVENTS``
(``INFO_EVENT_KEYS``): ``events_precision_strikes``, ``events_flush_sieges``,
``events_flush_draws`` (cards drawn by Flush Sieges), ``events_royal_assaults``,
``events_regroups``, ``events_castles_captured``, ``events_defenders_defeated``,
``events_turns``; with ``illegal_action="penalty"`` also ``illegal_action`` (bool: True on
the step that ended the episode with the penalty, False otherwise).
``env.unwrapped.winners()`` asks who won as every env answers it: ``[0]`` on a win, ``[]``
otherwise.

**Vector envs.** ``gymnasium.make_vec(..., vectorization_mode="sync")`` stacks
``info["action_mask"]`` to ``(num_envs, 1676)``; ``envs.call("action_masks")`` also works.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege import observation as _layout

from ..core.env_common import DEFAULT_ILLEGAL_ACTION, ENV_KEYWORDS, flatten
from ..core.options import check_choice, check_keywords
from ..core.saved import StateReader
from ..core.solitaire_env import MaskedSolitaireEnv
from ..core.state import check_options
from .actions import NUM_ACTIONS
from .render import render_ansi, render_rgb
from .rules import EVENTS, RULE_DEFAULTS, State, difficulty_rows

REWARDS = ("win", "shaped")
#: the constructor's named keyword arguments (beside the rules options)
KEYWORDS = ("difficulty",) + ENV_KEYWORDS
_DEFEATED, _CAPTURED = EVENTS.index("defenders_defeated"), EVENTS.index("castles_captured")
#: the info keys of the event counters, in ``EVENTS`` order
INFO_EVENT_KEYS = tuple(f"events_{name}" for name in EVENTS)
#: the action ids' types that ``step`` takes without ``screen_action``'s general checks
_PLAIN_INTS = frozenset({int, np.int64, np.int32, np.intp})
#: what ``step``'s one-kernel path does in one call: a subclass that overrides one of these
#: steps through them instead (``MaskedSolitaireEnv.step``)
_KERNEL_STEP_HOOKS = (
    "observe_state",
    "reward_snapshot",
    "step_reward",
    "state_info",
    "_present",
    "_full_info",
)


def event_info(counts) -> dict:
    """The ``events_<name>`` info entries (Python ints) of the counters ``counts``, in
    ``EVENTS`` order."""
    if isinstance(counts, np.ndarray):
        counts = counts.tolist()  # Python ints, at once
    return dict(zip(INFO_EVENT_KEYS, map(int, counts)))


class CastleSiegeEnv(MaskedSolitaireEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        difficulty: str = "very_hard",
        render_mode: str | None = None,
        reward: str = "win",
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 1000,
        observation: str = "vector",
        **rules: Any,
    ) -> None:
        super().__init__(
            render_mode, illegal_action, illegal_action_penalty, max_episode_steps, observation
        )
        difficulty_rows(difficulty)
        check_choice("reward", reward, REWARDS)
        self.difficulty = difficulty
        self.rules = check_keywords(type(self).__name__, rules, RULE_DEFAULTS, KEYWORDS)
        State(1, **self.rules)  # validates the option values now, not at reset
        self.reward_mode = reward
        self._set_spaces(gym.spaces.Box(0.0, 1.0, (_layout.OBS_SIZE,), np.float32), NUM_ACTIONS)

    @classmethod
    def state_type(cls) -> type[State]:
        return State

    def new_state(self, rng, options: dict) -> State:
        options = check_options(options, {"deck": None, "state": None}, "reset option")
        if options["state"] is not None:
            if options["deck"] is not None:
                raise ValueError("reset options 'deck' and 'state' exclude each other")
            state = State.from_dict(options["state"])
            StateReader("Castle Siege").same_game(
                {"difficulty": state.to_dict()["difficulty"], "rules": state.rule_options()},
                {"difficulty": self.difficulty, "rules": self.rules},
            )
            return state
        return State.new_game(rng, self.difficulty, deck=options["deck"], **self.rules)

    def observe_state(self, state) -> np.ndarray:
        return _layout.encode(state)

    def reward_snapshot(self, state) -> tuple[int, int]:
        return (int(state.events[_DEFEATED]), int(state.captured.sum()))

    def step_reward(self, before, after) -> float:
        won = 1.0 if after.won else 0.0
        if self.reward_mode == "win":
            return won
        defeated = int(after.events[_DEFEATED]) - before[0]
        captured = int(after.captured.sum()) - before[1]
        return won + 0.01 * defeated + 0.1 * captured

    def state_info(self, state) -> dict:
        return {**event_info(state.events), "won": bool(state.won)}

    # --- the hot path ----------------------------------------------------------------------
    #: whether this class steps a ``rules.State`` in one kernel call (``step``); False for a
    #: subclass that overrides one of ``_KERNEL_STEP_HOOKS``
    _kernel_step = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._kernel_step = all(
            getattr(cls, name) is getattr(CastleSiegeEnv, name) for name in _KERNEL_STEP_HOOKS
        )

    def step(self, action: Any) -> tuple:
        """``MaskedSolitaireEnv.step``, with the same results, checks and errors; a legal
        integer action on a ``rules.State`` (not a player's view) is played, observed and
        masked by one kernel call (``State.play_shown``) instead of a call per hook."""
        state = self.state
        if (
            self._done
            or type(state) is not State
            or action.__class__ not in _PLAIN_INTS
            or not self._kernel_step
            or state.hidden
        ):
            return super().step(action)  # errors, penalties and the general case
        action = int(cast(int, action))  # a Python or NumPy int (_PLAIN_INTS)
        if not (0 <= action < NUM_ACTIONS and state.legal_action_mask()[action]):
            return super().step(action)  # the illegal action's penalty or error
        obs = np.empty(_layout.OBS_SIZE, np.float32)
        reward = state.play_shown(action, self.reward_mode == "shaped", obs)
        mask = state.legal_action_mask()  # what play_shown cached
        v = state.v
        self._steps += 1
        outcome = int(v[K.OUTCOME])
        terminated = outcome != 0
        truncated = not terminated and self._steps >= self.max_episode_steps
        self._done = terminated or truncated
        # _full_info's dict: the same keys, in the same order, with the same values
        info = dict(zip(INFO_EVENT_KEYS, v[K.EVENTS : K.EVENTS + len(EVENTS)].tolist()))
        info["won"] = outcome == 1
        info["action_mask"] = mask.copy()
        if self.illegal_action == "penalty":
            info["illegal_action"] = False
        if self.observation_mode == "flat":
            obs = flatten(obs, mask)
        return obs, float(reward), terminated, truncated, info

    def render_state_ansi(self, state) -> str:
        return render_ansi(state)

    def render_state_rgb(self, state) -> np.ndarray:
        return render_rgb(state)
