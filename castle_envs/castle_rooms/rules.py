"""The pure rules of Castle Rooms: a ``GameState`` over plain lists and ints.

Everything random happens in ``deal`` (the shuffled deck, drawn from the front); after that
the game is a deterministic function of the actions. Drawing is automatic: the player to act
draws 2 cards when the turn starts. See RULES.md for every interpretation taken here.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from castle_envs.core import GameState, InvalidStateError, check_options
from castle_envs.core.options import check_choice
from castle_envs.core.saved import StateReader

from . import actions as A
from .data import (
    DOWN,
    DRAGON,
    ENTRY,
    EXIT,
    FIRST_DRAGON,
    HELMET,
    KIND,
    KNIGHT,
    NUM_CARDS,
    ROOM,
    SIDE_SHORT,
    UP,
    card_name,
    cards_in_play,
)

WIN_LENGTH = 10
DRAW_PER_TURN = 2
HAND_LIMIT = 2  # a turn may not end with more cards than this
DEAL = 2

RULE_OPTIONS = {
    # helmet of a player's 3rd and later rows (the 2nd always faces opposite to the 1st)
    "later_rows": ("alternate", "opposite_first", "free"),
    # when a new row may be started
    "new_row": ("when_stuck", "forced", "any_time"),
}
DEFAULT_RULES = {k: v[0] for k, v in RULE_OPTIONS.items()}
#: the largest turn number a saved state may hold
MAX_SAVED_TURN = 1_000_000
_SAVED_KEYS = (
    "game",
    "num_players",
    "rules",
    "deck",
    "hands",
    "rows",
    "discard",
    "player",
    "turn",
    "winners",
    "end_reason",
)


def parse_rules(given: dict | None) -> dict:
    rules = check_options(given, DEFAULT_RULES, "Castle Rooms rules options")
    for key, choices in RULE_OPTIONS.items():
        check_choice(key, rules[key], choices)
    return rules


class Row:
    """One row of Rooms: the cards left to right, its helmet, and the Dragon blocking it."""

    __slots__ = ("cards", "helmet", "dragon", "exit")

    def __init__(self, cards: list[int], helmet: int, dragon: int = -1) -> None:
        self.cards = cards
        self.helmet = helmet
        self.dragon = dragon  # card id of the blocking Dragon, -1 when open
        self.exit = EXIT[helmet][cards[-1]]

    def copy(self) -> Row:
        row = Row.__new__(Row)
        row.cards, row.helmet, row.dragon, row.exit = (
            list(self.cards),
            self.helmet,
            self.dragon,
            self.exit,
        )
        return row


class CastleRoomsState(GameState):
    actions = A.ACTIONS

    def __init__(
        self, num_players: int, deck: list[int], rules: dict | None = None, first_player: int = 0
    ) -> None:
        """A fresh game from a deck order (first card is dealt first)."""
        if num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
        expected = sorted(cards_in_play(num_players))
        if sorted(int(c) for c in deck) != expected:
            raise ValueError(
                f"deck must hold each of the {len(expected)} cards in play for "
                f"{num_players} players exactly once"
            )
        if first_player not in range(num_players):
            raise ValueError(f"first_player must be in 0..{num_players - 1}, got {first_player!r}")
        self.num_players = num_players
        self.rules = parse_rules(rules)
        deck = [int(c) for c in deck]
        self.hands = [sorted(deck[DEAL * s : DEAL * (s + 1)]) for s in range(num_players)]
        self.deck = deck[DEAL * num_players :]
        self.rows: list[list[Row]] = [[] for _ in range(num_players)]
        self.discard: list[int] = []
        self.player = first_player
        self.turn = 0
        self.winners: tuple[int, ...] | None = None
        self.end_reason: str | None = None
        self._mask: np.ndarray | None = None
        # per seat, the observation encoder's block for that seat's rows (rebuilt on change)
        self.row_blocks: list = [None] * num_players
        self._draw()

    @classmethod
    def deal(
        cls,
        num_players: int,
        rng: np.random.Generator,
        rules: dict | None = None,
        first_player: int = 0,
    ) -> CastleRoomsState:
        deck = cards_in_play(num_players)
        rng.shuffle(deck)
        return cls(num_players, deck, rules, first_player)

    # --- rule helpers ----------------------------------------------------------------------
    def _draw(self) -> None:
        take = self.deck[:DRAW_PER_TURN]
        del self.deck[:DRAW_PER_TURN]
        hand = self.hands[self.player]
        hand.extend(take)
        hand.sort()

    def _new_row_helmets(self, seat: int) -> tuple[int, ...]:
        rows = self.rows[seat]
        if not rows or self.rules["later_rows"] == "free" and len(rows) > 1:
            return (UP, DOWN)
        if len(rows) == 1 or self.rules["later_rows"] == "opposite_first":
            return (1 - rows[0].helmet,)
        return (1 - rows[-1].helmet,)

    def _room_fits(self, card: int, row: Row) -> bool:
        return row.dragon < 0 and ENTRY[row.helmet][card] == row.exit

    def _may_start_row(self, seat: int, hand: list[int]) -> bool:
        rows = self.rows[seat]
        if len(rows) >= A.MAX_ROWS:
            return False
        mode = self.rules["new_row"]
        if mode == "any_time":
            return True
        if mode == "forced" and len(hand) <= HAND_LIMIT:
            return False
        open_rows = [r for r in rows if r.dragon < 0]
        return not any(
            KIND[c] == ROOM and ENTRY[r.helmet][c] == r.exit for c in hand for r in open_rows
        )

    # --- the mask --------------------------------------------------------------------------
    def legal_action_mask(self) -> np.ndarray:
        """Cached, read-only: True exactly for the moves ``apply_action`` accepts."""
        if self._mask is None:
            self._mask = self._compute_mask()
            self._mask.flags.writeable = False
        return self._mask

    def _compute_mask(self) -> np.ndarray:
        mask = np.zeros(A.NUM_ACTIONS, dtype=bool)
        if self.winners is not None:
            return mask
        seat, n = self.player, self.num_players
        hand = self.hands[seat]
        rows = self.rows[seat]
        may_start = None
        usable: list = []
        has_dragon = has_knight = False
        for slot, card in enumerate(hand):
            kind = KIND[card]
            ok = False
            if kind == ROOM:
                for r, row in enumerate(rows):
                    if row.dragon < 0 and ENTRY[row.helmet][card] == row.exit:
                        mask[A.PLAY_BASE + slot * A.MAX_ROWS + r] = True
                        ok = True
                if may_start is None:
                    may_start = self._may_start_row(seat, hand)
                if may_start:
                    for helmet in self._new_row_helmets(seat):
                        mask[A.NEW_ROW_BASE + 2 * slot + helmet] = True
                    ok = True
            elif kind == DRAGON:
                if not has_dragon:
                    has_dragon = True
                    for k in range(1, n):
                        for r, row in enumerate(self.rows[(seat + k) % n]):
                            if row.dragon < 0:
                                mask[A.DRAGON_BASE + (k - 1) * A.MAX_ROWS + r] = True
                                ok = True
                else:
                    ok = usable[_first_of(hand, DRAGON)]
            else:
                if not has_knight:
                    has_knight = True
                    for r, row in enumerate(rows):
                        if row.dragon >= 0:
                            mask[A.KNIGHT_BASE + r] = True
                            ok = True
                else:
                    ok = usable[_first_of(hand, KNIGHT)]
            usable.append(ok)
        if len(hand) > HAND_LIMIT:
            stuck_specials = sum(1 for c, ok in zip(hand, usable) if not ok and KIND[c] != ROOM)
            if stuck_specials >= 3 or not any(usable):
                for slot, ok in enumerate(usable):
                    if not ok:
                        mask[A.DISCARD_BASE + slot] = True
        else:
            mask[A.END_TURN] = True
        return mask

    def illegal_reason(self, action: int) -> str:
        move = self.actions.decode(action)
        hand = self.hands[self.player]
        rows = self.rows[self.player]
        slot: Any = getattr(move, "slot", None)  # (every move read below has a slot)
        if slot is not None and slot >= len(hand):
            return f"hand slot {slot} is empty (the hand holds {len(hand)} cards)"
        if isinstance(move, A.EndTurn):
            return f"a turn may not end with more than {HAND_LIMIT} cards in hand ({len(hand)})"
        if isinstance(move, (A.PlayRoom, A.NewRow)) and KIND[hand[slot]] != ROOM:
            return f"{card_name(hand[slot])} is not a Room"
        if isinstance(move, A.PlayRoom):
            if move.row >= len(rows):
                return f"you have no row {move.row}"
            row = rows[move.row]
            if row.dragon >= 0:
                return f"row {move.row} is blocked by a Dragon"
            return (
                f"its entry {SIDE_SHORT[ENTRY[row.helmet][hand[slot]]]} (helmet "
                f"{HELMET[row.helmet]}) does not match the row's exit {SIDE_SHORT[row.exit]}"
            )
        if isinstance(move, A.NewRow):
            if len(rows) >= A.MAX_ROWS:
                return f"the table holds at most {A.MAX_ROWS} rows per player"
            if move.helmet not in self._new_row_helmets(self.player):
                return "a new row must face the other way (helmet rule)"
            return f"a new row may not be started now (new_row={self.rules['new_row']!r})"
        if isinstance(move, A.Dragon):
            if DRAGON not in (KIND[c] for c in hand):
                return "you hold no Dragon"
            if move.opponent >= self.num_players:
                return f"there is no opponent +{move.opponent} with {self.num_players} players"
            target = self.rows[(self.player + move.opponent) % self.num_players]
            if move.row >= len(target):
                return f"that opponent has no row {move.row}"
            return "that row is already blocked"
        if isinstance(move, A.Knight):
            if KNIGHT not in (KIND[c] for c in hand):
                return "you hold no Knight"
            if move.row >= len(rows):
                return f"you have no row {move.row}"
            return f"row {move.row} is not blocked"
        if isinstance(move, A.Discard):
            if len(hand) <= HAND_LIMIT:
                return f"discarding is allowed only with more than {HAND_LIMIT} cards in hand"
            return (
                "only unusable cards may be discarded, and only when 3 or more Dragons/"
                "Knights are unusable or no card in hand can be used"
            )
        return "it is not legal in the current position"

    # --- applying moves --------------------------------------------------------------------
    def apply_legal(self, action: int) -> None:
        self._mask = None
        seat = self.player
        hand = self.hands[seat]
        if action < A.NEW_ROW_BASE:
            slot, r = divmod(action - A.PLAY_BASE, A.MAX_ROWS)
            card = hand.pop(slot)
            row = self.rows[seat][r]
            self.row_blocks[seat] = None
            row.cards.append(card)
            row.exit = EXIT[row.helmet][card]
            if len(row.cards) >= WIN_LENGTH:
                self.winners, self.end_reason = (seat,), "row"
        elif action < A.DRAGON_BASE:
            slot, helmet = divmod(action - A.NEW_ROW_BASE, 2)
            self.rows[seat].append(Row([hand.pop(slot)], helmet))
            self.row_blocks[seat] = None
        elif action < A.KNIGHT_BASE:
            k, r = divmod(action - A.DRAGON_BASE, A.MAX_ROWS)
            card = hand.pop(_first_of(hand, DRAGON))
            target = (seat + k + 1) % self.num_players
            self.rows[target][r].dragon = card
            self.row_blocks[target] = None
        elif action < A.DISCARD_BASE:
            row = self.rows[seat][action - A.KNIGHT_BASE]
            knight = hand.pop(_first_of(hand, KNIGHT))
            self.discard += [row.dragon, knight]
            row.dragon = -1
            self.row_blocks[seat] = None
        elif action < A.END_TURN:
            self.discard.append(hand.pop(action - A.DISCARD_BASE))
        else:
            if not self.deck:
                self._finish_deck_out()
                return
            self.player = (seat + 1) % self.num_players
            self.turn += 1
            self._draw()

    def _finish_deck_out(self) -> None:
        keys = [self.score(s) for s in range(self.num_players)]
        best = max(keys)
        self.winners = tuple(s for s in range(self.num_players) if keys[s] == best)
        self.end_reason = "deck"

    def score(self, seat: int) -> tuple[int, ...]:
        """Row lengths, longest first (compared lexicographically at deck-out)."""
        lengths = sorted((len(r.cards) for r in self.rows[seat]), reverse=True)
        return tuple(lengths) + (0,) * (A.MAX_ROWS - len(lengths))

    def is_terminal(self) -> bool:
        return self.winners is not None

    def returns(self) -> np.ndarray:
        out = np.zeros(self.num_players, dtype=np.float32)
        if self.winners is not None:
            out[:] = -1.0
            out[list(self.winners)] = 1.0
        return out

    def winning_seats(self) -> list[int]:
        """``winners`` as a list (a shared win lists every sharer), ``[]`` while the game is on."""
        return [] if self.winners is None else sorted(self.winners)

    @property
    def current_player(self) -> int:
        return -1 if self.winners is not None else self.player

    # --- naming moves ----------------------------------------------------------------------
    def describe_action(self, action: Any) -> str:
        move = self.actions.decode(action)
        hand = self.hands[self.player] if self.winners is None else []
        slot = getattr(move, "slot", None)
        card = card_name(hand[slot]) if slot is not None and slot < len(hand) else None
        if isinstance(move, A.PlayRoom):
            rows = self.rows[self.player]
            where = (
                f"row {move.row} ({_rooms(len(rows[move.row].cards))})"
                if move.row < len(rows)
                else f"row {move.row}"
            )
            return f"play {card or f'slot {move.slot}'} on {where}"
        if isinstance(move, A.NewRow):
            return (
                f"start a new row with {card or f'slot {move.slot}'}, helmet {HELMET[move.helmet]}"
            )
        if isinstance(move, A.Dragon):
            target = (self.player + move.opponent) % self.num_players
            return f"Dragon on player_{target}'s row {move.row}"
        if isinstance(move, A.Knight):
            return f"Knight frees your row {move.row}"
        if isinstance(move, A.Discard):
            return f"discard {card or f'slot {move.slot}'}"
        return "end turn"

    # --- copies and serialization ----------------------------------------------------------
    def determinize(self, player: int, rng: np.random.Generator) -> CastleRoomsState:
        """The deck order and the other players' hands are hidden (their sizes, every row and
        the discard pile are public): those cards are re-dealt. The unseen cards are sorted
        before the shuffle, so the sample depends only on what ``player`` has seen."""
        other = self.clone()
        others = [s for s in range(self.num_players) if s != player]
        pool = sorted(list(self.deck) + [c for s in others for c in self.hands[s]])
        pool = [pool[i] for i in rng.permutation(len(pool))]
        k = 0
        for s in others:
            n = len(self.hands[s])
            other.hands[s] = sorted(pool[k : k + n])
            k += n
        other.deck = pool[k:]
        other._mask = None
        return other

    def clone(self) -> CastleRoomsState:
        new = CastleRoomsState.__new__(CastleRoomsState)
        new.num_players = self.num_players
        new.rules = self.rules
        new.hands = [list(h) for h in self.hands]
        new.deck = list(self.deck)
        new.rows = [[r.copy() for r in rows] for rows in self.rows]
        new.discard = list(self.discard)
        new.player, new.turn = self.player, self.turn
        new.winners, new.end_reason = self.winners, self.end_reason
        new._mask = self._mask
        new.row_blocks = list(self.row_blocks)  # blocks are never written in place
        return new

    def to_dict(self) -> dict:
        return {
            "game": "castle-rooms",
            "num_players": self.num_players,
            "rules": dict(self.rules),
            "deck": list(self.deck),
            "hands": [list(h) for h in self.hands],
            "rows": [
                [
                    {
                        "cards": list(r.cards),
                        "helmet": HELMET[r.helmet],
                        "dragon": None if r.dragon < 0 else r.dragon,
                    }
                    for r in rows
                ]
                for rows in self.rows
            ],
            "discard": list(self.discard),
            "player": self.player,
            "turn": self.turn,
            "winners": None if self.winners is None else list(self.winners),
            "end_reason": self.end_reason,
        }

    @classmethod
    def from_dict(cls, data: dict) -> CastleRoomsState:
        try:
            return _from_dict(cls, data)
        except InvalidStateError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
            raise InvalidStateError(f"not a Castle Rooms state: {err!r}") from None


def _first_of(hand: list[int], kind: int) -> int:
    for i, c in enumerate(hand):
        if KIND[c] == kind:
            return i
    raise AssertionError("no card of that kind in hand")


def _card_list(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in value
    ):
        raise InvalidStateError(f"{what} must be a list of card ids")
    return list(value)


def _from_dict(cls: type[CastleRoomsState], data: dict) -> CastleRoomsState:
    def bad(why: str) -> NoReturn:
        raise InvalidStateError(f"corrupt Castle Rooms state: {why}")

    reader = StateReader("Castle Rooms")
    reader.dict(data, "the state", required=_SAVED_KEYS)
    if data["game"] != "castle-rooms":
        bad("not a castle-rooms dict")
    n = data["num_players"]
    if n not in (2, 3, 4) or isinstance(n, bool):
        bad(f"num_players {n!r}")
    try:
        rules = parse_rules(reader.dict(data["rules"], "rules", required=RULE_OPTIONS))
    except ValueError as err:
        bad(str(err))
    state = cls.__new__(cls)
    state.num_players, state.rules = n, rules
    state.deck = _card_list(reader.list(data["deck"], "deck", max_length=NUM_CARDS), "deck")
    hands = data["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        bad("hands must list one hand per player")
    state.hands = [sorted(_card_list(h, "a hand")) for h in hands]
    rows_data = data["rows"]
    if not isinstance(rows_data, list) or len(rows_data) != n:
        bad("rows must list one list of rows per player")
    seen = list(state.deck) + [c for h in state.hands for c in h]
    state.rows = []
    for seat, rows in enumerate(rows_data):
        if not isinstance(rows, list) or len(rows) > A.MAX_ROWS:
            bad(f"player {seat} rows must be a list of at most {A.MAX_ROWS}")
        built = []
        for r, rd in enumerate(rows):
            reader.dict(rd, f"rows[{seat}][{r}]", required=("cards", "helmet", "dragon"))
            cards = _card_list(rd["cards"], "row cards")
            if not 1 <= len(cards) <= WIN_LENGTH or any(not 0 <= c < FIRST_DRAGON for c in cards):
                bad(f"player {seat} row {r} must hold 1..{WIN_LENGTH} Rooms")
            if rd["helmet"] not in HELMET:
                bad(f"player {seat} row {r} helmet {rd['helmet']!r}")
            helmet = HELMET.index(rd["helmet"])
            for a, b in zip(cards, cards[1:]):
                if EXIT[helmet][a] != ENTRY[helmet][b]:
                    bad(f"player {seat} row {r}: {card_name(b)} does not match {card_name(a)}")
            dragon = rd["dragon"]
            if dragon is not None and (not isinstance(dragon, int) or KIND[dragon] != DRAGON):
                bad(f"player {seat} row {r} blocker {dragon!r} is not a Dragon")
            seen += cards + ([dragon] if dragon is not None else [])
            built.append(Row(cards, helmet, -1 if dragon is None else dragon))
        state.rows.append(built)
        for r in range(1, len(built)):
            if built[r].helmet == built[r - 1].helmet and (
                r == 1 or rules["later_rows"] == "alternate"
            ):
                bad(f"player {seat} row {r} faces the same way as row {r - 1}")
            if rules["later_rows"] == "opposite_first" and built[r].helmet == built[0].helmet:
                bad(f"player {seat} row {r} faces the same way as row 0")
    state.discard = _card_list(data["discard"], "discard")
    seen += state.discard
    if any(not 0 <= c < NUM_CARDS for c in seen):
        bad("card id out of range")
    expected = sorted(cards_in_play(n))
    if sorted(seen) != expected:
        missing = sorted(set(expected) - set(seen))
        extra = sorted(set(seen) - set(expected)) or sorted(
            c for c in set(seen) if seen.count(c) > 1
        )
        bad(f"cards must be conserved: missing {missing}, duplicated/foreign {extra}")
    state.player = reader.int(data["player"], "player", 0, n - 1)
    state.turn = reader.int(data["turn"], "turn", 0, MAX_SAVED_TURN)
    winners, reason = data["winners"], data["end_reason"]
    if (winners is None) != (reason is None) or reason not in (None, "row", "deck"):
        bad("winners and end_reason must be both set or both null")
    long_rows = [s for s in range(n) for r in state.rows[s] if len(r.cards) >= WIN_LENGTH]
    if winners is None:
        if long_rows:
            bad("a row of 10 Rooms means the game is over")
        for s, h in enumerate(state.hands):
            if len(h) > (A.HAND_SLOTS if s == state.player else HAND_LIMIT):
                bad(f"player {s} holds {len(h)} cards")
        state.winners = state.end_reason = None
    else:
        if not isinstance(winners, list) or not winners or any(w not in range(n) for w in winners):
            bad(f"winners {winners!r}")
        state.winners, state.end_reason = tuple(winners), reason
        if reason == "row" and (len(long_rows) != 1 or state.winners != (long_rows[0],)):
            bad("a row win needs exactly one 10-Room row, its owner the winner")
        if reason == "deck":
            scores = [state.score(s) for s in range(n)]
            best = tuple(s for s in range(n) if scores[s] == max(scores))
            if state.deck or long_rows or state.winners != best:
                bad("a deck-out end needs an empty deck and the longest rows as winners")
    state._mask = None
    state.row_blocks = [None] * n
    reader.playable(state)
    return state


__all__ = ["CastleRoomsState", "DEFAULT_RULES", "RULE_OPTIONS", "Row", "WIN_LENGTH", "parse_rules"]


def _rooms(count: int) -> str:
    return f"{count} room" if count == 1 else f"{count} rooms"
