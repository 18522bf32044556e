"""The Python depth-first solver of Castle Siege (``Solver``): the independent, readable
reference that the compiled solver (``castle_envs.agents.solvers.castle_siege_compiled.CompiledSolver``,
the package's only solver) is tested against (``tests/castle_siege/test_fast_solver.py``).
It was ``agents/solvers/castle_siege.py`` until the solver was written once; that module
keeps the shared contract (verdicts, ``Result``, ``state_key``, ``deal_deck``, ...) and the
description of the search, its reductions and their soundness, which this code follows
line by line. ``CompiledSolver(reference=True)`` searches move for move as this one does.
"""

from __future__ import annotations

import sys
import time
from functools import cache, lru_cache

import numpy as np
from castle_envs.agents.solvers.castle_siege import (  # noqa: F401  # noqa: F401
    UNKNOWN,
    UNWINNABLE,
    WINNABLE,
    Result,
    deal_deck,
    state_key,
)

from castle_envs.castle_siege.actions import HAND_SLOTS, NUM_SUBSETS, RECYCLE_BASE, ROYAL_BASE
from castle_envs.castle_siege.cards import JACK, KING, NUM_CARDS, QUEEN, RANK, RANKS, SUIT_OF
from castle_envs.castle_siege.rules import BATTLE, PRECISION, ROYAL, State

_SUBSET_SLOTS = [
    tuple(i for i in range(HAND_SLOTS) if (s + 1) >> i & 1) for s in range(NUM_SUBSETS)
]
_SUBSET_SIZE = np.array([len(s) for s in _SUBSET_SLOTS], dtype=np.int16)
_TARGET_OF = np.arange(RECYCLE_BASE) % NUM_CARDS
_SUBSET_OF = np.arange(RECYCLE_BASE) // NUM_CARDS
# recycle preference: Kings, Queens, Jacks, then high to low (castle ranks are added per node)
_RECYCLE_BASE_SCORE = np.array(
    [-RANKS[c] - (20 if RANKS[c] >= JACK else 0) for c in range(NUM_CARDS)], dtype=np.int32
)


class _OutOfBudget(Exception):
    pass


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

    def __init__(
        self,
        max_nodes: int | None = 100_000,
        max_seconds: float | None = None,
        prune: bool = True,
        table: bool = True,
        order: bool = True,
        probe_share: float = 0.5,
        probe_noise: float = 0.15,
        seed: int = 0,
        probe_policy=None,
    ):
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
        return Result(
            verdict, line, self._nodes, time.perf_counter() - start, len(self._lost), self._pruned
        )

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
        if (
            self._deadline is not None
            and not self._nodes & 255
            and time.perf_counter() > self._deadline
        ):
            raise _OutOfBudget
        if self.prune and self._hopeless(s):
            self._pruned += 1
        else:
            for action in self._moves(s):
                child = s.clone()
                child.apply_legal(int(action))
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
                s.apply_legal(action)
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
        if s.deck_size + s.hand_size < standing:  # bound 2
            return True
        if s.deck_size == 0 and not s.col_len.any():  # bound 3
            return s.hand_size < standing
        standing_cols = tuple(sorted(s.col_len[~s.captured].tolist(), reverse=True))
        return not relaxed_winnable(
            standing_cols,
            s.deck_size + s.hand_size,  # bound 4
            s.hand_size,
            not s.regroup_used,
            _royal_in_reach(s),
        )

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
        hand = tuple(s.hand[: s.hand_size].tolist())
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
        score = np.where(
            capture,
            0 + size,
            np.where(
                royal[sub],
                1000 + size * 10,
                np.where(
                    over == 0,
                    2000 + size * 100 - flush[sub] * 50 + crowd,
                    3000 + over * 10 + size * 30 - flush[sub] * 200 + crowd,
                ),
            ),
        )
        ordered = plays[np.argsort(score, kind="stable")]
        rest = legal[legal >= RECYCLE_BASE]  # Regroup before end battle phase (ids do so)
        return np.concatenate((ordered, rest))


def _royal_in_reach(s: State) -> bool:
    """Could a Royal Assault be played this turn? Its J, Q, K must be in hand or be among
    the cards a Flush Siege can draw before it: with at most 5 cards, at most two Flush
    Sieges (2 cards out, 1 in) leave the 3 cards it needs, so the deck's top two cards.
    A deck shorter than two could be refilled by Precision Strike, so it counts as "yes"."""
    if s.deck_size < 2:
        return True
    cards = s.hand[: s.hand_size].tolist() + [
        int(s.deck[s.deck_head]),
        int(s.deck[(s.deck_head + 1) % NUM_CARDS]),
    ]
    j = {SUIT_OF[c] for c in cards if RANKS[c] == JACK}
    q = {SUIT_OF[c] for c in cards if RANKS[c] == QUEEN}
    k = {SUIT_OF[c] for c in cards if RANKS[c] == KING}
    return any(a != b and b != c and a != c for a in j for b in q for c in k)


def solve_deck(
    deck,
    difficulty: str,
    max_nodes: int | None = 100_000,
    max_seconds: float | None = None,
    probe_policy=None,
    **rules,
) -> Result:
    state = State.new_game(difficulty=difficulty, deck=deck, **rules)
    return Solver(max_nodes=max_nodes, max_seconds=max_seconds, probe_policy=probe_policy).solve(
        state
    )


# --- bound 4: a relaxed game over (column lengths, supply) ----------------------------------
@lru_cache(maxsize=1_000_000)
def relaxed_winnable(columns: tuple, phi: int, plays: int, regroup: bool, royal: bool) -> bool:
    """Can the relaxed game still be won? ``columns``: defender counts of the standing
    castles (sorted, longest first); ``phi``: deck + hand; ``plays``: plays left this turn;
    ``regroup``: Regroup still unused this turn; ``royal``: a Royal Assault is possible this
    turn. The relaxation drops every rank and suit condition, lets every attack be a
    one-card Precision Strike (so attacks cost no supply), allows a Royal Assault in every
    later turn, and keeps only what no line can escape (module docstring, bound 4)."""
    for r in (1, 0) if royal and plays >= 3 and any(columns) else (0,):
        rest = columns[1:] if r else columns  # Royal Assault takes the longest
        left = plays - 2 * r  # 3 cards, but its attack also defeats a defender somewhere
        need_phi = 3 * r + len(rest)
        if not rest:
            if phi >= 3 * r:
                return True
            continue
        if phi >= need_phi and (sum(rest) + len(rest) <= left or (regroup and sum(rest) <= left)):
            return True
        # not won this turn: kill and capture, then survive the end-of-turn deal
        for captured in _capture_sets(len(rest)):
            cost = sum(rest[i] + 1 for i in captured)
            if cost > left or phi < 3 * r + len(captured):
                continue
            others = [rest[i] for i in range(len(rest)) if i not in captured]
            after = phi - 3 * r - len(captured)
            if not others or after <= len(others):
                continue  # won (handled above) or the deck runs dry
            for cols in _spread(tuple(others), left - cost):
                nxt = after - len(others)
                if relaxed_winnable(
                    tuple(sorted((c + 1 for c in cols), reverse=True)),
                    nxt,
                    min(HAND_SLOTS, nxt),
                    True,
                    True,
                ):
                    return True
    return False


@cache
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
