"""Information-set Monte Carlo tree search for Castle Siege, compiled.

Why a tree over *what the player sees* is exact here: the only hidden information is the
order of the unseen cards in the reinforcement deck, and every order of them is equally
likely given what the player has seen (the recycled cards sit at the deck's bottom in the
order the player put them there). So the player's view of a position is a sufficient
statistic of the belief, and the game seen from the player's seat is a Markov decision
process over views whose chance events are the draws. A tree whose nodes are views (found
by a hash of the view, ``view_hash``: hand, columns, discard pile, cards out of the game,
captured castles, the recycled cards' places, deck size, phase, Regroup used) and whose
iterations each deal a fresh world at the root (``shuffle_unseen``) is then single-observer
information-set MCTS (Cowling, Powley and Whitehouse 2012) with exact chance sampling: a
node's statistics average over the worlds consistent with its view, so, unlike sampling
worlds and solving each as if its cards were known (PIMC, the ``search`` agent), it never
credits a move with a line that needs to know the next card (strategy fusion). Nodes that
differ only by the order of moves inside a turn share statistics (transpositions).

Per iteration:

1. deal a world: the root view with its unseen cards shuffled;
2. descend: at each expanded node pick the child by PUCT, ``Q + c * P * sqrt(N) / (1 + n)``
   (``Q`` the mean value of the child, unvisited children valued at the node's mean, scaled
   to [0, 1] between the node's worst and best child as MuZero scales its values: early in
   a Very Hard game every value is small), where ``P`` is a softmax of the trained linear
   move scorer's scores over ``temp`` (``siege_linear``) for the node's ``width`` best moves
   (end battle phase always among them);
3. expand the first node not yet in the tree and finish the world with a playout of the
   scorer (``castle_siege_nested_kernel.playout``, ``noise`` the chance of one of its next moves);
   playouts stop where the solver's sound bounds call the world lost
   (``castle_siege_kernel.hopeless``);
4. back up the value: 1 for a win, else ``shaped`` times the share of castles captured,
   less ``standing`` times the defenders still standing before uncaptured castles / 52.
   With ``leaf`` > 0 the compiled solver first tries, with that many nodes, to prove the
   leaf's world won (a win counts 1; this reads the world's deal, so it brings back some of
   the clairvoyance the tree avoids, at the leaves only).

The root's child with the most visits is played. With ``halving`` the root instead runs
sequential halving (Karnin, Koren and Somekh 2013, as Gumbel MuZero's root does) over
**common worlds**: each round deals worlds and plays every root child still in the running in
each of them, then drops the worse half by mean value; the last one left is played. Early in
a Very Hard game the luck of the deal moves a world's value far more than the choice of move
does, so siblings compared on the same worlds are told apart with far fewer iterations than
siblings that each met worlds of their own (common random numbers). ``root_width`` lets the
root consider more moves than the nodes below it. Everything the search reads is the
player's view: the root is handed in already determinized, and the worlds are reshuffles of
it, so the true deck order cannot reach a decision.

Two variants, each measured no better on Hard (``docs/castle_siege_winnability.md``,
*Searching the next turn*): ``chance`` keeps at most that many draws below each move that
draws unseen cards, so the tree searches the next turn (``sparse_outcome``); ``endplay``
lets the solver finish a playout once no unseen card is left, as the agent's endgame
planner does (``_playout``).

With ``afterstate_mix`` > 0 a leaf is valued partly (1: wholly, no playout) by a learned
n-tuple afterstate value (``castle_siege_ntuple_kernel``): the value of the position the
descent's last move led to, seen as an afterstate, so the cards that move drew stay unseen
(``mark_unseen`` of the position before it), as the value was trained to read them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from castle_envs.agents.learned.castle_siege_ntuple_kernel import (
    MAX_FEATURES,
    N_WEIGHTS,
    WORK,
    features,
    mark_unseen,
    value_of,
)
from castle_envs.agents.solvers.castle_siege_kernel import (
    MAX_DEPTH,
    WIN,
    ZOBRIST,
    dfs,
    hopeless,
    probe,
    rand,
    table_hash,
    tt_clear,
)
from castle_envs.agents.solvers.castle_siege_nested_kernel import playout, scored_moves, select_top

from castle_envs.castle_siege.actions import DISCARD_BASE, END_BATTLE, ROYAL_BASE
from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.castle_siege.kernel import (
    CAPTURED,
    CARD_WORDS,
    DECK,
    DSIZE,
    HEAD,
    HSIZE,
    INT_WORDS,
    NEED,
    OUT,
    OUTCOME,
    PHASE,
    RECYCLED,
    apply,
    captured_and_standing,
    encode,
    load_position,
    unseen,
)
from castle_envs.castle_siege.observation import OBS_SIZE
from castle_envs.castle_siege.rules import BATTLE, DISCARD, ROYAL
from castle_envs.castle_siege.scoring import N_BATTLE, N_RECYCLE, royal_action
from castle_envs.core.jit import compile_note, njit
from castle_envs.core.kernel_common import nonzero_key

# the seconds after the solver's kernels, which it calls too (``castle-envs demo`` compiles
# them first, for the trained scorer's endgame; alone, add theirs)
compile_note(__name__, "the Castle Siege search kernels (ISMCTS)", 25)

MAX_WIDTH = 16

# Zobrist keys of a view: hand card, column x place x card, discard card, out-of-game card,
# captured castle, phase, Regroup used, deck size, deck place x recycled card
V_HAND = 0
V_COL = V_HAND + 52
V_DISC = V_COL + 4 * 52 * 52
V_OUT = V_DISC + 52
V_CAPT = V_OUT + 52
V_PHASE = V_CAPT + 4
V_REG = V_PHASE + 8
V_DSIZE = V_REG + 1
V_RECYC = V_DSIZE + 64
V_SIZE = V_RECYC + 64 * 52
_ZV = (
    np.random.default_rng(20261203)
    .integers(0, 2**63 - 1, size=(2, V_SIZE), dtype=np.int64)
    .astype(np.uint64)
)


class Tree(NamedTuple):
    """One search's arrays (``new_tree``: allocated once per agent, cleared per decision)."""

    keys: np.ndarray  # (S, 2) uint64: the hash table's view hashes (0/0: empty slot)
    slot: np.ndarray  # (S,) int64: the node of each slot
    visits: np.ndarray  # (C,) int64: per node its visits
    value: np.ndarray  # (C,) float64: per node the sum of the values backed up through it
    width: np.ndarray  # (C,) int64: per node its children (-1: not expanded)
    act: np.ndarray  # (C, MAX_WIDTH) int64: per node its moves, the scorer's best first
    prior: np.ndarray  # (C, MAX_WIDTH) float64
    n: np.ndarray  # (C, MAX_WIDTH) int64: per edge its visits
    w: np.ndarray  # (C, MAX_WIDTH) float64: per edge the sum of its values
    path: np.ndarray  # (MAX_DEPTH, 2) int64: an iteration's (node, edge) pairs
    used: np.ndarray  # (1,) int64: nodes in use
    rng: np.ndarray  # (1,) uint64: xorshift state (the shuffles)
    stats: np.ndarray  # (4,) int64: iterations, playouts, nodes created, table full
    obase: np.ndarray  # (C, MAX_WIDTH) int64: per edge its first outcome slot (-1: none)
    ocount: np.ndarray  # (C, MAX_WIDTH) int64: per edge its outcomes stored
    ovisits: np.ndarray  # (P,) int64: per outcome slot the iterations sent through it
    ob: np.ndarray  # (P, NEED) int8: per outcome slot the world's card words after the draw
    ov: np.ndarray  # (P, INT_WORDS) int32: and its int words
    oused: np.ndarray  # (1,) int64: outcome slots in use


