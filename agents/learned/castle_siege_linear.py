"""Castle Siege linear move scorer: a policy whose weights are learned (``castle-envs train``
with ``algo: cem``), over move features read from the public position.

Every legal move gets a feature vector; the policy plays the move with the highest score
``features · weights`` (the *end battle phase* move scores 0). The features are the ones
the hand-written heuristic (``castle_envs.agents.baselines.castle_siege.heuristic_policy``) weighs, plus features
for what it ignores: Jacks, Queens and Kings kept for a Royal Assault, and which discard-pile
card a Precision Strike sends to the deck's bottom (a card the player will see again, in a
known order, once the deck runs short). ``HEURISTIC_WEIGHTS`` reproduces the heuristic's
choices; training starts there.

Three decisions, three weight blocks (``BATTLE_FEATURES``, ``RECYCLE_FEATURES``,
``ROYAL_FEATURES``); the discard decision (never reached in play, see RULES.md) drops the
highest card, as the heuristic does.

**Endgame search** (``endgame_nodes > 0``, agent spec ``linear:PATH,endgame=2000``): once
every card left in the deck is one the player sent there by Precision Strike, the player
knows the deck's order, so the rest of the game is a perfect-information puzzle. At the
start of each such turn the policy runs the solver (``solvers.castle_siege_compiled.CompiledSolver``
in its reference mode, which searches move for move as the Python solver these weights were
measured with, now ``tests/reference/castle_siege_solver.py``) with that node budget and,
when it proves a win, plays the winning line; otherwise it plays by the weights. It never
reads an unseen card.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from castle_envs.castle_siege.actions import (
    DISCARD_BASE,
    END_BATTLE,
    HAND_SLOTS,
    NUM_SUBSETS,
    RECYCLE_BASE,
    REGROUP,
    ROYAL_BASE,
)
from castle_envs.castle_siege.cards import JACK, KING, NUM_CARDS, QUEEN, RANKS, SUIT_OF
from castle_envs.castle_siege.rules import BATTLE, DISCARD, PRECISION, ROYAL, is_royal
from castle_envs.core.files import UnreadableFile, read_json

BATTLE_FEATURES = (
    "capture",  # 1 for an exact capture of a castle
    "royal",  # 1 for a Royal Assault
    "royal_own_column",  # ... striking a defender of the castle it will capture anyway
    "attack",  # 1 for a plain attack on a defender
    "cards",  # cards spent
    "rank_spent",  # rank points spent
    "overkill",  # attack: rank points beyond the defender's
    "target_rank",  # attack or royal: the defender's rank
    "focus",  # attack: on the standing castle with the fewest defenders
    "clear",  # attack: removes a column's last defender
    "capture_next",  # ... and the rest of the hand then captures that castle exactly
    "precision",  # attack: exact sum (a card goes back to the deck)
    "flush",  # attack: two or more cards of one suit, not exact, deck not empty
    "royals_spent",  # J, Q or K cards spent outside a Royal Assault
    "royals_spent_late",  # ... times (1 - deck/32): late in the game
    "cards_late",  # cards spent times (1 - deck/32)
    "regroup",  # 1 for Regroup
    "regroup_royals",  # ... times J, Q, K cards thrown away by it
)
RECYCLE_FEATURES = (
    "castle_distance",  # |rank - nearest standing castle's rank|
    "rank",
    "castle_exact",  # rank equals a standing castle's rank
    "defender_match",  # defenders of exactly this rank
    "royal_rank",  # a J, Q or K
    "royal_missing",  # a J, Q or K whose rank the hand lacks
    "soon",  # the deck holds at most 8 cards (it comes back within two turns)
    "soon_castle_exact",
    "soon_royal_missing",
)
ROYAL_FEATURES = ("defenders", "defender_ranks", "castle_rank")

_ROYAL_RANKS = (JACK, QUEEN, KING)
_RANKS = np.array(RANKS, dtype=np.int64)
_SUITS = np.array(SUIT_OF, dtype=np.int64)
_IS_ROYAL_RANK = np.isin(_RANKS, _ROYAL_RANKS)
# _IN[s, i]: hand slot i belongs to subset s (bitmask s, 0..31)
_IN = np.array([[(s >> i) & 1 for i in range(HAND_SLOTS)] for s in range(NUM_SUBSETS + 1)], bool)
# _SUB[c, s]: subset s lies within subset c
_SUB = np.array(
    [[(s & ~c) == 0 for s in range(NUM_SUBSETS + 1)] for c in range(NUM_SUBSETS + 1)], bool
)
_FULL = NUM_SUBSETS


def _weights(values: dict, names) -> np.ndarray:
    if not isinstance(values, dict):
        raise ValueError(
            f"a weight block must map feature names to numbers, got {type(values).__name__}"
        )
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"unknown feature weights {unknown}; known: {list(names)}")
    for name, value in values.items():
        # NaN would make every score NaN and argmax pick the first move, silently
        if not _finite_number(value):
            shown = repr(value)
            shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} characters)"
            raise ValueError(f"weight {name!r} must be a finite number, got {shown}")
    return np.array([float(values.get(n, 0.0)) for n in names])


def _finite_number(value: Any) -> bool:
    """A number that is not a bool and is finite as a float (an int too large for a float,
    such as 10**400, is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        return False
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


# the heuristic's weights (castle_envs.agents.baselines.castle_siege._Weights) in this feature space
HEURISTIC_WEIGHTS = {
    "battle": {
        "capture": 1000.0,
        "royal": 500.0,
        "royal_own_column": -50.0,
        "attack": 14.0,
        "cards": -4.0,
        "rank_spent": -0.15,
        "overkill": -0.3,
        "focus": 4.0,
        "clear": 6.0,
        "capture_next": 8.0,
        "precision": 6.0,
        "flush": 5.0,
        "regroup": 1.0,
    },
    "recycle": {"castle_distance": -1.0, "rank": -0.01},
    "royal": {"defenders": 100.0, "defender_ranks": 1.0, "castle_rank": 0.01},
}


_HEURISTIC_ROYAL = _weights(HEURISTIC_WEIGHTS["royal"], ROYAL_FEATURES)


class LinearPolicy:
    """``policy(state, rng) -> action``: the legal move with the highest linear score (and,
    with ``endgame_nodes``, a solved line once the deck's order is known)."""

    def __init__(self, weights: dict | None = None, endgame_nodes: int = 0):
        if (
            isinstance(endgame_nodes, bool)
            or not isinstance(endgame_nodes, int)
            or endgame_nodes < 0
        ):
            raise ValueError(f"endgame_nodes must be a non-negative int, got {endgame_nodes!r}")
        self.endgame_nodes = endgame_nodes
        # a failed solve is not retried until the next turn (the measured agent's rule); the
        # solver is made on first use (large tables)
        self.endgame = (
            EndgamePlanner(make_solver=partial(reference_solver, endgame_nodes), by_turn=True)
            if endgame_nodes
            else None
        )
        weights = weights or HEURISTIC_WEIGHTS
        if not isinstance(weights, dict):
            raise ValueError(
                f"weights must map blocks (battle, recycle, royal) to feature "
                f"weights, got {type(weights).__name__}"
            )
        unknown = sorted(set(weights) - {"battle", "recycle", "royal"})
        if unknown:
            raise ValueError(f"unknown weight blocks {unknown}; known: battle, recycle, royal")
        for block in ("battle", "recycle", "royal"):
            if not isinstance(weights.get(block, {}), dict):
                raise ValueError(
                    f"weight block {block!r} must map feature names to numbers, "
                    f"got {type(weights[block]).__name__}"
                )
        self.weights = {k: dict(weights.get(k, {})) for k in ("battle", "recycle", "royal")}
        self.battle = _weights(self.weights["battle"], BATTLE_FEATURES)
        self.recycle = _weights(self.weights["recycle"], RECYCLE_FEATURES)
        self.royal = _weights(self.weights["royal"], ROYAL_FEATURES)

    # --- vectors <-> named weights (what the trainer searches over) ------------------------
    @staticmethod
    def names() -> list[str]:
        return (
            [f"battle.{n}" for n in BATTLE_FEATURES]
            + [f"recycle.{n}" for n in RECYCLE_FEATURES]
            + [f"royal.{n}" for n in ROYAL_FEATURES]
        )

    def vector(self) -> np.ndarray:
        return np.concatenate([self.battle, self.recycle, self.royal])

    @classmethod
    def from_vector(cls, theta) -> LinearPolicy:
        theta = np.asarray(theta, dtype=float)
        names = cls.names()
        if theta.shape != (len(names),):
            raise ValueError(f"need {len(names)} weights, got shape {theta.shape}")
        blocks: dict[str, dict] = {"battle": {}, "recycle": {}, "royal": {}}
        for name, value in zip(names, theta.tolist()):
            block, _, feature = name.partition(".")
            blocks[block][feature] = value
        return cls(blocks)

    def save(self, path) -> None:
        Path(path).write_text(
            json.dumps(
                {"game": "castle-siege", "policy": "linear", "weights": self.weights}, indent=1
            )
            + "\n"
        )

    @classmethod
    def load(cls, path, endgame_nodes: int = 0) -> LinearPolicy:
        path = Path(path)
        try:
            # NaN and Infinity are read so that the weight's check names the weight
            data = read_json(path, "linear policy file", max_bytes=1 << 20, allow_nan=True)
        except FileNotFoundError:
            raise ValueError(
                f"{path} is not a Castle Siege linear policy file: no such file"
            ) from None
        except UnreadableFile as err:
            why = str(err).removeprefix(f"{path}: ")
            raise ValueError(f"{path} is not a Castle Siege linear policy file: {why}") from None
        if (
            not isinstance(data, dict)
            or data.get("policy") != "linear"
            or data.get("game") != "castle-siege"
            or not isinstance(data.get("weights"), dict)
        ):
            raise ValueError(
                f"{path} is not a Castle Siege linear policy file (a JSON object "
                f"with game, policy and weights)"
            )
        try:
            return cls(data["weights"], endgame_nodes)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None

    # --- acting -------------------------------------------------------------------------
    def __call__(self, state, rng=None) -> int:
        if self.endgame is not None:
            action = self.endgame.move(state)
            if action is not None:
                return action
        phase = state.phase
        if phase == BATTLE:
            actions, feats = battle_features(state)
            return int(actions[int(np.argmax(feats @ self.battle))])
        if phase == PRECISION:
            cards, feats = recycle_features(state)
            return RECYCLE_BASE + int(cards[int(np.argmax(feats @ self.recycle))])
        if phase == ROYAL:
            castles, feats = royal_features(state)
            return ROYAL_BASE + int(castles[int(np.argmax(feats @ self.royal))])
        if phase == DISCARD:
            hand = state.hand[: state.hand_size]
            return DISCARD_BASE + int(np.argmax(_RANKS[hand]))
        raise ValueError(f"no move to choose in phase {phase}")


def battle_features(state) -> tuple[np.ndarray, np.ndarray]:
    """(legal battle-phase action ids, their features (n, len(BATTLE_FEATURES))); the last
    row is *end battle phase*, all zeros."""
    mask = state.legal_action_mask()
    hand = state.hand[: state.hand_size].astype(np.int64)
    n_hand = len(hand)
    hand_ranks = np.zeros(HAND_SLOTS, np.int64)
    hand_ranks[:n_hand] = _RANKS[hand]
    in_sub = _IN
    sub_cards = in_sub.sum(1)
    sub_total = in_sub @ hand_ranks
    sub_royals = in_sub @ np.pad(_IS_ROYAL_RANK[hand].astype(np.int64), (0, HAND_SLOTS - n_hand))
    suits = np.full(HAND_SLOTS, -1, np.int64)
    suits[:n_hand] = _SUITS[hand]
    sub_one_suit = np.array([len(set(suits[in_sub[s]].tolist())) == 1 for s in range(_FULL + 1)])
    sub_royal = np.zeros(_FULL + 1, bool)
    for s in range(1, _FULL + 1):
        if sub_royals[s] >= 3:
            sub_royal[s] = is_royal(hand[in_sub[s, :n_hand]].tolist())

    col_len = state.col_len.astype(np.int64)
    captured = state.captured
    castles = state.castles.astype(np.int64)
    column_of = np.full(NUM_CARDS, -1, np.int64)
    for c in range(4):
        column_of[state.columns[c, : col_len[c]].astype(np.int64)] = c
    castle_card = np.zeros(NUM_CARDS, bool)
    castle_card[castles[~captured]] = True
    standing = [c for c in range(4) if not captured[c]]
    focus = min(standing, key=lambda c: (col_len[c], RANKS[castles[c]])) if standing else -1
    royal_target = _royal_castle(state)
    late = 1.0 - min(state.deck_size, 32) / 32.0

    legal = np.flatnonzero(mask[:RECYCLE_BASE])
    subset = legal // NUM_CARDS + 1  # bitmask 1..31
    target = legal % NUM_CARDS
    f = np.zeros((len(legal) + 2, len(BATTLE_FEATURES)))
    is_capture = castle_card[target]
    royal_move = sub_royal[subset] & ~is_capture
    is_attack = ~is_capture & ~royal_move
    col = column_of[target]
    rank = _RANKS[target]
    total = sub_total[subset]
    k = len(legal)
    f[:k, 0] = is_capture
    f[:k, 1] = royal_move
    f[:k, 2] = royal_move & (col == royal_target)
    f[:k, 3] = is_attack
    f[:k, 4] = sub_cards[subset]
    f[:k, 5] = total
    f[:k, 6] = np.where(is_attack, total - rank, 0)
    f[:k, 7] = np.where(is_capture, 0, rank)
    f[:k, 8] = is_attack & (col == focus)
    clear = is_attack & (col_len[np.maximum(col, 0)] == 1)
    f[:k, 9] = clear
    if clear.any():
        rest = _FULL ^ subset
        need = np.zeros(k, np.int64)
        need[clear] = _RANKS[castles[col[clear]]]
        # some sub-subset of the rest sums exactly to the castle's rank
        reach = _SUB[rest] & (sub_total[None, :] == need[:, None])
        # only subsets of the real hand count
        reach &= (np.arange(_FULL + 1) < (1 << n_hand))[None, :]
        f[:k, 10] = clear & reach[:, 1:].any(1)
    exact = is_attack & (total == rank)
    f[:k, 11] = exact
    f[:k, 12] = (
        is_attack & ~exact & (sub_cards[subset] >= 2) & sub_one_suit[subset] & (state.deck_size > 0)
    )
    spent_royals = np.where(royal_move, 0, sub_royals[subset])
    f[:k, 13] = spent_royals
    f[:k, 14] = spent_royals * late
    f[:k, 15] = sub_cards[subset] * late
    actions = np.empty(k + 2, np.int64)
    actions[:k] = legal
    # Regroup row (zeros and never chosen when illegal), then end battle phase (all zeros)
    actions[k] = REGROUP
    actions[k + 1] = END_BATTLE
    if mask[REGROUP]:
        f[k, 16] = 1.0
        f[k, 17] = _IS_ROYAL_RANK[hand].sum()
    else:
        f[k, :] = 0.0
        actions[k] = END_BATTLE
    return actions, f


def recycle_features(state) -> tuple[np.ndarray, np.ndarray]:
    pile = np.flatnonzero(state.discard)
    ranks = _RANKS[pile]
    standing = _RANKS[state.castles[~state.captured].astype(np.int64)]
    defenders = np.concatenate([state.columns[c, : state.col_len[c]] for c in range(4)]).astype(
        np.int64
    )
    defender_ranks = _RANKS[defenders] if len(defenders) else np.zeros(0, np.int64)
    hand_ranks = set(_RANKS[state.hand[: state.hand_size].astype(np.int64)].tolist())
    f = np.zeros((len(pile), len(RECYCLE_FEATURES)))
    if len(standing):
        dist = np.abs(ranks[:, None] - standing[None, :]).min(1)
        f[:, 0] = dist
        f[:, 2] = dist == 0
    f[:, 1] = ranks
    f[:, 3] = (ranks[:, None] == defender_ranks[None, :]).sum(1)
    royal = _IS_ROYAL_RANK[pile]
    f[:, 4] = royal
    f[:, 5] = royal & np.array([r not in hand_ranks for r in ranks.tolist()])
    soon = float(state.deck_size <= 8)
    f[:, 6] = soon
    f[:, 7] = soon * f[:, 2]
    f[:, 8] = soon * f[:, 5]
    return pile, f


def royal_features(state) -> tuple[np.ndarray, np.ndarray]:
    castles = np.flatnonzero(~state.captured)
    f = np.zeros((len(castles), len(ROYAL_FEATURES)))
    for i, c in enumerate(castles.tolist()):
        col = state.columns[c, : state.col_len[c]].astype(np.int64)
        f[i] = (len(col), _RANKS[col].sum(), RANKS[int(state.castles[c])])
    return castles, f


def _royal_castle(state) -> int:
    """The castle the heuristic's weights would sweep with a Royal Assault (-1: none)."""
    castles, f = royal_features(state)
    return int(castles[int(np.argmax(f @ _HEURISTIC_ROYAL))]) if len(castles) else -1


def reference_solver(max_nodes: int):
    """The linear model's endgame solver: the compiled one in its reference mode."""
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    return CompiledSolver(max_nodes=max_nodes, reference=True)


def turn_key(state) -> tuple:
    """What a turn's positions share: the turn, the castles and which are captured (a
    capture changes it within a turn)."""
    return (state.turn, state.castles.tobytes(), state.captured.tobytes())


class NestedEndgameSolver:
    """``solve(state) -> Result``: the depth-first solver first, then, where it proves no win,
    nested Monte Carlo search (``solvers.castle_siege_nested``, level 2, ``width`` candidates a
    step, ``runs`` whole searches, the solver's ``nodes`` checked along its line).

    Why: once every card is known the depth-first solver with the agents' 20,000 nodes proves
    almost no Hard endgame from turn 5 on (0 of the 39 lost on the Hard screen), while the
    nested search finds winning lines in a third of them, in under a second each
    (``docs/castle_siege_winnability.md``, *The endgame once the deck is known*). Both only
    prove wins, so a line returned is a win; the nested search's seed is fixed, so its answer
    depends only on the position. The nested search runs once a turn (a failed one is not
    repeated before the next turn or a capture: the positions later in a turn hold a subset
    of its lines) and at most ``tries`` times a game (``reset()`` starts a game), the solver
    at every position, as before: of the nested search's wins on the 2,000 held-out Hard and
    Very Hard deals, all came at its first or second try of the game, while a lost Very Hard
    game tried up to six times. ``budget`` > 0 bounds the nested search's work in a game:
    its tries together start no run once they have counted that many nodes (a node count, so
    that a game's moves depend only on the deal and the agent's seed; about a million a
    CPU-second, a run up to about 800,000; docs/castle_siege_winnability.md measures it)."""

    def __init__(
        self,
        nodes: int,
        runs: int,
        width: int,
        weights,
        tries: int = 2,
        probe_weights=None,
        budget: int = 0,
    ):
        from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver
        from castle_envs.agents.solvers.castle_siege_nested import NestedSearch

        self.solver = CompiledSolver(max_nodes=nodes, probe_weights=probe_weights)
        self.nested = NestedSearch(level=2, width=width, runs=runs, check=nodes, weights=weights)
        self.tries, self.budget = tries, budget
        self.reset()

    def reset(self) -> None:
        self._tried: Any = None  # the turn whose nested search failed
        self.tries_left = self.tries  # nested searches left this game
        self.nodes_spent = 0  # the nodes they counted

    def solve(self, state):
        from castle_envs.agents.solvers.castle_siege import WINNABLE

        result = self.solver.solve(state)
        turn = turn_key(state)
        spent = self.budget > 0 and self.nodes_spent >= self.budget
        if result.verdict == WINNABLE or turn == self._tried or self.tries_left <= 0 or spent:
            return result
        self.tries_left -= 1
        # what the game's earlier tries left of the budget (0: no budget)
        found = self.nested.solve(state, budget=self.budget and self.budget - self.nodes_spent)
        self.nodes_spent += found.nodes
        if found.verdict == WINNABLE:
            return found
        self._tried = turn
        return result


class EndgamePlanner:
    """Once every card left in the deck is known (all recycled by the player), the game is a
    puzzle: ``move(state)`` solves it and, when the solver proves a win, plays that line to
    its end (``None``: no win proven, or unseen cards remain; the caller decides).

    ``solver`` (or ``make_solver()``, called on first use and again after unpickling) has
    ``solve(state) -> Result``. A failed solve is not repeated at the same position, or with
    ``by_turn`` not before the next turn (or a capture)."""

    def __init__(self, solver: Any = None, make_solver: Any = None, by_turn: bool = False):
        if (solver is None) == (make_solver is None):
            raise ValueError("give a solver or make_solver, not both")
        self.solver, self.make_solver, self.by_turn = solver, make_solver, by_turn
        self._plan: list = []  # (position key, action) of a proven line, last move first
        self._tried: Any = None  # the position (or turn) whose endgame solve failed

    def __getstate__(self) -> dict:
        # a solver made here holds a compiled module: made again after unpickling
        return {**self.__dict__, "solver": None} if self.make_solver else dict(self.__dict__)

    def reset(self) -> None:
        """A new game: forget the plan, the failed solve and the solver's per-game state."""
        self._plan, self._tried = [], None
        if hasattr(self.solver, "reset"):
            self.solver.reset()

    def move(self, state) -> int | None:
        """The next move of a proven winning line, solving when there is none yet."""
        from castle_envs.agents.solvers.castle_siege import WINNABLE, keyed_plan, state_key

        key = state_key(state)
        # a caller may play forced moves (one legal move) without asking: the plan's move there
        # is that move, so the game is still on the line, further down it
        for i in range(len(self._plan) - 1, -1, -1):
            if self._plan[i][0] == key:
                del self._plan[i + 1 :]
                return self._plan.pop()[1]
        self._plan = []
        if state.deck_size != int(state.recycled.sum()):  # unseen cards remain in the deck
            return None
        tried = turn_key(state) if self.by_turn else key
        if tried == self._tried:
            return None
        if self.solver is None:
            self.solver = self.make_solver()
        result = self.solver.solve(state)
        if result.verdict != WINNABLE:
            self._tried = tried
            return None
        self._plan = keyed_plan(state, result.line)
        return self._plan.pop()[1]


def build_agent(name: str, rest: str, game: str, seed: int | None):
    """``linear:PATH[,endgame=NODES]`` (the agent registry's entry)."""
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.options import locate_shipped, parse_options, shipped_models_dir

    if not rest.strip():
        raise ValueError(
            "linear needs a weights file: linear:models/castle_siege_linear/policy.json"
        )
    path, _, opts = rest.strip().partition(",")
    options = parse_options(opts, {"endgame": int}, "linear") if opts else {}
    policy = LinearPolicy.load(
        locate_shipped(path.strip(), shipped_models_dir(), "models"),
        endgame_nodes=options.get("endgame", 0),
    )
    return PolicyAgent(policy, f"linear:{rest.strip()}", seed)
