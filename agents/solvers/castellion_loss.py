"""Cheap, sound proofs that a Castellion position is lost, for the perfect-information solver.

``loss_code(s, level, rules)`` reads a kernel row (``castellion.kernel``: both piles' order,
every face-down card) and returns ``(reason, slot, need, have)``: ``reason`` 0 when it proves
nothing, else the bound that shows the ordeal in ``slot`` cannot be met (``need`` against at
most ``have``). ``prove_loss(state)`` does the same for a ``castellion.rules.State`` and returns
the proof as a sentence, or None. Every bound is a relaxation: it lets the player do more
than the rules allow, so when even the relaxed player cannot meet an ordeal, nobody can, and
failing an Exam, a Simulation, an Earthworm or an Assault that cannot be survived loses the
game. The arguments, one per bound (``docs/castellion_winnability.md``, "Proofs of loss",
states them at length):

**Windows.** *School*: Traitors cannot be discarded and there is no early encounter, so ordeal
``j`` is encountered no later than when the ``sum(T_cur..T_j) - beside``-th Traitor still to
come (the hand first, then the regular pile from the top) is placed (a complete castle or
the last tile played can only bring it sooner). Until then the player can place at most the
Defenders in hand, in the safe pile and above that Traitor in the regular pile: the
*window* of ordeal ``j``. If too few Traitors are left the window is every tile.
*Academy / Menace*: normal Traitors can be discarded, but black ones must be placed, so the
current ordeal is encountered no later than when its ``T - beside``-th black Traitor still to
come is played. A Seer can *park* that Traitor face up and keep revealing below it: while
it lies face up, every reveal comes from a Seer power, each power reveals at most 3 tiles
(the parked Traitor holds one of the 4 places), and each power needs a Seer taken from the
face-up tiles, or a Chameleon recovering a Seer. So the window is the hand, the revealed
tiles, the safe pile, the regular pile above that Traitor and the first ``R`` tiles below it,
where ``R`` is found by scanning down with a budget of 3 reveals (the batch that reveals
it), 3 more for each Seer or Chameleon that could lie face up beside it (at most 3) or come
from the safe pile, and 3 more for each Seer or Chameleon met in the scan (each scanned tile
costs one). A Chameleon can also put a discarded tile back (never a Chameleon, I5): the
tiles of a faction that can be in the castle at the encounter are at most those in the
castle, in the window and, for the three other factions, in the discard pile (as many of
each shape as there are Chameleons of that shape in the window).

**Requirements** (the castle when the ordeal is encountered, ``k`` formations):

1. *foundation* (School): a complete foundation needs ``6 - width`` more placements.
2. *rows* (Exam II, Earthworm): removing ``r`` rows leaves a complete foundation only if
   every column is ``r + 1`` high: ``sum(max(0, r + 1 - height))`` placements (School; at the
   other levels: ``6 (r + 1)`` tiles in the castle).
3. *factions*: a formation is four tiles of one faction, formations are disjoint, so a
   faction with ``a`` usable tiles makes at most ``a // 4``. At the School tiles never move
   and nothing is destroyed before an encounter (Exam II's row removal is the only loss of
   tiles, at its own encounter), so a same-faction group only grows: a group of four or
   more tiles that is not a formation now never becomes one, an exact formation counts as
   met, and each new formation needs a placed tile of its faction. Rule 3 holds for every
   tile placed outside the foundation, and Juggler and Pyro (which ignore it) do not exist
   at the School: four tiles in a path or a 2 x 2 square with no two orthogonal neighbours of
   one shape hold at most 2 of any shape, so ``c`` formations of a faction need 4c of its
   tiles with at most ``2c`` of each shape; one line in the foundation (placed there, rule 3
   waived) may hold 4 (``2c + 2``); with ``foundation_exemption="neighbors"`` a tile on row 1
   is not checked against the one below, so ``3c + 1``.
4. *geometry* (School, the current ordeal): each missing formation must sit on four cells
   of the 6 x 6 extent the castle can still reach (it can grow to either side while under 6
   wide) that are empty or hold its faction's tiles, with no tile of its faction next to it
   (it would join the group: groups only grow). Its empty cells need that many placements
   of its faction, and its columns (and any new columns between it and the castle) must be
   built up to it. Formations are disjoint, so the placements of the missing formations add
   up: an assignment of them to factions must fit each faction's window and the whole
   window, and the costliest one with its supports must fit the window.
5. *Assaults*: a met Assault costs nothing; otherwise ``max(0, P - 4 bastions)`` tiles are
   destroyed and a complete foundation must remain: the castle needs ``6 + max(0, P - 4b)``
   tiles and ``b`` bastions (``4b`` tiles of factions as in 3), at most 36.
6. *forced now*: a Traitor in hand that completes the current ordeal's count (a black one
   at the Academy or Menace) is placed or the ordeal is encountered early: either way the
   ordeal meets the castle as it is, checked exactly as ``_encounter`` does.

At the School the current ordeal and every later one get bounds 1-4 (for Exam III after Exam
II: the tiles now in row 0 and the ``6 - width`` placed in row 0 later are removed first, and
groups may shrink then, so only bound 3 without the group rule). At the Academy and the
Menace only the current ordeal and bounds 2, 3, 5, 6 (tiles move and are destroyed there).
The bounds are used only in the draw, Defender and Traitor phases (elsewhere: no proof).
"""

