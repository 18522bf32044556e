"""A perfect-information solver for Castle Siege: is this deal winnable at all?

The solver sees the whole deck order (as Yan et al.'s "thoughtful" Klondike solver did) and
searches the game tree depth first over the env's own rules core (``rules.State``: it
calls ``legal_action_mask``, ``clone`` and ``_apply`` on mask-legal actions only, so there
is no second copy of the rules). It answers one of three verdicts:

- ``"winnable"``, with a winning action line (ids of the env's ``Discrete(1676)`` layout);
  the line replays in ``gymnasium.make("castle_envs/CastleSiege-v0", difficulty=...)`` after
  ``reset(options={"deck": deck})`` to a win (``replay_wins`` checks it);
- ``"unwinnable"``: the whole tree was searched (up to the sound reductions below) and no
  line wins;
- ``"unknown"``: the node or time budget ran out first.

**Soundness.** A deal is never called unwinnable when a win exists. Every reduction the
search makes removes only positions that provably cannot win, or positions already shown
lost:

1. *Transposition table of lost positions.* A position's future depends only on the deck
   order, the hand, the defender columns, which castles are captured, the discard pile,
   the pending decision and whether Regroup was used this turn (the castle cards and the
   rules options are fixed per deal). ``state_key`` packs exactly these into bytes (the
   full bytes, not a hash, so no collision can merge two positions). The turn counter, the
   event counts and which deck cards were recycled are only statistics or what the player
   remembers; no rule reads them. A position is stored only after *all* its moves were
   searched to a loss, so a hit means "lost" with certainty. There are no cycles to worry
   about: within a turn every action spends a hand card, a once-per-turn Regroup or a
   pending choice, and every turn lowers deck + hand (RULES.md), so the tree is finite.
2. *Supply bound.* Let Φ = cards in the deck + cards in the hand. No action raises Φ:
   drawing moves cards from deck to hand, an attack of c cards lowers it by c and its
   Precision Strike returns at most one card, Regroup and the end-of-turn deal lower it.
   A capture (exact or by Royal Assault) plays at least one card and returns none, so
   it lowers Φ by at least one. Hence a position with Φ < (castles standing) cannot win.
   The bounds are applied in the battle phase only: while a Precision Strike's choice is
   pending, its returned card is not yet counted in Φ (an early version pruned there and
   the comparison with plain exhaustive search caught it).
3. *Last-turn bound.* With an empty deck and no defender left on the table, no Precision
   Strike can refill the deck this turn (it needs a defender), no Flush Siege can draw (it
   needs a defender too), and Regroup draws nothing; so ending the turn loses
   (interpretation 9) and every remaining play is an exact capture from the cards in hand.
   Each capture spends at least one card, so fewer hand cards than castles standing means
   the position is lost. (With defenders left, recycled cards can keep the game going, so
   no such bound is applied there.)

4. *A relaxed game* (``relaxed_winnable``, memoized) over the defender counts of the
   standing castles, Φ and the plays left this turn; every real line maps to a relaxed one,
   so a relaxed loss is a real loss. Plays per turn are at most the cards in hand (every play
   spends a card net: a Flush Siege spends two and draws one; a Royal Assault spends three, its
   suits differ so it never draws; Regroup needs every standing column empty, after which only
   captures remain), hence at most one Royal Assault a turn. Every attack counts as a free
   one-card Precision Strike (real cost ≥ 0); a capture costs one supply card, a Royal Assault
   three plus a free kill anywhere; the end-of-turn deal adds a defender per standing column and
   costs Φ one card per standing castle, and the turn is lost when Φ ≤ castles standing before
   the deal (the deck, at most Φ, would run dry). This turn's Royal Assault needs J, Q, K of
   three suits among the hand and the deck's top two cards (at most two Flush Siege draws
   leave the three cards it needs; a deck under two cards counts as "in reach", since Precision
   Strike could refill it); later turns may always have one. No rank or suit condition is
   kept, so the relaxation can only under-prune.

**The rules option ``victory``.** The search plays the state's own rules, so under
``victory="deck_left"`` (the fourth castle must fall while the deck holds a card; an empty
deck with a castle standing loses at once) it finds only lines that win under that rule, and
the table stores positions lost under it. Bounds 2-4 are argued for the default rules
(``"any_time"``) and stay sound under the strict rule, which only makes winning harder: a line
that wins under ``"deck_left"`` never has an empty deck while a castle stands, and on such a
line the two rules agree move for move, so it wins under ``"any_time"`` too. Hence a position
with no winning line under the default has none under the strict rule. (The bounds could be
tightened for the strict rule, e.g. Φ ≥ standing + 1 in bound 2; they are not: sound is
enough, and one set of bounds serves both.)

No dominance or symmetry reduction between *different* moves is made: we found none that
is sound in this game. Over-playing cards at a defender changes how many cards the next
turn draws and so which deck cards become defenders; the four castles differ by rank and
by their place in the left-to-right deal; Precision Strike's recycled card is drawn again
later, so every discard-pile card is a genuinely different choice. (Move *ordering* is
free to be heuristic: it changes how fast a win is found, never a verdict.) Symmetric move
sequences within a turn that reach the same position are caught by the table instead.

**Move ordering.** Captures first, then Royal Assaults, then exact hits (Precision
Strikes, fewer cards first, Flush Sieges first), then the other attacks by overkill
(sum − rank), preferring defenders of nearly-cleared columns; then Regroup; *end battle
phase* last. Royal Assault's castle choice tries the castle with the most defenders first;
Precision Strike's recycle choice tries cards whose rank equals a standing castle's rank,
then Kings, Queens, Jacks, then the rest high to low.

**Probes, then search.** The first ``probe_share`` (default half) of the node budget goes to
randomized greedy playouts (one node per step): the search's own move order with noise, and,
when a ``probe_policy`` is given (the command line passes the heuristic agent of
``castle_envs.agents.castle_siege``), every other playout follows that policy with the same noise. They
can only find wins. The rest of the budget goes to the depth-first search, which alone can
prove a deal unwinnable (it starts afresh; the probes share no table with it).

Budgets are in nodes (deterministic: the same deal and budget give the same verdict on any
machine) and/or seconds (machine-dependent). ``Solver(prune=False, table=False,
order=False)`` is the plain exhaustive search the tests check the reductions against.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np

from .actions import HAND_SLOTS, NUM_SUBSETS, RECYCLE_BASE, ROYAL_BASE
from .cards import JACK, KING, NUM_CARDS, QUEEN, RANK, RANKS, SUIT_OF
from .rules import BATTLE, PRECISION, ROYAL, State

WINNABLE, UNWINNABLE, UNKNOWN = "winnable", "unwinnable", "unknown"

_SUBSET_SLOTS = [tuple(i for i in range(HAND_SLOTS) if (s + 1) >> i & 1)
                 for s in range(NUM_SUBSETS)]
_SUBSET_SIZE = np.array([len(s) for s in _SUBSET_SLOTS], dtype=np.int16)
_TARGET_OF = np.arange(RECYCLE_BASE) % NUM_CARDS
_SUBSET_OF = np.arange(RECYCLE_BASE) // NUM_CARDS
# recycle preference: Kings, Queens, Jacks, then high to low (castle ranks are added per node)
_RECYCLE_BASE_SCORE = np.array([-RANKS[c] - (20 if RANKS[c] >= JACK else 0)
                                for c in range(NUM_CARDS)], dtype=np.int32)


def state_key(state: State) -> bytes:
    """Everything the rules read of a position, as bytes (see the module docstring, 1)."""
    head = state.deck_head
    return b"".join((
        state.deck[head:].tobytes(), state.deck[:head].tobytes(),
        state.hand.tobytes(), state.columns.tobytes(), state.captured.tobytes(),
        np.packbits(state.discard).tobytes(),
        bytes((state.phase, state.regroup_used, state.outcome & 0xFF))))


def keyed_plan(state: State, line) -> list[tuple[bytes, int]]:
    """(``state_key`` of the position, action) for each move of ``line`` played from
    ``state``, the last move first: a plan to pop a move from while the game follows it."""
    replay, plan = state.clone(), []
    for action in line:
        plan.append((state_key(replay), int(action)))
        replay.apply_action(int(action))
    return plan[::-1]


class _OutOfBudget(Exception):
    pass


@dataclass
class Result:
    verdict: str
    line: list = field(default_factory=list)   # winning action ids, first move first
    nodes: int = 0
    seconds: float = 0.0
    table_size: int = 0
    pruned: int = 0                            # positions cut by bounds 2-3

    def to_dict(self) -> dict:
        return asdict(self)


def _subset_table(hand: tuple) -> tuple:
    """Per non-empty subset of the (sorted) hand slots: sum, Flush Siege flag, royal flag."""
    sums = np.zeros(NUM_SUBSETS, dtype=np.int16)
    flush = np.zeros(NUM_SUBSETS, dtype=bool)
    royal = np.zeros(NUM_SUBSETS, dtype=bool)
    n = len(hand)
    for s, slots in enumerate(_SUBSET_SLOTS):
        if slots[-1] >= n:
            continue
        cards = [hand[i] for i in slots]
        sums[s] = sum(RANKS[c] for c in cards)
        flush[s] = len(cards) >= 2 and len({SUIT_OF[c] for c in cards}) == 1
        if len(cards) >= 3:
            j = {SUIT_OF[c] for c in cards if RANKS[c] == JACK}
            q = {SUIT_OF[c] for c in cards if RANKS[c] == QUEEN}
            k = {SUIT_OF[c] for c in cards if RANKS[c] == KING}
            royal[s] = any(a != b and b != c and a != c for a in j for b in q for c in k)
    return sums, flush, royal


class Solver:
    """Depth-first search for a winning line; see the module docstring."""

    def __init__(self, max_nodes: int | None = 100_000, max_seconds: float | None = None,
                 prune: bool = True, table: bool = True, order: bool = True,
                 probe_share: float = 0.5, probe_noise: float = 0.15, seed: int = 0,
                 probe_policy=None):
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.prune = prune
        self.table = table
        self.order = order
        self.probe_share = probe_share if order else 0.0
        self.probe_noise = probe_noise
        self.seed = seed
        self.probe_policy = probe_policy
        self._subsets: dict = {}

    # --- public ---------------------------------------------------------------------------
    def solve(self, state: State) -> Result:
        self._lost: set = set()
        self._nodes = 0
        self._pruned = 0
        self._line: list = []
        self._castle = np.zeros(NUM_CARDS, dtype=bool)
        self._castle[state.castles] = True
        start = time.perf_counter()
        self._deadline = None if self.max_seconds is None else start + self.max_seconds
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            won = self._probe(state)
            won = won or self._search(state.clone())
            verdict = WINNABLE if won else UNWINNABLE
        except _OutOfBudget:
            verdict = UNKNOWN
        finally:
            sys.setrecursionlimit(limit)
        line = [int(a) for a in reversed(self._line)] if verdict == WINNABLE else []
        return Result(verdict, line, self._nodes, time.perf_counter() - start,
                      len(self._lost), self._pruned)

    # --- search ---------------------------------------------------------------------------
    def _search(self, s: State) -> bool:
        if s.outcome:
            return s.outcome == 1
        if self.table:
            key = state_key(s)
            if key in self._lost:
                return False
        self._nodes += 1
        if self.max_nodes is not None and self._nodes > self.max_nodes:
            raise _OutOfBudget
        if self._deadline is not None and not self._nodes & 255 \
                and time.perf_counter() > self._deadline:
            raise _OutOfBudget
        if self.prune and self._hopeless(s):
            self._pruned += 1
        else:
            for action in self._moves(s):
                child = s.clone()
                child._apply(int(action))
                if self._search(child):
                    self._line.append(action)
                    return True
        if self.table:
            self._lost.add(key)
        return False

    def _probe(self, state: State) -> bool:
        """Randomized greedy playouts (the search's move order, each step taking the next
        move with probability ``probe_noise``; or, given ``probe_policy(state, rng) ->
        action``, e.g. the heuristic agent, that policy with the same noise on every other
        probe) until ``probe_share`` of the node budget is spent, one node per step. They
        only ever find wins, so they cannot make a verdict unsound; they find wins in deals
        where depth-first search would first exhaust a hopeless late subtree."""
        if not self.probe_share:
            return False
        rng = np.random.default_rng(self.seed)
        budget = int(self.max_nodes * self.probe_share) if self.max_nodes is not None else None
        stop = None
        if self.max_seconds is not None:
            stop = time.perf_counter() + self.max_seconds * self.probe_share

        def spent() -> bool:
            if budget is not None and self._nodes >= budget:
                return True
            return stop is not None and not self._nodes & 63 and time.perf_counter() > stop

        if budget is None and stop is None:
            return False
        probes = 0
        while not spent():
            # with a policy, every other probe follows it (taking the search's own order
            # with probability ``probe_noise`` per step); the first follows it exactly
            guided = self.probe_policy is not None and probes % 2 == 0
            noise_free = guided and probes == 0
            probes += 1
            s, line = state.clone(), []
            while not s.outcome and not spent():
                self._nodes += 1
                if self.prune and self._hopeless(s):
                    break
                if guided and (noise_free or rng.random() >= self.probe_noise):
                    action = int(self.probe_policy(s, rng))
                else:
                    moves = self._moves(s)
                    i = 0
                    while i + 1 < len(moves) and rng.random() < self.probe_noise:
                        i += 1
                    action = int(moves[i])
                if not s.legal_action_mask()[action]:
                    raise ValueError(f"probe_policy chose illegal action {action}")
                line.append(action)
                s._apply(action)
            if s.outcome == 1:
                self._line = line[::-1]
                return True
        return False

    def _hopeless(self, s: State) -> bool:
        if s.phase != BATTLE:
            # a pending Precision Strike is about to return a card to the deck and a pending
            # Royal Assault takes a castle for free: the bounds count neither
            return False
        standing = 4 - int(s.captured.sum())
        if s.deck_size + s.hand_size < standing:                      # bound 2
            return True
        if s.deck_size == 0 and not s.col_len.any():                  # bound 3
            return s.hand_size < standing
        standing_cols = tuple(sorted(s.col_len[~s.captured].tolist(), reverse=True))
        return not relaxed_winnable(standing_cols, s.deck_size + s.hand_size,   # bound 4
                                    s.hand_size, not s.regroup_used, _royal_in_reach(s))

    def _moves(self, s: State) -> np.ndarray:
        legal = np.flatnonzero(s.legal_action_mask())
        if not self.order or len(legal) <= 1:
            return legal
        if s.phase == PRECISION:
            cards = legal - RECYCLE_BASE
            standing = RANK[s.castles[~s.captured]]
            score = _RECYCLE_BASE_SCORE[cards] - 100 * np.isin(RANK[cards], standing)
            return legal[np.argsort(score, kind="stable")]
        if s.phase == ROYAL:
            castles = legal - ROYAL_BASE
            score = -(s.col_len[castles].astype(np.int32) * 20 + RANK[s.castles[castles]])
            return legal[np.argsort(score, kind="stable")]
        if s.phase != BATTLE:
            return legal
        hand = tuple(s.hand[:s.hand_size].tolist())
        table = self._subsets.get(hand)
        if table is None:
            if len(self._subsets) > 50_000:
                self._subsets.clear()
            table = self._subsets[hand] = _subset_table(hand)
        sums, flush, royal = table
        plays = legal[legal < RECYCLE_BASE]
        sub, tgt = _SUBSET_OF[plays], _TARGET_OF[plays]
        total = sums[sub].astype(np.int32)
        over = total - RANK[tgt]
        size = _SUBSET_SIZE[sub].astype(np.int32)
        capture = self._castle[tgt]
        # defenders of nearly cleared columns first: clearing a column opens a capture
        col_of = np.full(NUM_CARDS + 1, 99, dtype=np.int32)
        for c in range(4):
            n = int(s.col_len[c])
            col_of[s.columns[c, :n]] = n
        crowd = np.minimum(col_of[tgt], 20)
        score = np.where(capture, 0 + size,
                np.where(royal[sub], 1000 + size * 10,
                np.where(over == 0, 2000 + size * 100 - flush[sub] * 50 + crowd,
                         3000 + over * 10 + size * 30 - flush[sub] * 200 + crowd)))
        ordered = plays[np.argsort(score, kind="stable")]
        rest = legal[legal >= RECYCLE_BASE]   # Regroup before end battle phase (ids do so)
        return np.concatenate((ordered, rest))


def _royal_in_reach(s: State) -> bool:
    """Could a Royal Assault be played this turn? Its J, Q, K must be in hand or be among
    the cards a Flush Siege can draw before it: with at most 5 cards, at most two Flush
    Sieges (2 cards out, 1 in) leave the 3 cards it needs, so the deck's top two cards.
    A deck shorter than two could be refilled by Precision Strike, so it counts as "yes"."""
    if s.deck_size < 2:
        return True
    cards = s.hand[:s.hand_size].tolist() + [int(s.deck[s.deck_head]),
                                             int(s.deck[(s.deck_head + 1) % NUM_CARDS])]
    j = {SUIT_OF[c] for c in cards if RANKS[c] == JACK}
    q = {SUIT_OF[c] for c in cards if RANKS[c] == QUEEN}
    k = {SUIT_OF[c] for c in cards if RANKS[c] == KING}
    return any(a != b and b != c and a != c for a in j for b in q for c in k)


# --- deals, replay, statistics --------------------------------------------------------------
def deal_deck(seed: int) -> list[int]:
    """The deck (52 ids, top first) that ``env.reset(seed=seed)`` deals: the env passes its
    ``np_random`` (``np.random.default_rng(seed)``) to ``State.new_game``, whose first draw
    is ``permutation(52)``. ``tests/castle_siege/test_solver.py`` checks the two agree."""
    return [int(c) for c in np.random.default_rng(seed).permutation(NUM_CARDS)]


def solve_deck(deck, difficulty: str, max_nodes: int | None = 100_000,
               max_seconds: float | None = None, probe_policy=None, **rules) -> Result:
    state = State.new_game(difficulty=difficulty, deck=deck, **rules)
    return Solver(max_nodes=max_nodes, max_seconds=max_seconds,
                  probe_policy=probe_policy).solve(state)


def replay_wins(deck, difficulty: str, line, **rules) -> bool:
    """Play ``line`` in the public Gymnasium env on ``deck``; True if it ends in a win."""
    import gymnasium

    import castle_envs  # noqa: F401  (registers the ids)

    # an illegal move in a line is a bug worth hearing about, not a lost game
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty=difficulty,
                         illegal_action="raise", **rules)
    env.reset(options={"deck": list(deck)})
    won = False
    for i, action in enumerate(line):
        _, reward, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            won = bool(info["won"]) and i == len(line) - 1
            break
    env.close()
    return won


def line_events(deck, difficulty: str, line, **rules) -> dict:
    """Event counts of a line replayed on the rules core (Royal Assaults, Precision Strikes,
    Flush Sieges, ...), its number of actions and ``deck_at_end``, the cards left in the
    deck when it ends (0 for a win that makes the fourth capture with an empty deck, which
    only ``victory="any_time"`` allows)."""
    state = State.new_game(difficulty=difficulty, deck=deck, **rules)
    for action in line:
        state.apply_action(int(action))
    counts = state.event_counts()
    counts["actions"] = len(line)
    counts["deck_at_end"] = int(state.deck_size)
    return counts


__all__ = ["Solver", "Result", "state_key", "deal_deck", "solve_deck", "replay_wins",
           "line_events", "WINNABLE", "UNWINNABLE", "UNKNOWN"]


# --- bound 4: a relaxed game over (column lengths, supply) ----------------------------------
@lru_cache(maxsize=1_000_000)
def relaxed_winnable(columns: tuple, phi: int, plays: int, regroup: bool,
                     royal: bool) -> bool:
    """Can the relaxed game still be won? ``columns``: defender counts of the standing
    castles (sorted, longest first); ``phi``: deck + hand; ``plays``: plays left this turn;
    ``regroup``: Regroup still unused this turn; ``royal``: a Royal Assault is possible this
    turn. The relaxation drops every rank and suit condition, lets every attack be a
    one-card Precision Strike (so attacks cost no supply), allows a Royal Assault in every
    later turn, and keeps only what no line can escape (module docstring, bound 4)."""
    for r in ((1, 0) if royal and plays >= 3 and any(columns) else (0,)):
        rest = columns[1:] if r else columns          # Royal Assault takes the longest
        left = plays - 2 * r   # 3 cards, but its attack also defeats a defender somewhere
        need_phi = 3 * r + len(rest)
        if not rest:
            if phi >= 3 * r:
                return True
            continue
        if phi >= need_phi and (sum(rest) + len(rest) <= left
                                or (regroup and sum(rest) <= left)):
            return True
        # not won this turn: kill and capture, then survive the end-of-turn deal
        for captured in _capture_sets(len(rest)):
            cost = sum(rest[i] + 1 for i in captured)
            if cost > left or phi < 3 * r + len(captured):
                continue
            others = [rest[i] for i in range(len(rest)) if i not in captured]
            after = phi - 3 * r - len(captured)
            if not others or after <= len(others):
                continue                          # won (handled above) or the deck runs dry
            for cols in _spread(tuple(others), left - cost):
                nxt = after - len(others)
                if relaxed_winnable(tuple(sorted((c + 1 for c in cols), reverse=True)), nxt,
                                    min(HAND_SLOTS, nxt), True, True):
                    return True
    return False


@lru_cache(maxsize=None)
def _capture_sets(n: int) -> tuple:
    return tuple(tuple(i for i in range(n) if m >> i & 1) for m in range(1 << n))


@lru_cache(maxsize=100_000)
def _spread(columns: tuple, kills: int) -> tuple:
    """Every result of ``kills`` kills (or as many as there are defenders) over ``columns``,
    as sorted multisets. Fewer kills are never better in the relaxed game (it is monotone:
    a line that wins against more defenders wins against fewer), so they are left out."""
    kills = min(kills, sum(columns))
    if not columns:
        return ((),)
    out = set()
    head, tail = columns[0], columns[1:]
    for k in range(max(0, kills - sum(tail)), min(head, kills) + 1):
        for rest in _spread(tail, kills - k):
            out.add(tuple(sorted((head - k,) + rest, reverse=True)))
    return tuple(out)
