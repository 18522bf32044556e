"""Castle Siege's rules in plain Python over NumPy arrays: the reference the compiled kernel
(``castle_envs.castle_siege.kernel``, the package's rules) is checked against.

``ReferenceState`` is a ``GameState`` with the package State's attributes and dict format;
``reference_encode`` is the observation; ``ReferenceCastleSiegeEnv`` is ``CastleSiegeEnv``
playing them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from castle_envs.castle_siege.actions import (
    ACTIONS,
    DISCARD_BASE,
    END_BATTLE,
    HAND_SLOTS,
    NUM_ACTIONS,
    NUM_SUBSETS,
    PLAY_BASE,
    RECYCLE_BASE,
    REGROUP,
    ROYAL_BASE,
    Discard,
    Play,
    Recycle,
    Regroup,
    RoyalCapture,
    slots_of,
)
from castle_envs.castle_siege.cards import (
    CASTLE_NAMES,
    JACK,
    KING,
    NUM_CARDS,
    QUEEN,
    RANK,
    RANKS,
    SUIT,
    SUIT_OF,
    card_name,
)
from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.core.errors import HiddenInformationError
from castle_envs.core.options import check_choice
from castle_envs.core.saved import StateReader
from castle_envs.core.state import SolitaireState, check_options

DIFFICULTIES = {"easy": 1, "medium": 2, "hard": 3, "very_hard": 4}
ATTACK_RULES = ("any", "most_recent")  # interpretation 3
DEFEATED_RULES = ("discard", "leave_game")  # interpretation 4
#: interpretation 9: "any_time" (the fourth capture wins even with an empty deck; the game is
#: lost when a turn ends with an empty deck) or "deck_left" (the victory sentence read
#: strictly: the fourth castle must fall while the deck still holds a card, and the game is
#: lost as soon as the deck is empty while a castle stands)
VICTORY_RULES = ("any_time", "deck_left")
RULE_DEFAULTS = {"attack": "any", "defeated": "discard", "victory": "any_time"}

# phases: what the player is deciding now
BATTLE, PRECISION, ROYAL, DISCARD = 0, 1, 2, 3
PHASE_NAMES = ("battle", "precision_strike", "royal_assault", "discard")

NO_CARD = NUM_CARDS  # padding value in hand and column arrays
HAND_CAPACITY = HAND_SLOTS + 1  # room for the (provably never reached) sixth card
#: the largest turn or event count a saved state may hold (the game ends within 45 turns)
MAX_SAVED_COUNT = 10_000
EVENTS = (
    "precision_strikes",
    "flush_sieges",
    "flush_draws",
    "royal_assaults",
    "regroups",
    "castles_captured",
    "defenders_defeated",
    "turns",
)

_RANK_PADDED = np.append(RANK, 0).astype(np.int16)  # rank of NO_CARD is 0
# row s of _SUBSETS marks the hand slots of subset bitmask s + 1
_SUBSETS = np.array(
    [[(s + 1) >> i & 1 for i in range(HAND_SLOTS)] for s in range(NUM_SUBSETS)], dtype=np.int16
)
_SLOTS_OF = tuple(slots_of(s + 1) for s in range(NUM_SUBSETS))


_SAVED_KEYS = (
    "game",
    "difficulty",
    "rules",
    "deck",
    "hand",
    "columns",
    "castles",
    "captured",
    "discard",
    "out_of_game",
    "recycled",
    "phase",
    "regroup_used",
    "turn",
    "outcome",
)


def difficulty_rows(difficulty) -> int:
    return DIFFICULTIES[check_choice("difficulty", difficulty, DIFFICULTIES)]


def check_deck(deck) -> np.ndarray:
    """A caller's deck order (52 card ids, top first), or ValueError saying what is wrong."""
    if isinstance(deck, (str, bytes)) or not isinstance(deck, (Sequence, np.ndarray)):
        raise ValueError(
            f"options['deck'] must be a list of 52 card ids, got {type(deck).__name__}"
        )
    if len(deck) != NUM_CARDS:
        raise ValueError(f"options['deck'] must hold 52 card ids, got {len(deck)}")
    ids = []
    for card in deck:
        if isinstance(card, (bool, np.bool_)) or not isinstance(card, (int, np.integer)):
            raise ValueError(f"options['deck'] holds a non-integer card id: {card!r}")
        if not 0 <= card < NUM_CARDS:
            raise ValueError(f"options['deck'] holds card id {card}, outside 0-51")
        ids.append(int(card))
    if len(set(ids)) != NUM_CARDS:
        dupes = sorted({c for c in ids if ids.count(c) > 1})
        raise ValueError(f"options['deck'] repeats card ids {dupes}")
    return np.array(ids, dtype=np.int8)


