"""Castell — build human towers across seven Catalan regions (PettingZoo AEC, 2-4 players).

```python
import numpy as np
from castle_envs import castell_v0
env = castell_v0.env(num_players=3, advanced=False, render_mode="ansi")
env.reset(seed=0)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    mask = obs["action_mask"]
    action = None if termination or truncation else int(np.flatnonzero(mask)[0])
    env.step(action)
```

| | |
|---|---|
| agents | ``player_0`` … ``player_{n-1}``, clockwise from the first player |
| actions | ``Discrete(395)``, masked (layout: ``castle_envs.castell.actions``) |
| observation | ``{"observation": Box(0, 1, (1183,), float32), "action_mask": Box(0, 1, (395,), int8)}`` (layout: ``castle_envs.castell.observation``) |
| reward | at the end only: ``reward="win_loss"`` (default) +1 sole winner, 0 each for players tied on top, -1 the others; ``reward="score_diff"``: (own score - mean of the others) / 50 |
| rules | ``castle_envs/castell/RULES.md`` |

**A turn** is a sequence of steps by one agent: the four actions (Move, Recruit - one or
two ``Recruit`` steps in a row -, Train, Special) each at most once, in any order, plus free
tower edits (``AddLevel``, ``Dismantle``; at most ``tower_edits_per_turn`` a turn), closed by
``EndTurn``. The tower stands between turns: festivals at the end of a round score it,
the Special action "perform" claims a local performance tile the tower meets.

**Keyword arguments.** ``num_players`` (2-4); ``advanced`` (``False``: the wheel's "All
Regions" side; ``True``: "No Regions"); rules options ``max_skill`` (3), ``tower_edits_per_turn``
(12), ``collect_own_token`` (``False``: the performer's token is placed after collecting,
so it waits for the next performer; ``True``: it is collected with the others),
``variety_counts`` (``"all"``: regions where the player won a local performance tile, a
special-action token, a size token or a prize; ``"board"``: only regions holding a token on
the player board), ``size_token_ties``
(``"tower_score"``: a tie for a size token goes to the best tower among the tied, still tied:
nobody; ``"none"``: any tie, nobody), ``festival_size_tokens`` (``"by_phase"``: one size
token under each I festival, two under each II; ``"one"``: one under each), ``first_player``
(seat, default 0); ``reward``;
``illegal_action`` (``"penalty"``, the default, PettingZoo classic's convention: the
offender gets ``illegal_action_penalty`` and the game ends; or ``"raise"``:
``IllegalActionError`` naming the move and why; an id outside the action space raises
``ActionSpaceError`` in both modes and changes nothing), ``illegal_action_penalty`` (-1),
``max_episode_steps`` (5000; a game is finite by construction: 10 rounds, and a turn is at
most 5 action steps + the tower edits + ``EndTurn``); ``render_mode`` (``"ansi"``, ``"human"``,
``"rgb_array"``); ``observation`` (``"dict"``, the default, or ``"flat"``: one float32 ``Box``,
the 1183 observation values then the 395 mask values as 0/1, for SuperSuit-style observation
wrappers; the mask is then also in ``infos[agent]["action_mask"]``; ``action_masks()`` gives
it in both forms). A bad
value raises an error naming the argument, the value and what is accepted; an unknown
keyword raises ``UnknownOptionError`` (a ``TypeError``) worded as Python's.
``env.unwrapped.winners()``: every player with the top total once the game is over (tied
players all listed), ``[]`` before.

**Reset options.** ``{"state": State.to_dict()}`` starts from a saved position (other keys
are ignored with a warning, but for ``"options"``, the key PettingZoo's ``api_test`` probes
``reset`` with, which is ignored silently).

**Info.** The same keys and shapes at every step, every value a number or a NumPy array
(TorchRL's ``PettingZooWrapper`` and replay buffers stack them): ``scores``
(int64, one per seat: every player's final total, indexed by seat, all 0 until the game is
over); ``category_scores`` (int64, 6: that agent's final ``best_tower``, ``variety``,
``prizes``, ``size_tokens``, ``local_performances`` and ``total``, the order of
``castle_envs.castell.env.SCORE_KEYS``; 0 until the end); in penalty mode
``illegal_action``; with ``observation="flat"`` ``action_mask`` (with the default dict
observation the mask is ``observation["action_mask"]`` only: TorchRL reads it from one
place). The festivals' results of the last round are
``env.game_state.last_festivals``.

**Hidden information.** Only the bag's order; its counts per number are public by counting
and observed. Everything else in Castell lies face up.

**Measuring.** ``python -m castle_envs.castell.measure --games 200`` prints AEC steps per
second and mean final scores per category for uniform random play (``--agent heuristic``: a
simple festival-seeking baseline, ``castle_envs.castell.measure.heuristic_action``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from ..core.aec_env import MaskedAECEnv, StrictOrderEnforcingWrapper, wrap
from ..core.env_common import DEFAULT_ILLEGAL_ACTION, ENV_KEYWORDS
from ..core.options import check_bool, check_choice, check_keywords
from ..core.saved import StateReader
from ..core.state import check_options
from . import observation as _layout
from .actions import NUM_ACTIONS
from .render import render_ansi, render_rgb
from .rules import CATEGORIES, RULE_DEFAULTS, State

REWARDS = ("win_loss", "score_diff")
#: the constructor's named keyword arguments (beside the rules options)
KEYWORDS = ("num_players", "advanced") + ENV_KEYWORDS
#: what ``info["category_scores"]`` holds, in this order
SCORE_KEYS = CATEGORIES + ("total",)


class raw_env(MaskedAECEnv):
    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "castell_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 2,
        advanced: bool = False,
        render_mode: str | None = None,
        reward: str = "win_loss",
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 5000,
        observation: str = "dict",
        **rules: Any,
    ) -> None:
        num_players = check_choice("num_players", num_players, (2, 3, 4))
        check_choice("reward", reward, REWARDS)
        check_bool("advanced", advanced)
        self.rules = check_keywords(
            type(self).__name__, {**rules, "advanced": advanced}, RULE_DEFAULTS, KEYWORDS
        )
        State(num_players, **self.rules)  # validates option values now, not at reset
        self.reward_mode = reward
        super().__init__(
            num_players,
            render_mode,
            illegal_action,
            illegal_action_penalty,
            max_episode_steps,
            observation,
        )

    @classmethod
    def state_type(cls) -> type[State]:
        return State

    def _observation_space(self) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0.0, 1.0, (_layout.OBS_SIZE,), np.float32)

    def new_state(self, rng, options: dict) -> State:
        options = check_options(options, {"state": None}, "reset option")
        if options["state"] is not None:
            state = State.from_dict(options["state"])
            StateReader("Castell").same_game(
                {"num_players": state.num_players, "rules": state.rules},
                {"num_players": self.num_players, "rules": self.rules},
            )
            return state
        return State.deal(rng, self.num_players, **self.rules)

    def observe_state(self, state, seat) -> np.ndarray:
        return _layout.observe(state, seat)

    def render_state_ansi(self, state) -> str:
        return render_ansi(state)

    def render_state_rgb(self, state) -> np.ndarray:
        return render_rgb(state)

    def _final_rewards(self, state) -> np.ndarray:
        if self.reward_mode != "score_diff":
            return state.returns()
        # own score minus the mean of the others' scores, divided by 50 (RULES.md)
        scores = state.scores()
        n = self.num_players
        return (scores - (scores.sum() - scores) / (n - 1)) / 50.0

    def _game_infos(self, state, seat) -> dict:
        # the same keys and shapes at every step (replay buffers stack them): the final
        # scores, zero until the game is over
        scores = np.zeros(self.num_players, dtype=np.int64)
        categories = np.zeros(len(SCORE_KEYS), dtype=np.int64)
        if state.is_terminal():
            scores[:] = state.scores()
            own = state.category_scores(seat)
            categories[:-1] = [own[c] for c in CATEGORIES]
            categories[-1] = scores[seat]
        return {"scores": scores, "category_scores": categories}


def env(**kwargs: Any) -> StrictOrderEnforcingWrapper:
    """The raw env in ``StrictOrderEnforcingWrapper`` (PettingZoo's order checks; a step
    after every agent is done raises).

    Out-of-range, non-integer and illegal actions already raise the project's clear errors
    in the raw env (or end the game with a penalty when ``illegal_action="penalty"``), so
    PettingZoo's ``AssertOutOfBoundsWrapper`` would only replace them with a bare
    ``AssertionError`` (and with nothing at all under ``python -O``)."""
    return wrap(raw_env(**kwargs))


assert NUM_ACTIONS == 395