from __future__ import annotations

import numpy as np

from castle_envs.castellion import kernel as K
from castle_envs.castellion.data import ORDEALS, SCHOOL
from castle_envs.core.jit import njit

NONE, LOST, FOUNDATION, ROWS, FACTIONS, GEOMETRY, ASSAULT, FORCED, TILES = range(9)
REASONS = (
    "",
    "the game is lost",
    "the foundation cannot be completed in time",
    "the columns cannot be built high enough for the row removal",
    "too few tiles of the factions and shapes its formations need",
    "its missing formations do not fit the castle within the tiles that can come",
    "the Assault can neither be met nor survived with the tiles that can come",
    "the encounter is forced now and the castle fails it",
    "too few tiles can reach the castle",
)
INF = 1 << 20
ALL = (1 << 9) - 1  # every bound on (``loss_code``'s ``on``)
_SEER, _CHAM = 0, 1  # factions (data.SEER, data.CHAMELEON)

# formation patterns: (dr, dc) of their four cells; 0 tower, 1 bastion, 2 line
_PAT = np.array(
    [
        [[0, 0], [1, 0], [2, 0], [3, 0]],
        [[0, 0], [0, 1], [1, 0], [1, 1]],
        [[0, 0], [0, 1], [0, 2], [0, 3]],
    ],
    np.int64,
)
_PAT_H = np.array([4, 2, 1], np.int64)
_PAT_W = np.array([1, 2, 4], np.int64)


@njit(cache=True)
def _req(card):
    return K.ORD_TOWERS[card], K.ORD_BASTIONS[card], K.ORD_LINES[card]


@njit(cache=True)
def _max_formations(n3, cap_base, cap_extra, limit):
    """The most formations (at most ``limit``) four tiles each of one faction with ``n3`` tiles
    per shape make, at most ``cap_base * c + cap_extra`` of one shape among ``c`` of them."""
    best = 0
    for c in range(1, limit + 1):
        cap = cap_base * c + cap_extra
        got = min(n3[0], cap) + min(n3[1], cap) + min(n3[2], cap)
        if got >= 4 * c:
            best = c
    return best


@njit(cache=True)
def _school_window(s, to_go, cnt):
    """The School window (module docstring) of the ordeal whose encounter is ``to_go``
    Traitors away: its Defenders per kind into ``cnt``; returns their number."""
    for k in range(K.NUM_DEFENDER_KINDS):
        cnt[k] = 0
    total = 0
    hand = s[K.HAND]
    if hand >= K.NUM_DEFENDER_KINDS:
        to_go -= 1
        if to_go <= 0:
            return 0
    elif hand >= 0:
        cnt[hand] += 1
        total += 1
    for i in range(s[K.SAFE_N]):
        cnt[s[K.SAFE + i]] += 1
        total += 1
    for i in range(s[K.REG_N] - 1, -1, -1):
        k = s[K.REG + i]
        if k >= K.NUM_DEFENDER_KINDS:
            to_go -= 1
            if to_go == 0:
                break
        else:
            cnt[k] += 1
            total += 1
    return total


