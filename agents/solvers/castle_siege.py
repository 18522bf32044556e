"""Castle Siege's perfect-information solver: what it does, and its shared contract.

The solver is ``castle_envs.agents.solvers.castle_siege_compiled.CompiledSolver`` (compiled kernels in
``agents/solvers/castle_siege_kernel.py``, which says what it does differently from the text
below: a Zobrist-hashed table, bucketed move order, xorshift noise). This module holds what
it, the search agents and the ``castle-envs solve`` command share (the verdicts, ``Result``,
``state_key`` and ``keyed_plan``, ``deal_deck``, ``replay_wins``, ``line_events``) and the
description of the search, its reductions and their soundness. The Python depth-first
solver that this module was until the solver was written once is
``tests/reference/castle_siege_solver.py``: the independent reference the tests compare the
compiled one with (it is what the text below names ``Solver``).

The solver sees the whole deck order (as Yan et al.'s "thoughtful" Klondike solver did) and
searches the game tree depth first over the env's own rules core (``rules.State``: it
calls ``legal_action_mask``, ``clone`` and ``apply_legal`` on mask-legal actions only, so there
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
``castle_envs.agents.baselines.castle_siege``), every other playout follows that policy with the same noise. They
can only find wins. The rest of the budget goes to the depth-first search, which alone can
prove a deal unwinnable (it starts afresh; the probes share no table with it).

Budgets are in nodes (deterministic: the same deal and budget give the same verdict on any
machine) and/or seconds (machine-dependent). ``CompiledSolver(prune=False, table=False,
order=False)`` is the plain exhaustive search the tests check the reductions against.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.castle_siege.rules import State

WINNABLE, UNWINNABLE, UNKNOWN = "winnable", "unwinnable", "unknown"


def state_key(state: State) -> bytes:
    """Everything the rules read of a position, as bytes (see the module docstring, 1)."""
    head = state.deck_head
    return b"".join(
        (
            state.deck[head:].tobytes(),
            state.deck[:head].tobytes(),
            state.hand.tobytes(),
            state.columns.tobytes(),
            state.captured.tobytes(),
            np.packbits(state.discard).tobytes(),
            bytes((state.phase, state.regroup_used, state.outcome & 0xFF)),
        )
    )


def keyed_plan(state: State, line) -> list[tuple[bytes, int]]:
    """(``state_key`` of the position, action) for each move of ``line`` played from
    ``state``, the last move first: a plan to pop a move from while the game follows it."""
    replay, plan = state.clone(), []
    for action in line:
        plan.append((state_key(replay), int(action)))
        replay.apply_action(int(action))
    return plan[::-1]


@dataclass
class Result:
    verdict: str
    line: list = field(default_factory=list)  # winning action ids, first move first
    nodes: int = 0
    seconds: float = 0.0
    table_size: int = 0
    pruned: int = 0  # positions cut by bounds 2-3

    def to_dict(self) -> dict:
        return asdict(self)


# --- deals, replay, statistics --------------------------------------------------------------
def deal_deck(seed: int) -> list[int]:
    """The deck (52 ids, top first) that ``env.reset(seed=seed)`` deals: the env passes its
    ``np_random`` (``np.random.default_rng(seed)``) to ``State.new_game``, whose first draw
    is ``permutation(52)``. ``tests/castle_siege/test_solver.py`` checks the two agree."""
    return [int(c) for c in np.random.default_rng(seed).permutation(NUM_CARDS)]


def replay_wins(deck, difficulty: str, line, **rules) -> bool:
    """Play ``line`` in the public Gymnasium env (``CastleSiegeEnv``, the class the
    ``castle_envs/CastleSiege-v0`` id makes) on ``deck``; True if it ends in a win."""
    from castle_envs.castle_siege.env import CastleSiegeEnv

    # an illegal move in a line is a bug worth hearing about, not a lost game
    env = CastleSiegeEnv(difficulty=difficulty, illegal_action="raise", **rules)
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


__all__ = [
    "Result",
    "state_key",
    "keyed_plan",
    "deal_deck",
    "replay_wins",
    "line_events",
    "WINNABLE",
    "UNWINNABLE",
    "UNKNOWN",
]