class ReferenceState(SolitaireState):
    actions = ACTIONS

    def __init__(
        self, rows: int, attack: str = "any", defeated: str = "discard", victory: str = "any_time"
    ):
        check_choice("attack rule", attack, ATTACK_RULES)
        check_choice("defeated rule", defeated, DEFEATED_RULES)
        check_choice("victory rule", victory, VICTORY_RULES)
        self.rows = rows
        self.attack = attack
        self.defeated = defeated
        self.victory = victory
        self.deck = np.full(NUM_CARDS, NO_CARD, dtype=np.int8)  # ring buffer
        self.deck_head = 0
        self.deck_size = 0
        self.hand = np.full(HAND_CAPACITY + 1, NO_CARD, dtype=np.int8)  # sorted, padded
        self.hand_size = 0
        self.columns = np.full((4, NUM_CARDS), NO_CARD, dtype=np.int8)  # oldest first
        self.col_len = np.zeros(4, dtype=np.int8)
        self.castles = np.zeros(4, dtype=np.int8)
        self.captured = np.zeros(4, dtype=bool)
        self.discard = np.zeros(NUM_CARDS, dtype=bool)
        self.out_of_game = np.zeros(NUM_CARDS, dtype=bool)
        self.recycled = np.zeros(NUM_CARDS, dtype=bool)  # Precision Strike cards still in deck
        self.phase = BATTLE
        self.regroup_used = False
        self.turn = 0
        self.outcome = 0  # 1 won, -1 lost, 0 playing
        self.events = np.zeros(len(EVENTS), dtype=np.int32)
        self.hidden = False  # a player's view: the unseen deck cards are a set, not an order
        self._mask: np.ndarray | None = None

    # --- setup ------------------------------------------------------------------------------
    @classmethod
    def new_game(
        cls,
        rng: np.random.Generator | None = None,
        difficulty: str = "very_hard",
        deck=None,
        **rules,
    ) -> ReferenceState:
        """Deal: 4 castles, then ``rows`` rows of defenders left to right, then the deck."""
        rules = check_options(rules, RULE_DEFAULTS, "rules option")
        state = cls(difficulty_rows(difficulty), **rules)
        if deck is None:
            rng = rng if rng is not None else np.random.default_rng()
            order = rng.permutation(NUM_CARDS).astype(np.int8)
        else:
            order = check_deck(deck)
        state.castles[:] = order[:4]
        dealt = 4
        for _ in range(state.rows):
            for c in range(4):
                state._push_defender(c, int(order[dealt]))
                dealt += 1
        rest = order[dealt:]
        state.deck[: len(rest)] = rest
        state.deck_size = len(rest)
        state._start_turn()
        return state

    # --- the rules ----------------------------------------------------------------------------
    def legal_action_mask(self) -> np.ndarray:
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask

    def _compute_mask(self) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if self.outcome:
            return mask
        if self.phase == PRECISION:
            mask[RECYCLE_BASE:ROYAL_BASE] = self.discard
        elif self.phase == ROYAL:
            mask[ROYAL_BASE:REGROUP] = ~self.captured
        elif self.phase == DISCARD:
            mask[DISCARD_BASE : DISCARD_BASE + self.hand_size] = True
        else:
            k = (1 << min(self.hand_size, HAND_SLOTS)) - 1  # subsets of the cards held
            plays = mask[PLAY_BASE:RECYCLE_BASE].reshape(NUM_SUBSETS, NUM_CARDS)
            sums = (_SUBSETS[:k] @ _RANK_PADDED[self.hand[:HAND_SLOTS]])[:, None]
            targets = self.attack_targets()
            if len(targets):
                plays[:k, targets] = sums >= RANK[targets]
            open_castles = self.castles[~self.captured & (self.col_len == 0)]
            can_capture = False
            if len(open_castles):
                exact = sums == RANK[open_castles]
                plays[:k, open_castles] = exact
                can_capture = bool(exact.any())
            mask[REGROUP] = not self.regroup_used and not self.col_len.any() and not can_capture
            mask[END_BATTLE] = True
        return mask

    def attack_targets(self) -> np.ndarray:
        """Card ids of the defenders that may be attacked (interpretation 3)."""
        if self.attack == "any":
            flat = self.columns.ravel()
            return flat[flat != NO_CARD]
        return self.columns[np.arange(4), self.col_len - 1][self.col_len > 0]

    def apply_legal(self, action: int) -> None:
        self._mask = None
        if action < RECYCLE_BASE:
            subset, target = divmod(action - PLAY_BASE, NUM_CARDS)
            self._play(_SLOTS_OF[subset], target)
        elif action < ROYAL_BASE:
            card = action - RECYCLE_BASE
            self.discard[card] = False
            self._to_deck_bottom(card)
            self.phase = BATTLE
        elif action < REGROUP:
            self._capture(action - ROYAL_BASE, royal=True)
            self.phase = BATTLE
        elif action == REGROUP:
            self.regroup_used = True
            self.events[4] += 1
            self.discard[self.hand[: self.hand_size]] = True
            self.hand[:] = NO_CARD
            self.hand_size = 0
            self._draw_to(HAND_SLOTS)
        elif action == END_BATTLE:
            if self.hand_size > HAND_SLOTS:
                self.phase = DISCARD
            else:
                self._end_turn()
        else:
            self._remove_from_hand((action - DISCARD_BASE,), to_discard=True)
            if self.hand_size <= HAND_SLOTS:
                self.phase = BATTLE
                self._end_turn()
        if self.victory == "deck_left" and not self.outcome and not self.deck_size:
            # the deck ran out (a draw, Flush Siege, Regroup or the end-of-turn deal) while a
            # castle stands: lost at once, even with a Precision Strike choice pending
            self.outcome = -1

    def _play(self, slots: tuple, target: int) -> None:
        held = self.hand.tolist()
        played = [held[i] for i in slots]
        self._remove_from_hand(slots, to_discard=True)
        castle = self.castle_index(target)
        if castle >= 0:
            self._capture(castle, royal=False)
            return
        self._remove_defender(target)
        self.events[6] += 1
        total = sum(RANKS[c] for c in played)
        if len(played) >= 2 and len({SUIT_OF[c] for c in played}) == 1:  # Flush Siege
            self.events[1] += 1
            if self._draw():
                self.events[2] += 1
        if is_royal(played):
            self.events[3] += 1
            self.phase = ROYAL
        elif total == RANKS[target]:  # Precision Strike (a royal sum is >= 36, never exact)
            self.events[0] += 1
            self.phase = PRECISION

    def _capture(self, castle: int, royal: bool) -> None:
        self.captured[castle] = True
        n = int(self.col_len[castle])
        if n:  # Royal Assault sweeps the castle's remaining defenders away
            swept = self.columns[castle, :n]
            (self.out_of_game if self.defeated == "leave_game" else self.discard)[swept] = True
            self.columns[castle, :n] = NO_CARD
            self.col_len[castle] = 0
        if not royal:
            self.events[5] += 1
        if self.captured.all():
            self.outcome = 1

    def _end_turn(self) -> None:
        for c in range(4):
            if not self.captured[c] and self.deck_size:
                self._push_defender(c, self._pop_deck())
        if self.deck_size == 0:
            self.outcome = -1  # interpretation 9: a castle stands and nothing can come
            return
        self._start_turn()

    def _start_turn(self) -> None:
        self.turn += 1
        self.events[7] = self.turn
        self.regroup_used = False
        self.phase = BATTLE
        self._draw_to(HAND_SLOTS)

    # --- card movements -----------------------------------------------------------------
    def _pop_deck(self) -> int:
        if self.hidden and not self.recycled[int(self.deck[self.deck_head])]:
            raise HiddenInformationError(
                "this is the player's view: the next card of the deck is unseen; "
                "search determinize(0, rng) of it instead"
            )
        card = int(self.deck[self.deck_head])
        self.deck[self.deck_head] = NO_CARD
        self.deck_head = (self.deck_head + 1) % NUM_CARDS
        self.deck_size -= 1
        self.recycled[card] = False
        return card

    def _to_deck_bottom(self, card: int) -> None:
        self.deck[(self.deck_head + self.deck_size) % NUM_CARDS] = card
        self.deck_size += 1
        self.recycled[card] = True

    def _draw(self) -> bool:
        if not self.deck_size:
            return False
        self.hand[self.hand_size] = self._pop_deck()
        self.hand_size += 1
        self.hand[: self.hand_size].sort()
        return True

    def _draw_to(self, n: int) -> None:
        while self.hand_size < n and self._draw():
            pass

    def _remove_from_hand(self, slots, to_discard: bool) -> None:
        held = self.hand[: self.hand_size].tolist()
        if to_discard:
            self.discard[[held[i] for i in slots]] = True
        keep = [card for i, card in enumerate(held) if i not in slots]
        self.hand[:] = NO_CARD
        self.hand[: len(keep)] = keep
        self.hand_size = len(keep)

    def _push_defender(self, castle: int, card: int) -> None:
        self.columns[castle, self.col_len[castle]] = card
        self.col_len[castle] += 1

    def _remove_defender(self, card: int) -> None:
        c, pos = self._defender_position(card)
        n = int(self.col_len[c])
        self.columns[c, pos : n - 1] = self.columns[c, pos + 1 : n]
        self.columns[c, n - 1] = NO_CARD
        self.col_len[c] = n - 1
        (self.out_of_game if self.defeated == "leave_game" else self.discard)[card] = True

    def _defender_position(self, card: int) -> tuple[int, int]:
        return divmod(int((self.columns.ravel() == card).argmax()), NUM_CARDS)

    def castle_index(self, card: int) -> int:
        castles = self.castles.tolist()
        return castles.index(card) if card in castles else -1

    # --- reading the position -------------------------------------------------------------
    def hand_cards(self) -> list[int]:
        return [int(c) for c in self.hand[: self.hand_size]]

    def deck_cards(self) -> list[int]:
        """The deck, top first (hidden from the player except the recycled bottom)."""
        idx = (self.deck_head + np.arange(self.deck_size)) % NUM_CARDS
        return [int(c) for c in self.deck[idx]]

    def column(self, castle: int) -> list[int]:
        return [int(c) for c in self.columns[castle, : self.col_len[castle]]]

    def event_counts(self) -> dict[str, int]:
        return dict(zip(EVENTS, self.events.tolist()))

    def describe_action(self, action) -> str:
        move = ACTIONS.decode(action)
        if isinstance(move, Play):
            cards = [int(self.hand[i]) for i in move.slots if i < self.hand_size]
            names = " + ".join(card_name(c) for c in cards) or "(empty slots)"
            castle = self.castle_index(move.target)
            if castle >= 0:
                return (
                    f"capture the {CASTLE_NAMES[castle]} castle "
                    f"{card_name(move.target)} with {names}"
                )
            return f"attack {card_name(move.target)} with {names}"
        if isinstance(move, Recycle):
            return f"recycle {card_name(move.card)} to the bottom of the deck"
        if isinstance(move, RoyalCapture):
            return (
                f"royal assault: capture castle {move.castle} "
                f"({card_name(int(self.castles[move.castle]))})"
            )
        if isinstance(move, Discard) and move.slot < self.hand_size:
            return f"discard {card_name(int(self.hand[move.slot]))}"
        return str(move)

    def illegal_reason(self, action: int) -> str:
        move = ACTIONS.decode(action)
        phase = PHASE_NAMES[self.phase]
        wanted = {
            PRECISION: "Precision Strike: choose a discard-pile card to recycle",
            ROYAL: "Royal Assault: choose an uncaptured castle",
            DISCARD: "end of turn: discard down to 5 cards",
        }
        if self.phase != BATTLE and not isinstance(move, (Recycle, RoyalCapture, Discard)):
            return f"a decision is pending ({wanted[self.phase]})"
        if isinstance(move, Play):
            if max(move.slots) >= self.hand_size:
                return f"the hand holds only {self.hand_size} cards (slots 0-{self.hand_size - 1})"
            total = sum(RANKS[int(self.hand[i])] for i in move.slots)
            castle = self.castle_index(move.target)
            if castle >= 0:
                if self.captured[castle]:
                    return "that castle is already captured"
                if self.col_len[castle]:
                    return "that castle still has defenders"
                return f"a capture needs an exact sum: {total} != {RANKS[move.target]}"
            if move.target not in self.attack_targets():
                if np.any(self.columns == move.target) and self.attack == "most_recent":
                    return "under the 'most_recent' attack rule only a column's newest defender may be attacked"
                return f"{card_name(move.target)} is not a defender on the table"
            return f"the cards sum to {total}, less than the defender's {RANKS[move.target]}"
        if isinstance(move, (Recycle, RoyalCapture, Discard)):
            if (
                self.phase
                != {Recycle: PRECISION, RoyalCapture: ROYAL, Discard: DISCARD}[type(move)]
            ):
                return f"no such decision is pending (phase: {phase})"
            if isinstance(move, Recycle):
                return f"{card_name(move.card)} is not in the discard pile"
            if isinstance(move, RoyalCapture):
                return f"castle {move.castle} is already captured"
            return f"the hand has no slot {move.slot}"
        if isinstance(move, Regroup):
            if self.regroup_used:
                return "Regroup was already used this turn"
            if self.col_len.any():
                return "Regroup needs every defender removed"
            return "Regroup is only for a stalemate: some cards capture a castle exactly"
        return f"not legal in phase {phase}"

    def player_view(self, player: int = 0) -> ReferenceState:
        """What the player knows: a copy whose unseen deck cards are in card-id order (the
        unseen cards as a set; the recycled cards below them keep their known order), marked
        ``hidden`` so that drawing an unseen card raises ``HiddenInformationError``. Agents
        get this; ``determinize`` of it deals a world to search."""
        view = self.clone()
        deck = self.deck_cards()
        unseen = sorted(c for c in deck if not self.recycled[c])
        idx = (self.deck_head + np.arange(self.deck_size)) % NUM_CARDS
        view.deck[idx] = unseen + deck[len(unseen) :]
        view.hidden = True
        return view

    def determinize(
        self, player: int = 0, rng: np.random.Generator | None = None
    ) -> ReferenceState:
        """A clone with the unseen part of the deck shuffled; the recycled cards at the
        bottom keep their known order (the player put them there)."""
        rng = rng if rng is not None else np.random.default_rng()
        other = self.clone()
        deck = self.deck_cards()
        # sorted first, so the result depends only on what the player knows (which cards
        # are unseen), never on their hidden order
        unseen = sorted(c for c in deck if not self.recycled[c])
        known = deck[len(unseen) :]
        shuffled = [unseen[i] for i in rng.permutation(len(unseen))] + known
        idx = (self.deck_head + np.arange(self.deck_size)) % NUM_CARDS
        other.deck[idx] = shuffled
        other.hidden = False
        return other

    # --- copies and serialization ------------------------------------------------------------
    def clone(self) -> ReferenceState:
        other = ReferenceState.__new__(ReferenceState)
        other.__dict__.update(self.__dict__)
        for name in (
            "deck",
            "hand",
            "columns",
            "col_len",
            "castles",
            "captured",
            "discard",
            "out_of_game",
            "recycled",
            "events",
        ):
            setattr(other, name, getattr(self, name).copy())
        other._mask = None
        return other

    def rule_options(self) -> dict:
        """The rules options of this game, as ``new_game`` and the env take them."""
        return {"attack": self.attack, "defeated": self.defeated, "victory": self.victory}

    def to_dict(self) -> dict:
        rows = {v: k for k, v in DIFFICULTIES.items()}[self.rows]
        return {
            "game": "castle_siege",
            "difficulty": rows,
            "rules": self.rule_options(),
            "deck": self.deck_cards(),
            "hand": self.hand_cards(),
            "columns": [self.column(c) for c in range(4)],
            "castles": [int(c) for c in self.castles],
            "captured": [bool(c) for c in self.captured],
            "discard": [int(c) for c in np.flatnonzero(self.discard)],
            "out_of_game": [int(c) for c in np.flatnonzero(self.out_of_game)],
            "recycled": [c for c in self.deck_cards() if self.recycled[c]],
            "phase": PHASE_NAMES[self.phase],
            "regroup_used": bool(self.regroup_used),
            "turn": int(self.turn),
            "outcome": int(self.outcome),
            "events": self.event_counts(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> ReferenceState:
        """The state ``to_dict`` saved, read strictly (``core.saved``): exact types and
        ranges, every card in exactly one place, the phase consistent with the position,
        a legal move unless the game is over; ``events`` may be left out (counts 0).
        Anything else raises ``InvalidStateError`` naming the field."""
        r = StateReader("Castle Siege")
        d = r.dict(data, "the state", required=_SAVED_KEYS, optional=("events",))
        if d["game"] != "castle_siege":
            r.bad(f"game is {d['game']!r}, not 'castle_siege'")
        difficulty = r.choice(d["difficulty"], "difficulty", tuple(DIFFICULTIES))
        # "victory" may be left out (states saved before the option existed: "any_time")
        rules = r.dict(d["rules"], "rules", required=("attack", "defeated"), optional=("victory",))
        state = cls(
            DIFFICULTIES[difficulty],
            attack=r.choice(rules["attack"], "rules.attack", ATTACK_RULES),
            defeated=r.choice(rules["defeated"], "rules.defeated", DEFEATED_RULES),
            victory=r.choice(rules.get("victory", "any_time"), "rules.victory", VICTORY_RULES),
        )
        places = {
            "deck": r.ints(d["deck"], "deck", 0, NUM_CARDS - 1, max_length=NUM_CARDS),
            "hand": r.ints(d["hand"], "hand", 0, NUM_CARDS - 1, max_length=HAND_CAPACITY),
            "castles": r.ints(d["castles"], "castles", 0, NUM_CARDS - 1, length=4),
            "discard": r.ints(d["discard"], "discard", 0, NUM_CARDS - 1, max_length=NUM_CARDS),
            "out_of_game": r.ints(
                d["out_of_game"], "out_of_game", 0, NUM_CARDS - 1, max_length=NUM_CARDS
            ),
        }
        columns = r.list(d["columns"], "columns", length=4)
        for c, col in enumerate(columns):
            places[f"column {c}"] = r.ints(
                col, f"columns[{c}]", 0, NUM_CARDS - 1, max_length=NUM_CARDS
            )
        seen = np.zeros(NUM_CARDS, dtype=np.int64)
        for cards in places.values():
            np.add.at(seen, cards, 1)
        if not (seen == 1).all():
            r.bad(
                f"every card must be in exactly one place (missing "
                f"{np.flatnonzero(seen == 0).tolist()}, repeated "
                f"{np.flatnonzero(seen > 1).tolist()})"
            )
        captured = r.bools(d["captured"], "captured", length=4)
        phase = PHASE_NAMES.index(r.choice(d["phase"], "phase", PHASE_NAMES))
        recycled = r.ints(d["recycled"], "recycled", 0, NUM_CARDS - 1, max_length=NUM_CARDS)
        deck = places["deck"]
        if recycled != deck[len(deck) - len(recycled) :]:
            r.bad("recycled cards must be the bottom of the deck, in order")
        for c in range(4):
            if captured[c] and places[f"column {c}"]:
                r.bad(f"captured castle {c} still has defenders")
        if places["out_of_game"] and state.defeated != "leave_game":
            r.bad(
                "cards are out of the game, but defeated defenders go to the discard "
                "pile under these rules"
            )
        state.deck[: len(deck)] = deck
        state.deck_size = len(deck)
        state.hand[: len(places["hand"])] = sorted(places["hand"])
        state.hand_size = len(places["hand"])
        for c in range(4):
            for card in places[f"column {c}"]:
                state._push_defender(c, card)
        state.castles[:] = places["castles"]
        state.captured[:] = captured
        state.discard[places["discard"]] = True
        state.out_of_game[places["out_of_game"]] = True
        state.recycled[recycled] = True
        state.phase = phase
        state.regroup_used = r.bool(d["regroup_used"], "regroup_used")
        state.turn = r.int(d["turn"], "turn", 0, MAX_SAVED_COUNT)
        state.outcome = r.int(d["outcome"], "outcome", -1, 1)
        if (state.outcome == 1) != bool(state.captured.all()):
            r.bad("outcome does not match the captured castles")
        if state.outcome == -1 and state.deck_size:
            r.bad("a lost game has an empty deck (interpretation 9)")
        if state.victory == "deck_left" and state.outcome != -1 and not state.deck_size:
            r.bad(
                "under victory='deck_left' the deck is never empty unless the game is lost "
                "(the fourth castle must fall while the deck holds a card)"
            )
        if state.phase == PRECISION and not state.discard.any():
            r.bad("a Precision Strike choice is pending but the discard pile is empty")
        if state.phase == ROYAL and state.captured.all():
            r.bad("a Royal Assault choice is pending but every castle is captured")
        if state.phase == DISCARD and state.hand_size <= HAND_SLOTS:
            r.bad(
                f"the end-of-turn discard with {state.hand_size} cards in hand: it is "
                f"only for more than {HAND_SLOTS}"
            )
        if state.phase != DISCARD and state.hand_size > HAND_SLOTS:
            r.bad("more than 5 cards in hand outside the end-of-turn discard")
        events = r.dict(d.get("events", {}), "events", optional=EVENTS)
        state.events[:] = [
            r.int(events.get(name, 0), f"events.{name}", 0, MAX_SAVED_COUNT) for name in EVENTS
        ]
        r.playable(state)
        return state


def is_royal(cards: list[int]) -> bool:
    """A Jack, a Queen and a King of three different suits among the played cards."""
    jacks = {SUIT_OF[c] for c in cards if RANKS[c] == JACK}
    queens = {SUIT_OF[c] for c in cards if RANKS[c] == QUEEN}
    kings = {SUIT_OF[c] for c in cards if RANKS[c] == KING}
    return any(j != q and q != k and j != k for j in jacks for q in queens for k in kings)


# --- the observation ---------------------------------------------------------------------
# the vector's layout is the package's (``castle_siege.layout``); how it is filled is this
# module's own
from castle_envs.castle_siege.layout import (
    CASTLE_OFF,
    CASTLE_OPEN,
    DEFENDER0,  # noqa: E402
    DEPTH_OFF,
    DIFF_OFF,
    DISCARD_PILE,
    HAND,
    HAND_OFF,
    LOC_OFF,
    N_LOCATIONS,
    NEWEST_OFF,
    OBS_SIZE,
    OUT,
    PHASE_OFF,
    RECYCLED,
    SCALAR_OFF,
    UNSEEN,
)

# Every one-hot in the vector is written by one scatter of ones; index OBS_SIZE is a
# scratch slot past the end that soaks up NO_CARD padding, so no masking is needed.
SCRATCH = OBS_SIZE
_LOC_BASE = LOC_OFF + np.arange(NUM_CARDS) * N_LOCATIONS
_NEWEST_INDEX = np.append(NEWEST_OFF + np.arange(NUM_CARDS), SCRATCH)
_HAND_INDEX = np.full((HAND_CAPACITY + 1, NUM_CARDS + 1, 3), SCRATCH, dtype=np.intp)
for _slot in range(HAND_CAPACITY):
    _base = HAND_OFF + 18 * _slot
    _HAND_INDEX[_slot, :NUM_CARDS] = np.stack(
        [np.full(NUM_CARDS, _base), _base + RANK, _base + 14 + SUIT], axis=1
    )
_HAND_SLOTS = np.arange(HAND_CAPACITY + 1)
_CASTLE_RANK_BASE = CASTLE_OFF + np.arange(4) * 18 - 1
_RANK_LOW = np.append(RANK, 0).astype(np.float32) / 13  # NO_CARD counts as rank 0
_COLUMN_CODES = np.repeat(
    np.arange(DEFENDER0, DEFENDER0 + 4, dtype=np.int8)[:, None], NUM_CARDS, axis=1
)
_FOUR = np.arange(4)


def card_locations(state: ReferenceState) -> np.ndarray:
    """Location code per card id, as the player sees it (the deck's order stays hidden)."""
    # one slot past the last card soaks up the NO_CARD padding of hand and columns
    loc = np.full(NUM_CARDS + 1, UNSEEN, dtype=np.int8)
    loc[:NUM_CARDS][state.recycled] = RECYCLED
    loc[state.hand] = HAND
    loc[state.columns] = _COLUMN_CODES
    loc[state.castles] = CASTLE_OPEN + state.captured
    loc[:NUM_CARDS][state.discard] = DISCARD_PILE
    loc[:NUM_CARDS][state.out_of_game] = OUT
    return loc[:NUM_CARDS]


def reference_encode(state: ReferenceState) -> np.ndarray:
    obs = np.zeros(OBS_SIZE + 1, dtype=np.float32)
    newest = state.columns[_FOUR, state.col_len - 1]  # NO_CARD where a column is empty
    obs[
        np.concatenate(
            (
                _LOC_BASE + card_locations(state),
                _NEWEST_INDEX[newest],
                _HAND_INDEX[_HAND_SLOTS, state.hand].ravel(),
                _CASTLE_RANK_BASE + RANK[state.castles],
                (PHASE_OFF + state.phase, DIFF_OFF + state.rows - 1),
            )
        )
    ] = 1
    if state.recycled.any():
        for depth, card in enumerate(state.deck_cards()):
            if state.recycled[card]:
                obs[DEPTH_OFF + card] = (depth + 1) / NUM_CARDS
    castles = obs[CASTLE_OFF:PHASE_OFF].reshape(4, 18)
    castles[:, 13] = state.captured
    castles[:, 14] = state.col_len / 13
    castles[:, 15] = _RANK_LOW[newest]
    castles[:, 16] = np.minimum(_RANK_LOW[state.columns].sum(axis=1) * (13 / 52), 1)
    obs[SCALAR_OFF : SCALAR_OFF + 8] = (
        state.deck_size / NUM_CARDS,
        np.count_nonzero(state.discard) / NUM_CARDS,
        state.hand_size / HAND_CAPACITY,
        min(state.turn, 50) / 50,
        state.regroup_used,
        np.count_nonzero(state.captured) / 4,
        state.attack == "most_recent",
        state.defeated == "leave_game",
    )
    return obs[:OBS_SIZE]


class ReferenceCastleSiegeEnv(CastleSiegeEnv):
    """``CastleSiegeEnv`` over ``ReferenceState`` and ``reference_encode``."""

    @classmethod
    def state_type(cls):
        return ReferenceState

    def new_state(self, rng, options):
        options = check_options(options, {"deck": None, "state": None}, "reset option")
        if options["state"] is not None:
            return ReferenceState.from_dict(options["state"])
        return ReferenceState.new_game(rng, self.difficulty, deck=options["deck"], **self.rules)

    def observe_state(self, state):
        return reference_encode(state)