@njit(cache=True)
def _is_sc(k):
    return k >= 0 and k < K.NUM_DEFENDER_KINDS and k // 3 <= _CHAM


@njit(cache=True)
def _parked_window(s, to_go, cnt):
    """The Academy / Menace window of the current ordeal (module docstring): Defenders per kind
    into ``cnt``; returns (their number, whether a deadline exists)."""
    for k in range(K.NUM_DEFENDER_KINDS):
        cnt[k] = 0
    total = 0
    hand = s[K.HAND]
    black_up = 0
    sc_up = 0
    if hand == K.BLACK_TRAITOR:
        black_up += 1
    elif 0 <= hand < K.NUM_DEFENDER_KINDS:
        cnt[hand] += 1
        total += 1
        sc_up += 1 if _is_sc(hand) else 0
    for i in range(s[K.REV_N]):
        k = s[K.REV + i]
        if k == K.BLACK_TRAITOR:
            black_up += 1
        elif k < K.NUM_DEFENDER_KINDS:
            cnt[k] += 1
            total += 1
            sc_up += 1 if _is_sc(k) else 0
    sc_safe = 0
    for i in range(s[K.SAFE_N]):
        k = s[K.SAFE + i]
        cnt[k] += 1
        total += 1
        sc_safe += 1 if _is_sc(k) else 0
    need = to_go - black_up
    top = s[K.REG_N] - 1
    if need > 0:
        sc_above = 0
        i = top
        while i >= 0:
            k = s[K.REG + i]
            i -= 1
            if k == K.BLACK_TRAITOR:
                need -= 1
                if need == 0:
                    break
            elif k < K.NUM_DEFENDER_KINDS:
                cnt[k] += 1
                total += 1
                sc_above += 1 if _is_sc(k) else 0
        if need > 0:
            return total, False  # no deadline: every tile can come
        budget = 3 + 3 * min(3, sc_above + sc_up + sc_safe) + 3 * sc_safe
        start = i  # the first tile below the deadline
    else:
        # the deadline already lies face up (or in hand): only Seer powers reveal more
        budget = 3 * (sc_up + sc_safe)
        start = top
    i = start
    while i >= 0 and budget > 0:
        k = s[K.REG + i]
        i -= 1
        budget -= 1
        if k < K.NUM_DEFENDER_KINDS:
            cnt[k] += 1
            total += 1
            if _is_sc(k):
                budget += 3
    return total, True


@njit(cache=True)
def _exact_check(s, card):
    """The encounter of ``card`` with the castle as it is: does it pass (``_encounter``)?"""
    kind = K.ORD_KIND[card]
    if kind == K.K_ROWS:
        rows = K.ORD_ROWS[card]
        for c in range(K.SIZE):
            if s[K.HEIGHT + c] < rows + 1:
                return False
        return True
    t, b, li = K.formations(s)
    met = t >= K.ORD_TOWERS[card] and b >= K.ORD_BASTIONS[card] and li >= K.ORD_LINES[card]
    full = K.foundation_complete(s)
    if kind == K.K_FORMATIONS or met:
        return met and full
    penalty = max(0, K.ORD_PENALTY[card] - 4 * b)
    if not penalty:
        return full
    return full and K.castle_size(s) - penalty >= K.SIZE


@njit(cache=True)
def _grid(s, g):
    for i in range(K.CELLS):
        g[i] = s[K.CELL + i]


