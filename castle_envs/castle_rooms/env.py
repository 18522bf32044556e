"""Castle Rooms as a PettingZoo AEC environment (2-4 players).

    from castle_envs import castle_rooms_v0
    env = castle_rooms_v0.env(num_players=3, render_mode="ansi")
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else int(np.flatnonzero(mask)[0])
        env.step(action)

Agents are ``player_0`` ... ``player_{n-1}``; ``player_0`` starts unless
``reset(options={"first_player": k})``. A turn is several steps of one agent: the turn's 2
cards are drawn automatically as it starts, then the agent plays cards until it chooses
``EndTurn`` (legal only with at most 2 cards in hand).

Observation
    ``{"observation": float32[980], "action_mask": int8[109]}``; the vector's layout is in
    ``castle_envs.castle_rooms.observation`` (own hand, every row on the table with its cards,
    exit side and Dragon, every hand's size, deck size, discard pile, player count).
Actions
    ``Discrete(109)``: PlayRoom(slot, row) 48, NewRow(slot, helmet) 8, Dragon(opponent, row)
    36, Knight(row) 12, Discard(slot) 4, EndTurn 1 (layout in
    ``castle_envs.castle_rooms.actions``); ``decode_action`` / ``encode_action`` map ids to
    moves and back; ``state.describe_action(a)`` names the real cards.
Rewards
    0 until the game ends; then +1 for each winner and -1 for everyone else. A row of 10 Rooms
    wins alone; at deck-out the longest rows win (compared longest first, then second
    longest...), and players still tied all share the win (each gets +1).
Infos
    The same keys and shapes at every step: ``"scores"`` (that player's
    row lengths, longest first, zero-padded to 4: int64); ``"winners"`` (bool per seat, all
    False until the game is over); ``"end_reason"`` (an int, ``END_REASONS[code]`` names it:
    0 while the game is on, 1 a row of 10 Rooms won, 2 the deck ran out); in penalty mode
    ``"illegal_action"``; with ``observation="flat"`` ``"action_mask"`` (with the default dict
    observation the mask is ``obs["action_mask"]`` only: TorchRL reads it from one place).
    Every value is a number or a NumPy array (TorchRL's ``PettingZooWrapper`` and replay
    buffers stack them).
Options (keywords of ``env`` / ``raw_env``)
    ``num_players`` 2..4; ``render_mode`` "ansi" | "rgb_array" | "human"; ``later_rows``
    "alternate" (default) | "opposite_first" | "free"; ``new_row`` "when_stuck" (default) |
    "forced" | "any_time" (see RULES.md); ``illegal_action`` "penalty" (default, PettingZoo
    classic's convention and what ``api_test``/``seed_test``/``parallel_seed_test`` need:
    the offender gets ``illegal_action_penalty``, -1, and the game ends) | "raise" (an
    ``IllegalActionError`` naming the move and why); ``max_episode_steps`` (truncation);
    ``observation`` "dict" (default) | "flat" (one float32 ``Box``: the 980 observation
    values then the 109 mask values as 0/1, for SuperSuit-style observation wrappers; the
    mask is then also in ``infos[agent]["action_mask"]``; ``action_masks()`` gives it in both
    forms). A bad value raises
    an error naming the argument, the value and what is accepted; an unknown keyword raises
    ``UnknownOptionError`` (a ``TypeError``) worded as Python's.
Winners
    ``env.unwrapped.winners()``: the winning seats once the game is over (a shared win lists
    every sharer), ``[]`` before.
Reset options
    ``first_player``: seat to start; ``deck``: the full deck order (cards dealt from the
    front); ``state``: a ``CastleRoomsState.to_dict()`` to start from (scenario tests).
    Unknown keys are ignored with a warning; ``"options"``, the key PettingZoo's api_test
    probes ``reset`` with, silently.
Wrappers
    ``env()`` is ``raw_env`` in ``StrictOrderEnforcingWrapper`` (``OrderEnforcingWrapper``
    whose step after the end raises). The raw env already raises clear errors for
    actions outside the action space (``ActionSpaceError``, in every mode), illegal actions
    (``IllegalActionError``, with ``illegal_action="raise"``) and for stepping a finished
    game or asking for observations before ``reset`` (``EpisodeOverError``); the default
    ``illegal_action="penalty"`` gives PettingZoo's TerminateIllegal behaviour.
Render
    ``"ansi"``: every row with its cards (entry>exit as laid), Dragons, hand sizes, deck and
    discard counts, and the hand of the player to act (a hot-seat view). ``"rgb_array"``:
    the same table as a uint8 image whose size depends only on the player count.
Rules
    ``castle_envs/castle_rooms/RULES.md``: every interpretation, and the Room connectors,
    which no source gives (*reconstructed*, in ``cards.json``, tuned so that about 68% of
    random and 88% of greedy 2-player games end with a 10-room row; 4-player games mostly
    end at deck-out). ``python -m castle_envs.castle_rooms.balance`` measures it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from castle_envs.core import check_options
from castle_envs.core.aec_env import MaskedAECEnv, StrictOrderEnforcingWrapper, wrap
from castle_envs.core.env_common import DEFAULT_ILLEGAL_ACTION, ENV_KEYWORDS
from castle_envs.core.options import check_choice, unexpected_keyword

from . import observation as _layout
from .render import render_ansi, render_rgb
from .rules import DEFAULT_RULES, CastleRoomsState, parse_rules

RESET_OPTIONS = {"first_player": None, "deck": None, "state": None}
#: ``info["end_reason"]`` codes: the index of the reason here (0: the game is still on)
END_REASONS = ("", "row", "deck")
#: the constructor's keyword arguments beside the rules options
KEYWORDS = ("num_players",) + tuple(k for k in ENV_KEYWORDS if k != "reward")


class raw_env(MaskedAECEnv):
    metadata = {**MaskedAECEnv.metadata, "name": "castle_rooms_v0"}
    reset_option_keys = tuple(RESET_OPTIONS)

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        later_rows: str = DEFAULT_RULES["later_rows"],
        new_row: str = DEFAULT_RULES["new_row"],
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 5000,
        observation: str = "dict",
        **unknown: Any,
    ) -> None:
        if unknown:
            raise unexpected_keyword(type(self).__name__, unknown, KEYWORDS, DEFAULT_RULES)
        num_players = check_choice("num_players", num_players, (2, 3, 4))
        self.rules = parse_rules({"later_rows": later_rows, "new_row": new_row})
        super().__init__(
            num_players,
            render_mode,
            illegal_action,
            illegal_action_penalty,
            max_episode_steps,
            observation,
        )

    @classmethod
    def state_type(cls) -> type[CastleRoomsState]:
        return CastleRoomsState

    def _observation_space(self) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0.0, 1.0, (_layout.OBS_SIZE,), dtype=np.float32)

    def new_state(self, rng, options: dict) -> CastleRoomsState:
        options = check_options(options, RESET_OPTIONS, "reset options")
        if options["state"] is not None:
            if options["deck"] is not None or options["first_player"] is not None:
                raise ValueError("reset option 'state' excludes 'deck' and 'first_player'")
            state = CastleRoomsState.from_dict(options["state"])
            if state.num_players != self.num_players or state.rules != self.rules:
                raise ValueError(
                    "reset option 'state' has another player count or rules than this env"
                )
            return state
        first = options["first_player"]
        first = 0 if first is None else first
        if isinstance(first, bool) or not isinstance(first, (int, np.integer)):
            raise ValueError(f"first_player must be a seat number, got {first!r}")
        first = int(first)
        if options["deck"] is not None:
            deck = options["deck"]
            if not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in deck):
                raise ValueError("reset option 'deck' must be a list of card ids")
            return CastleRoomsState(self.num_players, list(deck), self.rules, first)
        return CastleRoomsState.deal(self.num_players, rng, self.rules, first)

    def observe_state(self, state, seat) -> np.ndarray:
        return _layout.encode(state, seat)

    def render_state_ansi(self, state) -> str:
        return render_ansi(state)

    def render_state_rgb(self, state) -> np.ndarray:
        return render_rgb(state)

    def _game_infos(self, state, seat) -> dict:
        # the same keys and shapes at every step: replay buffers stack them
        over = state.is_terminal()
        winners = np.zeros(self.num_players, dtype=bool)
        if over:
            winners[list(state.winners)] = True
        return {
            "scores": np.array(state.score(seat), dtype=np.int64),
            "winners": winners,
            "end_reason": END_REASONS.index(state.end_reason) if over else 0,
        }


def env(**kwargs: Any) -> StrictOrderEnforcingWrapper:
    """The raw env in ``StrictOrderEnforcingWrapper`` (PettingZoo's order checks; a step
    after every agent is done raises).

    Out-of-range and illegal actions already raise clear errors in the raw env (or end the
    game with a penalty when ``illegal_action="penalty"``, PettingZoo's TerminateIllegal
    convention), so the assert/terminate wrappers of the classic games would only blur them.
    """
    return wrap(raw_env(**kwargs))
