"""Castellion — build a shape-changing castle to survive three ordeals (Gymnasium env).

```python
import gymnasium, castle_envs
env = gymnasium.make("castle_envs/Castellion-v0", level="academy")
obs, info = env.reset(seed=0)
mask = info["action_mask"]            # or env.unwrapped.action_masks()
```

| | |
|---|---|
| id | ``castle_envs/Castellion-v0`` |
| levels | ``school`` (School of Architects), ``academy`` (Admiral's Academy: tile powers), |
| | ``menace`` (the Menace: face-down Assaults, formation powers) |
| actions | ``Discrete(137)``, masked (layout: ``castle_envs.castellion.actions``) |
| observation | ``Box(0, 1, (449,), float32)`` (layout: ``castle_envs.castellion.observation``) |
| reward | +1 on victory, 0 otherwise; ``reward="ordeals"`` pays +1/3 per ordeal passed |
| rules | ``castle_envs/castellion/RULES.md`` |

Every decision is one step: which pile to draw from (or which revealed tile to play, or an
early encounter), where to place a Defender or whether to discard it (with or without its
power), place or discard a Traitor, each tile to destroy, the Juggler's pair, each Seer
reveal's pile, the Chameleon's recovered tile, Pyro's tile to move and its destination, and
the face-down ordeal a Menace tower turns up. What the rules force (encounters, row removal)
happens inside the step that caused it.

**Keyword arguments.** ``level``; rules option ``foundation_exemption`` (``"placed"``:
tiles placed in the foundation row ignore the same-shape rule; ``"neighbors"``: in addition,
foundation tiles do not count as neighbours for a tile placed on row 1); rules option
``early_encounter`` (``"any_time"``, default: an early encounter also with a tile in hand;
``"turn_start"``: only at the start of a turn; RULES.md I7); ``reward``
(``"win"`` or ``"ordeals"``); ``illegal_action`` (``"penalty"``, the default, PettingZoo
classic's convention and what Gymnasium's ``check_env`` needs: an illegal action ends the
episode with ``illegal_action_penalty``, default -1, and ``info["illegal_action"] = True``;
or ``"raise"``: ``IllegalActionError`` naming the move and why; an id outside the action
space raises ``ActionSpaceError`` in both modes and changes nothing); ``max_episode_steps``
(default 1000; random games take under 400 steps); ``render_mode`` (``"ansi"`` or
``"rgb_array"``); ``observation`` (``"vector"``, the default, or ``"flat"``: one
``Box(0, 1, (449 + 137,), float32)``, the vector then the action mask as 0/1, for
SuperSuit-style observation wrappers; the mask stays in ``info["action_mask"]`` and
``action_masks()``). A bad argument raises an error naming it, its value and what is
accepted; an unknown keyword raises ``UnknownOptionError`` (a ``TypeError``) worded as
Python's ``"CastellionEnv.__init__() got an unexpected keyword argument ..."``.

**Reset options.** ``regular_order`` (all 72 regular-pile tiles, top first) or
``regular_top`` (the top tiles only; the rest shuffled), likewise ``safe_order`` /
``safe_top`` (12 tiles); tiles are names such as ``"pyro-circle"``, ``"traitor"``,
``"black-traitor"`` (``castle_envs.castellion.data.KIND_NAMES``) or kinds 0-13.
``ordeals``: the three card names for slots I, II, III (e.g. ``["exam-1", "exam-2",
"exam-3b"]``; ``castle_envs.castellion.data.ORDEALS``). ``state``: a ``State.to_dict()`` to
start from (excludes the others).

**Info.** The same keys, of the same types and shapes, at every step (numbers, bools and
arrays only, so replay buffers and vector envs stack them): ``action_mask`` (bool array,
137); ``phase`` (int: the pending decision, an index into
``castle_envs.castellion.rules.PHASE_NAMES``: 0 draw, 1 defender, 2 traitor, 3 destroy,
4 juggle, 5 reveal, 6 recover, 7 pyro_lift, 8 pyro_move, 9 reveal_ordeal, 10 over);
``ordeals_passed`` (int, 0-3); ``formations`` (int64 array of shape (3,): the towers,
bastions and lines of defense now in the castle); ``won`` (bool); with
``illegal_action="penalty"`` also ``illegal_action`` (bool: True on the step that ended the
episode with the penalty, False otherwise).
``env.unwrapped.winners()``: ``[0]`` on a win, ``[]`` otherwise.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.env_common import DEFAULT_ILLEGAL_ACTION, ENV_KEYWORDS
from ..core.options import check_choice, check_keywords
from ..core.saved import StateReader
from ..core.solitaire_env import MaskedSolitaireEnv
from ..core.state import check_options
from . import observation as _layout
from .actions import NUM_ACTIONS
from .data import LEVELS
from .render import render_ansi, render_rgb
from .rules import RULE_DEFAULTS, State

REWARDS = ("win", "ordeals")
#: the constructor's named keyword arguments (beside the rules options)
KEYWORDS = ("level",) + ENV_KEYWORDS
RESET_OPTIONS = {
    "regular_order": None,
    "safe_order": None,
    "regular_top": None,
    "safe_top": None,
    "ordeals": None,
    "state": None,
}


def game_info(phase, ordeals_passed, formations, won) -> dict:
    """The game's info entries: ``phase`` (the int code, ``PHASE_NAMES[phase]`` its name),
    ``ordeals_passed``, ``formations`` (int64 array: towers, bastions, lines), ``won``."""
    return {
        "phase": int(phase),
        "ordeals_passed": int(ordeals_passed),
        "formations": np.array(formations, dtype=np.int64),
        "won": bool(won),
    }


class CastellionEnv(MaskedSolitaireEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    reset_option_keys = tuple(RESET_OPTIONS)

    def __init__(
        self,
        level: str = "school",
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
        check_choice("level", level, LEVELS)
        check_choice("reward", reward, REWARDS)
        self.level = level
        self.rules = check_keywords(type(self).__name__, rules, RULE_DEFAULTS, KEYWORDS)
        State(0, **self.rules)  # validates the option values now, not at reset
        self.reward_mode = reward
        self._set_spaces(gym.spaces.Box(0.0, 1.0, (_layout.OBS_SIZE,), np.float32), NUM_ACTIONS)

    @classmethod
    def state_type(cls) -> type[State]:
        return State

    def new_state(self, rng, options: dict) -> State:
        options = check_options(options, RESET_OPTIONS, "reset option")
        saved = options.pop("state")
        if saved is not None:
            if any(v is not None for v in options.values()):
                raise ValueError("reset option 'state' excludes the pile and ordeal options")
            state = State.from_dict(saved)
            StateReader("Castellion").same_game(
                {"level": LEVELS[state.level], "rules": state.to_dict()["rules"]},
                {"level": self.level, "rules": self.rules},
            )
            return state
        return State.new_game(rng, self.level, options, **self.rules)

    def observe_state(self, state) -> np.ndarray:
        return _layout.encode(state)

    def reward_snapshot(self, state) -> int:
        return state.current

    def step_reward(self, before, after) -> float:
        if self.reward_mode == "win":
            return 1.0 if after.won else 0.0
        return (after.current - before) / 3.0

    def state_info(self, state) -> dict:
        return game_info(state.phase, state.current, state.formations(), state.won)

    def render_state_ansi(self, state) -> str:
        return render_ansi(state)

    def render_state_rgb(self, state) -> np.ndarray:
        return render_rgb(state)