class ValueNet(NamedTuple):
    """A leaf value network: ``relu(relu(obs @ w1 + b1) @ w2 + b2) @ wv + bv``, clipped to
    [-1, 1] (the move network's state encoder and value head, ``agents/learned/move_policy.py``), and
    its work arrays."""

    w1: np.ndarray  # (OBS_SIZE, H) float32
    b1: np.ndarray  # (H,) float32
    w2: np.ndarray  # (H, H) float32
    b2: np.ndarray  # (H,) float32
    wv: np.ndarray  # (H,) float32
    bv: np.ndarray  # (1,) float32
    obs: np.ndarray  # (OBS_SIZE,) float32
    h1: np.ndarray  # (H,) float64
    h2: np.ndarray  # (H,) float64
    b: np.ndarray  # (CARD_WORDS,) int8: the leaf's rows, copied (encode writes into them)
    v: np.ndarray  # (INT_WORDS,) int32


class Afterstate(NamedTuple):
    """A learned n-tuple afterstate value (``castle_siege_ntuple_kernel``) and its work
    arrays."""

    weights: np.ndarray  # (N_WEIGHTS,) float32: the tables
    unseen_flag: np.ndarray  # (NUM_CARDS,) int64: ``mark_unseen`` before the last move
    ranks: np.ndarray  # (14,) int64: ... and the unseen cards counted by rank
    work: np.ndarray  # (WORK,) int64
    idx: np.ndarray  # (MAX_FEATURES,) int64