@njit(cache=True)
def _min_costs(s, faction, kind, out):
    """School geometry (bound 4): the fewest placements of ``faction`` that complete a new
    ``kind`` formation (``out[0]``; INF if none fits) and the fewest placements in all, its
    supporting columns included (``out[1]``)."""
    width = K.castle_width(s)
    room = K.SIZE - width
    best_f = INF
    best_t = INF
    ph = _PAT_H[kind]
    pw = _PAT_W[kind]
    for r0 in range(K.SIZE - ph + 1):
        for x0 in range(-room, K.SIZE - pw + 1):
            lo = min(0, x0) if width else x0
            hi = max(width - 1, x0 + pw - 1) if width else x0 + pw - 1
            if hi - lo + 1 > K.SIZE:
                continue
            ok = True
            cost = 0
            for q in range(4):
                r = r0 + _PAT[kind, q, 0]
                x = x0 + _PAT[kind, q, 1]
                if 0 <= x < width and r < s[K.HEIGHT + x]:
                    if s[K.CELL + r * K.SIZE + x] // 3 != faction:
                        ok = False
                        break
                else:
                    cost += 1
            if not ok or cost == 0:
                continue
            # no tile of the faction next to the formation
            for q in range(4):
                r = r0 + _PAT[kind, q, 0]
                x = x0 + _PAT[kind, q, 1]
                for d in range(4):
                    rr = r + (1 if d == 0 else (-1 if d == 1 else 0))
                    xx = x + (1 if d == 2 else (-1 if d == 3 else 0))
                    if rr < 0 or rr >= K.SIZE:
                        continue
                    inside = False
                    for q2 in range(4):
                        if r0 + _PAT[kind, q2, 0] == rr and x0 + _PAT[kind, q2, 1] == xx:
                            inside = True
                    if inside:
                        continue
                    if (
                        0 <= xx < width
                        and rr < s[K.HEIGHT + xx]
                        and s[K.CELL + rr * K.SIZE + xx] // 3 == faction
                    ):
                        ok = False
                if not ok:
                    break
            if not ok:
                continue
            total = 0
            for x in range(lo, hi + 1):
                need = 0
                for q in range(4):
                    if x0 + _PAT[kind, q, 1] == x:
                        need = max(need, r0 + _PAT[kind, q, 0] + 1)
                if need == 0 and not (0 <= x < width):
                    need = 1  # a new column between castle and formation
                cur = s[K.HEIGHT + x] if 0 <= x < width else 0
                total += max(0, need - cur)
            if cost < best_f:
                best_f = cost
            if total < best_t:
                best_t = total
    out[0] = best_f
    out[1] = best_t


@njit(cache=True)
def _live_tiles(s, faction, n3):
    """School: the faction's tiles in groups of at most three (the only ones a new formation
    can use) per shape into ``n3``."""
    board = K.faction_board(s, faction)
    while board:
        comp = K.component(board, board & -board)
        board &= ~comp
        if K.popcount(comp) <= 3:
            x = comp
            while x:
                n3[s[K.CELL + K.low_bit_index(x)] % 3] += 1
                x &= x - np.int64(1)


@njit(cache=True)
def _school_current(s, card, cnt, total, rules, first, on):
    """Bounds 1-4 for the School's current ordeal ``card`` with window ``cnt``/``total``.
    Returns (reason, need, have)."""
    width = K.castle_width(s)
    if on >> FOUNDATION & 1 and 6 - width > total:
        return FOUNDATION, 6 - width, total
    if K.ORD_KIND[card] == K.K_ROWS:
        rows = K.ORD_ROWS[card]
        need = 0
        for c in range(K.SIZE):
            need += max(0, rows + 1 - s[K.HEIGHT + c])
        if on >> ROWS & 1 and need > total:
            return ROWS, need, total
        return NONE, 0, 0
    nt, nb, nl = _req(card)
    t, b, li = K.formations(s)
    miss = np.zeros(3, np.int64)
    miss[0] = max(0, nt - t)
    miss[1] = max(0, nb - b)
    miss[2] = max(0, nl - li)
    m = miss[0] + miss[1] + miss[2]
    if m == 0:
        return NONE, 0, 0
    # bound 3: factions and shapes
    neighbors = rules & K.NEIGHBORS_EXEMPT
    cap_base = 3 if neighbors else 2
    cap_extra = 1 if neighbors else (2 if first else 0)
    sup = np.zeros(4, np.int64)
    got = 0
    n3 = np.zeros(3, np.int64)
    for f in range(4):
        n3[:] = 0
        _live_tiles(s, f, n3)
        for sh in range(3):
            n3[sh] += cnt[f * 3 + sh]
            sup[f] += cnt[f * 3 + sh]
        got += _max_formations(n3, cap_base, cap_extra, min(m, sup[f]))
    if on >> FACTIONS & 1 and got < m:
        return FACTIONS, m, got
    if not on >> GEOMETRY & 1:
        return NONE, 0, 0
    # bound 4: geometry, the missing formations assigned to factions
    cost = np.zeros((3, 4), np.int64)
    tot = np.zeros((3, 4), np.int64)
    out = np.zeros(2, np.int64)
    for kind in range(3):
        if miss[kind]:
            for f in range(4):
                _min_costs(s, f, kind, out)
                cost[kind, f] = out[0]
                tot[kind, f] = out[1]
    kinds = np.zeros(m, np.int64)
    j = 0
    for kind in range(3):
        for _ in range(miss[kind]):
            kinds[j] = kind
            j += 1
    best = INF
    use = np.zeros(4, np.int64)
    for code in range(4**m):
        use[:] = 0
        x = code
        ok = True
        placed = 0
        for q in range(m):
            f = x % 4
            x //= 4
            c = cost[kinds[q], f]
            if c >= INF or tot[kinds[q], f] > total:
                ok = False
                break
            use[f] += c
            placed += c
        if not ok:
            continue
        for f in range(4):
            if use[f] > sup[f]:
                ok = False
        if ok:
            best = min(best, placed)
            if placed <= total:
                return NONE, 0, 0
    return GEOMETRY, best if best < INF else m, total


