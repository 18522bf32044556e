"""Castle Siege's rules core: a ``State`` over the compiled kernel's rows.

Nothing here knows about Gymnasium. The rules themselves are ``kernel`` (one implementation,
compiled with numba): ``State`` keeps a position in one cards row and one ints row of the
kernel's layout and gives them the rules-core interface (``legal_action_mask``,
``apply_action``, ``clone``, ``player_view``, ``determinize``, ``to_dict``/``from_dict``,
readable moves and errors). ``new_game`` deals; ``to_dict``/``from_dict`` serialize (the
deck order, hidden from the player, included). RULES.md beside this file states every rule
and interpretation the kernel implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from castle_envs.castle_siege import kernel as K

from ..core.errors import HiddenInformationError
from ..core.jit import COMPILED
from ..core.options import check_choice
from ..core.saved import StateReader
from ..core.state import SolitaireState, check_options
from .actions import ACTIONS, HAND_SLOTS, NUM_ACTIONS, Discard, Play, Recycle, Regroup, RoyalCapture
from .cards import CASTLE_NAMES, JACK, KING, NUM_CARDS, QUEEN, RANKS, SUIT_OF, card_name
from .layout import BATTLE, DISCARD, EVENTS, HAND_CAPACITY, NO_CARD, PHASE_NAMES, PRECISION, ROYAL

__all__ = [
    "State",
    "DIFFICULTIES",
    "ATTACK_RULES",
    "DEFEATED_RULES",
    "VICTORY_RULES",
    "RULE_CHOICES",
    "RULE_DEFAULTS",
    "BATTLE",
    "PRECISION",
    "ROYAL",
    "DISCARD",
    "PHASE_NAMES",
    "NO_CARD",
    "HAND_CAPACITY",
    "EVENTS",
    "NUM_ACTIONS",
    "MAX_SAVED_COUNT",
    "difficulty_rows",
    "check_deck",
    "is_royal",
]

DIFFICULTIES = {"easy": 1, "medium": 2, "hard": 3, "very_hard": 4}
ATTACK_RULES = ("any", "most_recent")  # interpretation 3
DEFEATED_RULES = ("discard", "leave_game")  # interpretation 4
#: interpretation 9: "any_time" (the fourth capture wins even with an empty deck; the game is
#: lost when a turn ends with an empty deck) or "deck_left" (the victory sentence read
#: strictly: the fourth castle must fall while the deck still holds a card, and the game is
#: lost as soon as the deck is empty while a castle stands)
VICTORY_RULES = ("any_time", "deck_left")
#: the rules options: name -> allowed values, default first (the env's keywords, the saved
#: state's ``rules``, the solve command's flags and the docs read this one table)
RULE_CHOICES = {"attack": ATTACK_RULES, "defeated": DEFEATED_RULES, "victory": VICTORY_RULES}
RULE_DEFAULTS = {name: values[0] for name, values in RULE_CHOICES.items()}
#: the options every saved state names (the others came later)
_FIRST_RULES = ("attack", "defeated")

#: the largest turn or event count a saved state may hold (the game ends within 45 turns)
MAX_SAVED_COUNT = 10_000
# the scalars of the position, each a word of the ints row
_SCALARS = {
    "deck_head": K.HEAD,
    "deck_size": K.DSIZE,
    "hand_size": K.HSIZE,
    "phase": K.PHASE,
    "turn": K.TURN,
    "outcome": K.OUTCOME,
}
# the rows' types: the compiled kernels' int8 cards; uncompiled (no numba, or NUMBA_DISABLE_JIT)
# the kernels run on NumPy scalars, which do not widen int8 arithmetic as numba does, so int64
# (the batched env's too)
_CARD_DTYPE = np.int8 if COMPILED else np.int64
_INT_DTYPE = np.int32 if COMPILED else np.int64
# the per-card flags: (first word, length) in the cards row
_FLAGS = {
    "captured": (K.CAPTURED, 4),
    "discard": (K.DISCARDED, NUM_CARDS),
    "out_of_game": (K.OUT, NUM_CARDS),
    "recycled": (K.RECYCLED, NUM_CARDS),
}
# the views a State keeps of its rows (rebuilt by clone and unpickling)
_VIEWS = (
    "deck",
    "hand",
    "columns",
    "castles",
    "col_len",
    "events",
    "captured",
    "discard",
    "out_of_game",
    "recycled",
)


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


def difficulty_rows(difficulty: str) -> int:
    return DIFFICULTIES[check_choice("difficulty", difficulty, DIFFICULTIES)]


def check_deck(deck: Any) -> np.ndarray:
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


#: ``State._blank``'s kept blank states, by (rows, attack, defeated, victory)
_BLANKS: dict[tuple, State] = {}


class _Word:
    """A scalar of the position: one word of the State's ints row."""

    def __init__(self, index: int, kind: type = int) -> None:
        self.index, self.kind = index, kind

    def __get__(self, state: State | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        return self.kind(state.v[self.index])

    def __set__(self, state: State, value: Any) -> None:
        state.v[self.index] = value
        state._mask = None


class State(SolitaireState):
    """A Castle Siege position: two rows in the compiled kernel's layout (``kernel``: the
    cards row ``b``, the ints row ``v``), which are the rules; this class is the Python view
    of them. ``deck``, ``hand``, ``columns``, ``castles``, ``col_len``, ``events`` and the
    per-card flags ``captured``, ``discard``, ``out_of_game``, ``recycled`` are NumPy views
    of the rows; ``deck_head``, ``deck_size``, ``hand_size``, ``phase``, ``regroup_used``,
    ``turn`` and ``outcome`` read and write their words."""

    actions = ACTIONS

    deck_head = _Word(K.HEAD)
    deck_size = _Word(K.DSIZE)
    hand_size = _Word(K.HSIZE)
    phase = _Word(K.PHASE)
    regroup_used = _Word(K.REGROUPED, bool)
    turn = _Word(K.TURN)
    outcome = _Word(K.OUTCOME)  # 1 won, -1 lost, 0 playing

    def __init__(
        self, rows: int, attack: str = "any", defeated: str = "discard", victory: str = "any_time"
    ) -> None:
        check_choice("attack rule", attack, ATTACK_RULES)
        check_choice("defeated rule", defeated, DEFEATED_RULES)
        check_choice("victory rule", victory, VICTORY_RULES)
        self.rows = rows
        self.attack = attack
        self.defeated = defeated
        self.victory = victory
        self.b = np.zeros(K.CARD_WORDS, _CARD_DTYPE)
        self.v = np.zeros(K.INT_WORDS, _INT_DTYPE)
        self.b[K.DECK : K.CAPTURED] = NO_CARD
        self.v[K.STRICT] = victory == "deck_left"
        self.hidden = False  # a player's view: the unseen deck cards are a set, not an order
        self._mask: np.ndarray | None = None
        self._bind()

    def _bind(self) -> None:
        b, v = self.b, self.v
        views = {
            "deck": b[K.DECK : K.DECK + NUM_CARDS],  # ring buffer
            "hand": b[K.HAND : K.HAND + HAND_CAPACITY + 1],  # sorted, padded
            "columns": b[K.COLS : K.COLS + 4 * NUM_CARDS].reshape(4, NUM_CARDS),  # oldest first
            "castles": b[K.CASTLES : K.CASTLES + 4],
            "col_len": v[K.CLEN : K.CLEN + 4],
            "events": v[K.EVENTS : K.EVENTS + len(EVENTS)],
        }
        if b.dtype == np.int8:  # the flags (0 or 1) as bool views of the row
            flags = b.view(np.bool_)
            views.update((name, flags[at : at + n]) for name, (at, n) in _FLAGS.items())
        self.__dict__.update(views)  # (re)bound here; assigning one later writes the row

    def __getattr__(self, name: str) -> np.ndarray:
        # int64 rows (uncompiled) have no bool views: the flags are read as copies, read-only
        # so that a write into one raises instead of being lost (assign the attribute instead)
        if name in _FLAGS and "b" in self.__dict__:
            at, n = _FLAGS[name]
            flags = self.b[at : at + n] != 0
            flags.flags.writeable = False
            return flags
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        # a view of the rows is assigned into, so that the rows (the rules) see it
        if name in _VIEWS and "b" in self.__dict__:
            if name in self.__dict__:
                self.__dict__[name][...] = value
            else:  # an uncompiled flag: its words of the cards row
                at, n = _FLAGS[name]
                self.b[at : at + n] = np.broadcast_to(np.asarray(value) != 0, (n,))
            self.__dict__["_mask"] = None
            return
        object.__setattr__(self, name, value)

    def _set_flags(self, name: str, cards: Any) -> None:
        self.b[_FLAGS[name][0] + np.asarray(cards, np.int64)] = 1

    def __getstate__(self) -> dict:
        # the views would unpickle as arrays of their own: rebuilt from the rows instead
        return {k: v for k, v in self.__dict__.items() if k not in _VIEWS}

    def __setstate__(self, data: dict) -> None:
        self.__dict__.update(data)
        self._bind()

    # --- setup ------------------------------------------------------------------------------
    @classmethod
    def new_game(
        cls,
        rng: np.random.Generator | None = None,
        difficulty: str = "very_hard",
        deck: Any = None,
        **rules: Any,
    ) -> State:
        """Deal: 4 castles, then ``rows`` rows of defenders left to right, then the deck."""
        rules = check_options(rules, RULE_DEFAULTS, "rule option")
        state = cls._blank(difficulty_rows(difficulty), **rules)
        if deck is None:
            rng = rng if rng is not None else np.random.default_rng()
            order = rng.permutation(NUM_CARDS).astype(np.int8)
        else:
            order = check_deck(deck)
        K.load_deal(state.b, state.v, state.rows, order)
        return state

    @classmethod
    def _blank(
        cls, rows: int, attack: str = "any", defeated: str = "discard", victory: str = "any_time"
    ) -> State:
        """``cls(rows, attack, defeated, victory)``, no card dealt. A ``State`` of rules
        given as plain strings is a clone of a kept blank of those rules (made, and so
        checked, by the constructor the first time): cheaper than constructing one."""
        if cls is not State or not (type(attack) is type(defeated) is type(victory) is str):
            return cls(rows, attack=attack, defeated=defeated, victory=victory)
        key = (rows, attack, defeated, victory)
        blank = _BLANKS.get(key)
        if blank is None:
            blank = _BLANKS[key] = cls(rows, attack=attack, defeated=defeated, victory=victory)
        return blank.clone()

    # --- the rules: the kernel's ----------------------------------------------------------
    def legal_action_mask(self) -> np.ndarray:
        if self._mask is None:
            m = np.zeros(K.MASK_WIDTH, np.bool_)
            K.compute_mask(self.b, self.v, self.attack == "most_recent", m)
            self._mask = m[:NUM_ACTIONS]
        return self._mask

    def play_shown(self, action: int, shaped: bool, obs: np.ndarray) -> float:
        """``apply_legal(action)``, then the player's observation written into ``obs``
        (``observation.encode``'s layout) and the new mask cached, in one kernel call;
        returns the step's reward (``shaped``: the env's shaped reward). The env's hot path."""
        m = np.zeros(K.MASK_WIDTH, np.bool_)
        reward = K.play_shown(
            self.b,
            self.v,
            action,
            self.rows,
            self.attack == "most_recent",
            self.defeated == "leave_game",
            shaped,
            obs,
            m,
        )
        self._mask = m[:NUM_ACTIONS]
        return float(reward)

    def attack_targets(self) -> np.ndarray:
        """Card ids of the defenders that may be attacked (interpretation 3)."""
        if self.attack == "any":
            flat = self.columns.ravel()
            return flat[flat != NO_CARD]
        return self.columns[np.arange(4), self.col_len - 1][self.col_len > 0]

    def apply_legal(self, action: int) -> None:
        self._mask = None
        if not self.hidden:
            K.apply(self.b, self.v, action, self.defeated == "leave_game")
            return
        # a player's view: a move that would draw an unseen card is refused, the position
        # left as it was
        b, v = self.b.copy(), self.v.copy()
        K.apply(self.b, self.v, action, self.defeated == "leave_game")
        head = int(v[K.HEAD])
        for k in range((int(self.v[K.HEAD]) - head) % NUM_CARDS):
            if not b[K.RECYCLED + int(b[K.DECK + (head + k) % NUM_CARDS])]:
                self.b[:], self.v[:] = b, v
                raise HiddenInformationError(
                    "this is the player's view: the next card of the deck is unseen; "
                    "search determinize(0, rng) of it instead"
                )

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

    def describe_action(self, action: Any) -> str:
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

    def player_view(self, player: int = 0) -> State:
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

    def determinize(self, player: int = 0, rng: np.random.Generator | None = None) -> State:
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
    def clone(self) -> State:
        other = State.__new__(State)
        other.__dict__.update(self.__dict__)
        other.b, other.v = self.b.copy(), self.v.copy()
        other._mask = None
        other._bind()
        return other

    def rule_options(self) -> dict:
        """The rules options of this game, as ``new_game`` and the env take them."""
        return {name: getattr(self, name) for name in RULE_CHOICES}

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
    def from_dict(cls, data: dict) -> State:
        """The state ``to_dict`` saved, read strictly (``core.saved``): exact types and
        ranges, every card in exactly one place, the phase consistent with the position,
        a legal move unless the game is over; ``events`` may be left out (counts 0).
        Anything else raises ``InvalidStateError`` naming the field."""
        r = StateReader("Castle Siege")
        d = r.dict(data, "the state", required=_SAVED_KEYS, optional=("events",))
        if d["game"] != "castle_siege":
            r.bad(f"game is {d['game']!r}, not 'castle_siege'")
        difficulty = r.choice(d["difficulty"], "difficulty", tuple(DIFFICULTIES))
        # an option added after the first saved states may be left out: its default applies
        later = tuple(name for name in RULE_CHOICES if name not in _FIRST_RULES)
        rules = r.dict(d["rules"], "rules", required=_FIRST_RULES, optional=later)
        state = cls(
            DIFFICULTIES[difficulty],
            **{
                name: r.choice(rules.get(name, values[0]), f"rules.{name}", values)
                for name, values in RULE_CHOICES.items()
            },
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
            column = places[f"column {c}"]
            state.columns[c, : len(column)] = column
            state.col_len[c] = len(column)
        state.castles[:] = places["castles"]
        state._set_flags("captured", [c for c in range(4) if captured[c]])
        state._set_flags("discard", places["discard"])
        state._set_flags("out_of_game", places["out_of_game"])
        state._set_flags("recycled", recycled)
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