def new_afterstate(weights: np.ndarray | None = None) -> Afterstate:
    """An ``Afterstate`` of the tables ``weights``; ``None``: zero tables, for a search that
    mixes in no afterstate value (``afterstate_mix`` = 0)."""
    if weights is None:
        weights = np.zeros(N_WEIGHTS, np.float32)
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    if weights.shape != (N_WEIGHTS,):
        raise ValueError(f"afterstate value: expected {N_WEIGHTS} weights, got {weights.shape}")
    return Afterstate(
        weights=weights,
        unseen_flag=np.zeros(NUM_CARDS, np.int64),
        ranks=np.zeros(14, np.int64),
        work=np.zeros(WORK, np.int64),
        idx=np.zeros(MAX_FEATURES, np.int64),
    )


@njit(cache=True)
def afterstate_value(a, b, v):
    """The learned value of the position ``b``/``v`` as the afterstate of the move that led
    to it (``a.unseen_flag``/``a.ranks``: ``mark_unseen`` of the position before that move)."""
    nf = features(b, v, a.unseen_flag, a.ranks, a.work, a.idx)
    return value_of(a.weights, a.idx, nf)


class Settings(NamedTuple):
    """What every iteration of one search reads besides the tree and the world (the module
    docstring says what each does)."""

    recent: bool  # the rules' options: attack="most_recent",
    leave: bool  # defeated="leave_game"
    weights: np.ndarray  # the linear scorer (``LinearPolicy.vector()``)
    width: int  # children of a node below the root
    temp: float  # the priors' softmax temperature over the scorer's scores
    c_puct: float
    noise: float  # the playout's chance of one of its next-best moves
    shaped: float  # a lost world's value: shaped * castles captured / 4
    leaf: int  # solver nodes to prove a leaf's world won (clairvoyant at the leaves; 0: off)
    standing: float  # ... less standing * defenders standing / 52
    net: ValueNet  # a leaf value network, mixed in with weight ``lam``
    lam: float
    rows: int  # defender rows a castle starts with (the difficulty; the observation shows it)
    endplay: int  # solver nodes for a playout that reaches a known deck (0: off)
    endmiss: int  # ... where the scorer's own finish left at most this many castles standing
    chance: int  # draws kept below a move that draws unseen cards (0: each iteration its own)
    afterstate: Afterstate  # a learned afterstate value, mixed in with weight afterstate_mix
    afterstate_mix: float


#: the arrays of a ValueNet, with their shapes in terms of its width H
VALUE_ARRAYS = {
    "w1": (OBS_SIZE, "H"),
    "b1": ("H",),
    "w2": ("H", "H"),
    "b2": ("H",),
    "wv": ("H",),
    "bv": (1,),
}


def new_value_net(arrays: dict | None = None) -> ValueNet:
    """A ``ValueNet`` from ``{name: array}`` (``VALUE_ARRAYS``); ``None``: a zero net of width
    1, for a search that mixes in no value (``lam`` = 0)."""
    if arrays is None:
        arrays = {
            "w1": np.zeros((OBS_SIZE, 1)),
            "b1": np.zeros(1),
            "w2": np.zeros((1, 1)),
            "b2": np.zeros(1),
            "wv": np.zeros(1),
            "bv": np.zeros(1),
        }
    h = np.asarray(arrays["b1"]).shape[0]
    out = {}
    for name, shape in VALUE_ARRAYS.items():
        a = np.ascontiguousarray(np.asarray(arrays[name], dtype=np.float32))
        want = tuple(h if d == "H" else d for d in shape)
        if a.shape != want or not np.isfinite(a).all():
            raise ValueError(
                f"value network array {name}: expected finite values of shape "
                f"{want}, got shape {a.shape}"
            )
        out[name] = a
    return ValueNet(
        **out,
        obs=np.zeros(OBS_SIZE, np.float32),
        h1=np.zeros(h),
        h2=np.zeros(h),
        b=np.zeros(CARD_WORDS, np.int8),
        v=np.zeros(INT_WORDS, np.int32),
    )