@njit(cache=True)
def _school_exam3_later(s, card, cnt, total, rules, on):
    """Bound 3 for Exam III seen before Exam II: the tiles in row 0 now and the ``6 - width``
    placed there later are removed first (groups may shrink then: no group rule)."""
    width = K.castle_width(s)
    nt, nb, nl = _req(card)
    k = nt + nb + nl
    above = 0
    sup = np.zeros(4, np.int64)
    n34 = np.zeros((4, 3), np.int64)
    for c in range(K.SIZE):
        for r in range(1, s[K.HEIGHT + c]):
            kind = s[K.CELL + r * K.SIZE + c]
            n34[kind // 3, kind % 3] += 1
            above += 1
    for kind in range(K.NUM_DEFENDER_KINDS):
        n34[kind // 3, kind % 3] += cnt[kind]
        sup[kind // 3] += cnt[kind]
    usable = above + total - (6 - width)
    if on >> TILES & 1 and usable < max(4 * k, K.SIZE):
        return TILES, max(4 * k, K.SIZE), usable
    neighbors = rules & K.NEIGHBORS_EXEMPT
    cap_base = 3 if neighbors else 2
    cap_extra = 1 if neighbors else 0
    got = 0
    for f in range(4):
        got += _max_formations(n34[f], cap_base, cap_extra, k)
    if on >> FACTIONS & 1 and got < k:
        return FACTIONS, k, got
    return NONE, 0, 0


@njit(cache=True)
def _counts_check(s, card, cnt, total, on):
    """Academy / Menace: bounds 2, 3 and 5 with the window ``cnt``/``total`` (module
    docstring: castle, window and recoverable discards; no shape or group rule)."""
    n = K.castle_size(s) + total
    kind = K.ORD_KIND[card]
    if kind == K.K_ROWS:
        need = K.SIZE * (K.ORD_ROWS[card] + 1)
        if on >> ROWS & 1 and n < need:
            return ROWS, need, n
        return NONE, 0, 0
    cham = np.zeros(3, np.int64)
    for sh in range(3):
        cham[sh] = cnt[_CHAM * 3 + sh]
    a = np.zeros(4, np.int64)
    for c in range(K.SIZE):
        for r in range(s[K.HEIGHT + c]):
            a[s[K.CELL + r * K.SIZE + c] // 3] += 1
    if s[K.LIFTED] >= 0:
        a[s[K.LIFTED] // 3] += 1
        n += 1
    for k in range(K.NUM_DEFENDER_KINDS):
        a[k // 3] += cnt[k]
        if k // 3 != _CHAM:
            a[k // 3] += min(s[K.DISC + k], cham[k % 3])
    forms = a[0] // 4 + a[1] // 4 + a[2] // 4 + a[3] // 4
    n = min(n, K.CELLS)
    nt, nb, nl = _req(card)
    k = nt + nb + nl
    can_meet = forms >= k and n >= max(K.SIZE, 4 * k)
    if kind == K.K_FORMATIONS:
        if can_meet:
            return NONE, 0, 0
        if forms < k:
            return (FACTIONS, k, forms) if on >> FACTIONS & 1 else (NONE, 0, 0)
        return (TILES, max(K.SIZE, 4 * k), n) if on >> TILES & 1 else (NONE, 0, 0)
    if can_meet or not on >> ASSAULT & 1:
        return NONE, 0, 0
    for b in range(0, forms + 1):
        need = K.SIZE + max(0, K.ORD_PENALTY[card] - 4 * b)
        if n >= max(need, 4 * b):
            return NONE, 0, 0
    return ASSAULT, K.SIZE + max(0, K.ORD_PENALTY[card] - 4 * forms), n


@njit(cache=True)
def loss_code(s, level, rules, on=ALL):
    """(reason, slot, need, have): reason 0 when no bound proves the position lost (module
    docstring), else the bound that shows ordeal ``slot`` cannot be met. ``on``: the bounds
    to use, bit ``1 << reason`` each (the tests check each bound alone)."""
    out = s[K.OUTCOME]
    if out == -1:
        return LOST, s[K.CURRENT], 0, 0
    if out == 1:
        return NONE, 0, 0, 0
    phase = s[K.PHASE]
    if phase != K.DRAW_PHASE and phase != K.DEFENDER_PHASE and phase != K.TRAITOR_PHASE:
        return NONE, 0, 0, 0
    cur = s[K.CURRENT]
    card = s[K.ORD + cur]
    beside = s[K.BESIDE + 2 * cur] + s[K.BESIDE + 2 * cur + 1]
    to_go = K.ORD_TRAITORS[card] - beside
    hand = s[K.HAND]
    # bound 6: a Traitor in hand that completes the count
    if (
        on >> FORCED & 1
        and phase == K.TRAITOR_PHASE
        and to_go == 1
        and (level == SCHOOL or hand == K.BLACK_TRAITOR)
    ) and not _exact_check(s, card):
        return FORCED, cur, 0, 0
    cnt = np.zeros(K.NUM_DEFENDER_KINDS, np.int64)
    if level == SCHOOL:
        for j in range(cur, 3):
            cj = s[K.ORD + j]
            total = _school_window(s, to_go, cnt)
            if j == cur:
                r, need, have = _school_current(s, cj, cnt, total, rules, cur == 0, on)
            elif K.ORD_KIND[cj] == K.K_ROWS:
                r, need, have = _school_current(s, cj, cnt, total, rules, False, on)
            elif j == 2 and K.ORD_KIND[s[K.ORD + 1]] == K.K_ROWS and K.ORD_ROWS[s[K.ORD + 1]] == 1:
                r, need, have = _school_exam3_later(s, cj, cnt, total, rules, on)
            else:
                r = NONE
            if r != NONE:
                return r, j, need, have
            if j < 2:
                to_go += K.ORD_TRAITORS[s[K.ORD + j + 1]]
        return NONE, 0, 0, 0
    total, deadline = _parked_window(s, to_go, cnt)
    if not deadline:
        return NONE, 0, 0, 0
    r, need, have = _counts_check(s, card, cnt, total, on)
    if r != NONE:
        return r, cur, need, have
    return NONE, 0, 0, 0


def describe(code, ordeals) -> str | None:
    """The proof as a sentence (``loss_code``'s result, the position's three card ids)."""
    reason, slot, need, have = (int(x) for x in code)
    if reason == NONE:
        return None
    title = ORDEALS[int(ordeals[slot])].title
    text = f"{title} (ordeal {slot + 1}) cannot be met: {REASONS[reason]}"
    if reason in (FOUNDATION, ROWS, GEOMETRY, TILES, ASSAULT):
        text += f" (needs {need} tiles, at most {have} can come)"
    elif reason == FACTIONS:
        text += f" (needs {need} formations, at most {have} possible)"
    return text


def prove_loss(state) -> str | None:
    """A proof that the ``castellion.rules.State`` is lost (a sentence naming the ordeal that
    cannot be met and why), or None when no bound here shows it."""
    from castle_envs.castellion.vector import write_state

    rules = state.rule_options()
    row = np.zeros(K.WORDS, np.int8)
    write_state(row, state, state.level, rules)
    return describe(loss_code(row, state.level, K.rule_flags(rules)), state.ordeals)