@njit(cache=True)
def net_value(net, b, v, rows, recent, leave):
    """The network's value, in [-1, 1], of the position ``b``/``v`` (the chance of winning,
    or the search's own value, whichever it was trained on), read through its observation
    only."""
    for k in range(NEED):
        net.b[k] = b[k]
    for k in range(INT_WORDS):
        net.v[k] = v[k]
    encode(net.b, net.v, rows, recent, leave, net.obs)
    h = len(net.b1)
    for j in range(h):
        net.h1[j] = net.b1[j]
    for k in range(OBS_SIZE):  # the observation is mostly zeros (one-hot blocks)
        x = net.obs[k]
        if x != 0.0:
            for j in range(h):
                net.h1[j] += x * net.w1[k, j]
    for j in range(h):
        net.h1[j] = max(net.h1[j], 0.0)
    out = float(net.bv[0])
    for j in range(h):
        z = float(net.b2[j])
        for k in range(h):
            z += net.h1[k] * net.w2[k, j]
        out += max(z, 0.0) * net.wv[j]
    return min(max(out, -1.0), 1.0)


def new_tree(node_bits: int = 16) -> Tree:
    s, c = 1 << (node_bits + 1), 1 << node_bits
    return Tree(
        keys=np.zeros((s, 2), np.uint64),
        slot=np.zeros(s, np.int64),
        visits=np.zeros(c, np.int64),
        value=np.zeros(c, np.float64),
        width=np.zeros(c, np.int64),
        act=np.zeros((c, MAX_WIDTH), np.int64),
        prior=np.zeros((c, MAX_WIDTH), np.float64),
        n=np.zeros((c, MAX_WIDTH), np.int64),
        w=np.zeros((c, MAX_WIDTH), np.float64),
        path=np.zeros((MAX_DEPTH, 2), np.int64),
        used=np.zeros(1, np.int64),
        rng=np.ones(1, np.uint64),
        stats=np.zeros(4, np.int64),
        obase=np.full((c, MAX_WIDTH), -1, np.int64),
        ocount=np.zeros((c, MAX_WIDTH), np.int64),
        ovisits=np.zeros(c, np.int64),
        ob=np.zeros((c, NEED), np.int8),
        ov=np.zeros((c, INT_WORDS), np.int32),
        oused=np.zeros(1, np.int64),
    )


@njit(cache=True)
def view_hash(b, v, z):
    """Two 64-bit hashes of what the player sees of the position (module docstring)."""
    h1, h2 = table_hash(
        b, v, z, np.uint64(0), np.uint64(0), V_HAND, V_COL, V_CAPT, V_DISC, V_PHASE, V_REG
    )
    for card in range(NUM_CARDS):
        if b[OUT + card]:
            h1 ^= z[0, V_OUT + card]
            h2 ^= z[1, V_OUT + card]
    head = v[HEAD]
    for k in range(v[DSIZE]):  # only the recycled cards' places: the rest is unseen
        card = b[DECK + (head + k) % NUM_CARDS]
        if b[RECYCLED + card]:
            h1 ^= z[0, V_RECYC + k * 52 + card]
            h2 ^= z[1, V_RECYC + k * 52 + card]
    h1 ^= z[0, V_DSIZE + v[DSIZE]]
    h2 ^= z[1, V_DSIZE + v[DSIZE]]
    return nonzero_key(h1, h2)


@njit(cache=True)
def shuffle_unseen(b, v, rng):
    """Shuffle the deck's unseen cards (its top part, above the recycled ones) in place."""
    head = v[HEAD]
    n = unseen(b, v)
    for i in range(n - 1, 0, -1):
        j = min(int(rand(rng) * (i + 1)), i)
        a, c = DECK + (head + i) % NUM_CARDS, DECK + (head + j) % NUM_CARDS
        t = b[a]
        b[a] = b[c]
        b[c] = t
    return n


@njit(cache=True)
def _find(t, h1, h2):
    """The node of a view, or -1 after reserving its slot (``t.slot`` holds -1 - slot)."""
    mask = len(t.slot) - 1
    s = np.int64(h1 >> np.uint64(1)) & mask
    while True:
        if t.keys[s, 0] == 0 and t.keys[s, 1] == 0:
            return -1 - s
        if t.keys[s, 0] == h1 and t.keys[s, 1] == h2:
            return t.slot[s]
        s = (s + 1) & mask


@njit(cache=True)
def clear(t):
    t.keys[:] = 0
    t.used[0] = 0
    t.stats[:] = 0
    t.oused[0] = 0


@njit(cache=True)
def _expand(t, node, b, v, recent, weights, width, temp, x):
    """The node's children: the scorer's ``width`` best moves (end battle phase among them
    in the battle phase), priors a softmax of their scores over ``temp``."""
    phase = v[PHASE]
    actions, scores = x.actions, x.scores
    if phase == ROYAL:
        first = royal_action(b, v, weights[N_BATTLE + N_RECYCLE :])
        m = 0
        actions[m] = first
        scores[m] = 1.0
        m += 1
        for c in range(4):
            if not b[CAPTURED + c] and ROYAL_BASE + c != first:
                actions[m] = ROYAL_BASE + c
                scores[m] = 0.0
                m += 1
    elif phase == DISCARD:
        m = v[HSIZE]
        for i in range(m):
            actions[i] = DISCARD_BASE + i
            scores[i] = 0.0
    else:
        m = scored_moves(b, v, recent, weights, x)
    k = select_top(actions, scores, m, width)
    if phase == BATTLE:
        has_end = False
        for i in range(k):
            if actions[i] == END_BATTLE:
                has_end = True
        if not has_end:
            for j in range(k, m):
                if actions[j] == END_BATTLE:
                    actions[k - 1], scores[k - 1] = actions[j], scores[j]
                    break
    top = scores[0]
    for i in range(k):
        if scores[i] > top:
            top = scores[i]
    total = 0.0
    for i in range(k):
        p = np.exp((scores[i] - top) / temp)
        t.prior[node, i] = p
        total += p
    for i in range(k):
        t.act[node, i] = actions[i]
        t.prior[node, i] /= total
        t.n[node, i] = 0
        t.w[node, i] = 0.0
        t.obase[node, i] = -1
    t.width[node] = k


@njit(cache=True)
def _mix_root_prior(t, logits, mix):
    """The root's priors mixed with a softmax of ``logits`` over its children (a child the
    network did not score, one its move view's capacity cut, gets the lowest logit given)."""
    k = t.width[0]
    lo, hi = np.inf, -np.inf
    for i in range(k):
        z = logits[t.act[0, i]]
        if np.isfinite(z):
            lo = min(lo, z)
            hi = max(hi, z)
    if not np.isfinite(hi):
        return
    total = 0.0
    p = np.empty(k)
    for i in range(k):
        z = logits[t.act[0, i]]
        p[i] = np.exp((z if np.isfinite(z) else lo) - hi)
        total += p[i]
    for i in range(k):
        t.prior[0, i] = (1.0 - mix) * t.prior[0, i] + mix * p[i] / total


@njit(cache=True)
def _value(b, v, shaped, standing):
    if v[OUTCOME] == 1:
        return 1.0
    captured, left = captured_and_standing(b, v)
    return shaped * captured / 4.0 - standing * left / 52.0


@njit(cache=True, inline="always")
def endgame_solved(w, memo, b, v, recent, leave, nodes, weights):
    """Whether the compiled solver proves this world won within ``nodes`` (half of them on
    the scorer's probes, then depth-first search)."""
    load_position(w.B, w.V, 0, b, v)
    tt_clear(w.table, w.used)
    w.stats[:] = 0
    if probe(w, memo, recent, leave, nodes // 2, 0.15, weights, True, True) > 0:
        return True
    w.stats[1:] = 0
    return dfs(w, ZOBRIST, memo, recent, leave, nodes, True, True, True) == WIN


@njit(cache=True)
def sparse_outcome(t, node, e, b, v, k):
    """Sparse sampling of the draw the edge ``(node, e)`` just made in the world ``b``/``v``
    (Kearns, Mansour and Ng 2002; sparse UCT, Bjarnason, Fern and Tadepalli 2009): the
    edge's first ``k`` draws are kept as they came; after that the world is replaced by the
    kept draw the fewest iterations went through, its other unseen cards shuffled again.
    The ``k`` kept draws were dealt from the view's belief, so the edge's value is their
    average, and the views after them recur, so the tree searches the next turn's moves
    instead of leaving them to the playout. Returns without change when the pool is full."""
    base = t.obase[node, e]
    if base < 0:
        if t.oused[0] + k > len(t.ovisits):
            return
        base = t.oused[0]
        t.oused[0] += k
        t.obase[node, e] = base
        t.ocount[node, e] = 0
    m = t.ocount[node, e]
    if m < k:
        for i in range(NEED):
            t.ob[base + m, i] = b[i]
        for i in range(INT_WORDS):
            t.ov[base + m, i] = v[i]
        t.ovisits[base + m] = 1
        t.ocount[node, e] = m + 1
        return
    j = 0
    for i in range(1, k):
        if t.ovisits[base + i] < t.ovisits[base + j]:
            j = i
    t.ovisits[base + j] += 1
    for i in range(NEED):
        b[i] = t.ob[base + j, i]
    for i in range(INT_WORDS):
        v[i] = t.ov[base + j, i]
    shuffle_unseen(b, v, t.rng)


@njit(cache=True, inline="always")
def _playout(x, w, memo, cfg, line):
    """The value of finishing the world in ``x``'s row 0 with the scorer. With ``endplay``
    a world the scorer loses with at most ``endmiss`` castles standing counts as won where
    the solver proves, within ``endplay`` nodes, a win from the playout's first position
    with no unseen card left. From there the player knows every card and the agent plays
    the solver's line where it finds one (``EndgamePlanner``), so this reads nothing the
    player would not know, and it values the endgames the agent wins and its scorer does
    not. ``endmiss`` spends the solver (a microsecond a node, dozens of playouts at 2,000
    nodes) on near misses, where its wins are: from the start of Hard deals
    20,000,100-399, the scorer's finish leaves one castle standing in 41 of 247 lost known
    endgames, which hold 18 of the 23 the solver wins with 2,000 nodes
    (the endgame study in docs/castle_siege_winnability.md)."""
    b, v = x.B[0], x.V[0]
    recent, leave, weights = cfg.recent, cfg.leave, cfg.weights
    known = cfg.endplay > 0
    _, end = playout(x, w, memo, 0, recent, leave, weights, cfg.width, cfg.noise, line, 0, known)
    if not known or v[OUTCOME] != 0 or unseen(b, v) > 0:
        return _value(b, v, cfg.shaped, cfg.standing)
    _copy_rows(x.B[1], x.V[1], b, v)
    playout(x, w, memo, 0, recent, leave, weights, cfg.width, cfg.noise, line, end, False)
    near_end = v[OUTCOME] != 1 and 4 - captured_and_standing(b, v)[0] <= cfg.endmiss
    if near_end and endgame_solved(w, memo, x.B[1], x.V[1], recent, leave, cfg.endplay, weights):
        return 1.0
    return _value(b, v, cfg.shaped, cfg.standing)


@njit(cache=True, inline="always")
def _iterate(t, x, w, memo, cfg, forced):
    """One iteration from the world in ``x``'s row 0 (dealt by the caller): descend, expand,
    play out, back up, with the settings ``cfg``; ``forced`` >= 0 takes that root edge."""
    recent, leave, weights, width, temp = cfg.recent, cfg.leave, cfg.weights, cfg.width, cfg.temp
    shaped, standing, lam = cfg.shaped, cfg.standing, cfg.lam
    b, v, line, cap = x.B[0], x.V[0], x.lines[0], len(t.visits)
    node, depth, value = 0, 0, -1.0
    while True:
        if v[OUTCOME] != 0:
            value = _value(b, v, shaped, standing)
            break
        forcing = depth == 0 and forced >= 0  # a forced root edge is taken in every world
        if not forcing and v[PHASE] == BATTLE and hopeless(b, v, w, memo):
            value = _value(b, v, shaped, standing)
            break
        if t.width[node] < 0:
            _expand(t, node, b, v, recent, weights, width, temp, x)
            break
        if forcing:
            best = forced
        else:
            # PUCT over the node's children, their values scaled to [0, 1] between the
            # node's worst and best child (values are small: wins are rare early on)
            k = t.width[node]
            sq = np.sqrt(t.visits[node] + 1.0)
            fpu = t.value[node] / t.visits[node] if t.visits[node] > 0 else 0.0
            lo, hi = fpu, fpu
            for i in range(k):
                if t.n[node, i] > 0:
                    q = t.w[node, i] / t.n[node, i]
                    lo = min(lo, q)
                    hi = max(hi, q)
            scale = 1.0 / (hi - lo) if hi > lo else 0.0
            best, best_u = 0, -1e300
            for i in range(k):
                q = t.w[node, i] / t.n[node, i] if t.n[node, i] > 0 else fpu
                u = (q - lo) * scale + cfg.c_puct * t.prior[node, i] * sq / (1.0 + t.n[node, i])
                if u > best_u:
                    best, best_u = i, u
        t.path[depth, 0] = node
        t.path[depth, 1] = best
        depth += 1
        keep = cfg.chance
        hidden = unseen(b, v) if keep > 0 else 0
        if cfg.afterstate_mix > 0.0:  # what the move will draw stays unseen at the leaf
            mark_unseen(b, v, cfg.afterstate.unseen_flag, cfg.afterstate.ranks)
        apply(b, v, t.act[node, best], leave)
        if keep > 0 and unseen(b, v) < hidden:  # the move drew an unseen card
            sparse_outcome(t, node, best, b, v, keep)
        h1, h2 = view_hash(b, v, _ZV)
        found = _find(t, h1, h2)
        if found >= 0:
            node = found
            continue
        if t.used[0] >= cap:  # the tree is full: finish this world from here
            t.stats[3] += 1
            node = -1
            break
        s = -1 - found
        node = t.used[0]
        t.used[0] += 1
        t.keys[s, 0], t.keys[s, 1] = h1, h2
        t.slot[s] = node
        t.visits[node] = 0
        t.value[node] = 0.0
        t.width[node] = -1
        t.stats[2] += 1
        if v[OUTCOME] != 0:
            value = _value(b, v, shaped, standing)
            break
        _expand(t, node, b, v, recent, weights, width, temp, x)
        break
    if (
        value < 0.0
        and cfg.leaf > 0
        and endgame_solved(w, memo, b, v, recent, leave, cfg.leaf, weights)
    ):
        value = 1.0
    if value < 0.0:
        learned = net_value(cfg.net, b, v, cfg.rows, recent, leave) if lam > 0.0 else 0.0
        if cfg.afterstate_mix > 0.0 and depth > 0 and v[OUTCOME] == 0:
            lam = cfg.afterstate_mix  # (the agent refuses both mixes at once)
            learned = afterstate_value(cfg.afterstate, b, v)
        if lam < 1.0:
            value = (1.0 - lam) * _playout(x, w, memo, cfg, line) + lam * learned
            t.stats[1] += 1
        else:
            value = learned
    if node >= 0:
        t.visits[node] += 1
        t.value[node] += value
    for d in range(depth):
        p, e = t.path[d, 0], t.path[d, 1]
        t.visits[p] += 1
        t.value[p] += value
        t.n[p, e] += 1
        t.w[p, e] += value
    t.stats[0] += 1


@njit(cache=True)
def _copy_rows(b, v, b0, v0):
    """A position's rows ``b0``/``v0`` into ``b``/``v`` (the card words a search reads)."""
    for k in range(NEED):
        b[k] = b0[k]
    for k in range(INT_WORDS):
        v[k] = v0[k]


@njit(cache=True)
def _deal(x, b0, v0, rng):
    _copy_rows(x.B[0], x.V[0], b0, v0)
    shuffle_unseen(x.B[0], x.V[0], rng)


@njit(cache=True)
def _halving(t, x, w, memo, b0, v0, cfg, iterations):
    """Sequential halving over the root's children with common worlds: each round deals
    worlds and plays every child still in the running in each of them, then keeps the better
    half by mean value. The children left in a round have met the same worlds in every round,
    so their means differ by the moves, not by the luck of the draw. Returns the winner."""
    k = t.width[0]
    alive = np.arange(k)
    m = k
    rounds = 0
    q = 1
    while q < k:
        q *= 2
        rounds += 1
    wb = np.empty(NEED, np.int8)
    wv = np.empty(INT_WORDS, np.int32)
    spent = 0
    for r in range(rounds):
        per = max(1, (iterations - spent) // ((rounds - r) * m))
        for _ in range(per):
            _deal(x, b0, v0, t.rng)
            _copy_rows(wb, wv, x.B[0], x.V[0])
            for j in range(m):
                _copy_rows(x.B[0], x.V[0], wb, wv)
                _iterate(t, x, w, memo, cfg, alive[j])
                spent += 1
        # best mean first; equal means keep the scorer's order (a stable insertion sort)
        for i in range(1, m):
            a = alive[i]
            qa = t.w[0, a] / t.n[0, a]
            j = i - 1
            while j >= 0 and t.w[0, alive[j]] / t.n[0, alive[j]] < qa:
                alive[j + 1] = alive[j]
                j -= 1
            alive[j + 1] = a
        m = (m + 1) // 2
    return alive[0]


@njit(cache=True, inline="always")
def _start(t, x, w, b0, v0, cfg, seed, root_logits, root_mix, root_width):
    """A search's first steps: the tree cleared, the random streams seeded, the root's view
    in ``x``'s row 0, the root expanded (even where every world is lost: its first child is
    then the scorer's move) and its priors mixed."""
    clear(t)
    t.rng[0] = np.uint64(seed * 2654435761 + 88172645463325252) | np.uint64(1)
    w.rng[0] = np.uint64(seed * 40503 + 1442695040888963407) | np.uint64(1)
    h1, h2 = view_hash(b0, v0, _ZV)
    s = -1 - _find(t, h1, h2)
    t.keys[s, 0], t.keys[s, 1] = h1, h2
    t.slot[s] = 0
    t.used[0] = 1
    t.visits[0] = 0
    t.value[0] = 0.0
    t.width[0] = -1
    _copy_rows(x.B[0], x.V[0], b0, v0)
    top = root_width if root_width > 0 else cfg.width
    _expand(t, 0, x.B[0], x.V[0], cfg.recent, cfg.weights, top, cfg.temp, x)
    if root_mix > 0.0:
        _mix_root_prior(t, root_logits, root_mix)


@njit(cache=True, inline="always")
def _most_visited(t, x, w, memo, b0, v0, cfg, iterations):
    """``iterations`` iterations from the root; the index of its most visited child (ties:
    the scorer's order)."""
    for _it in range(iterations):
        _deal(x, b0, v0, t.rng)
        _iterate(t, x, w, memo, cfg, -1)
    best = 0
    for i in range(t.width[0]):
        if t.n[0, i] > t.n[0, best]:
            best = i
    return best


@njit(cache=True)
def search(t, x, w, memo, b0, v0, cfg, iterations, seed, root_logits, root_mix, root_width):
    """``iterations`` iterations from the view in rows ``b0``/``v0`` with the settings ``cfg``
    (``Settings``; module docstring); the root's statistics stay in node 0 of ``t``; with
    ``root_mix`` > 0 the root's priors are ``root_mix`` times a softmax of ``root_logits``
    (one per action id, a move network's) over its children plus the rest times the
    scorer's. The root has ``root_width`` children (0: ``cfg.width``). Returns the index of
    the root's most visited child (ties: the scorer's order). With ``cfg.chance`` > 0 each
    edge whose move draws unseen cards keeps at most that many draws (``sparse_outcome``)."""
    _start(t, x, w, b0, v0, cfg, seed, root_logits, root_mix, root_width)
    return _most_visited(t, x, w, memo, b0, v0, cfg, iterations)


@njit(cache=True)
def search_halving(t, x, w, memo, b0, v0, cfg, iterations, seed, root_logits, root_mix, root_width):
    """``search`` whose root runs sequential halving over common worlds (``_halving``)
    instead: returns the child it keeps. A kernel of its own, compiled only where a search
    asks for halving (the whole search is compiled again inside each kernel that calls it)."""
    _start(t, x, w, b0, v0, cfg, seed, root_logits, root_mix, root_width)
    if t.width[0] > 1:
        return _halving(t, x, w, memo, b0, v0, cfg, iterations)
    return _most_visited(t, x, w, memo, b0, v0, cfg, iterations)
