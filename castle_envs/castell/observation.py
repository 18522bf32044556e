"""Castell's observation: one float32 vector per seat, everything public plus the bag's counts.

All values lie in [0, 1] (counts are divided by a fixed bound and clipped). Players are listed
from the observer's seat onward (own state first), so one policy serves every seat; seats
beyond ``num_players`` are zero.

| block | size | content |
|---|---|---|
| round | 10 | one-hot round 1-10 |
| turn | 8 | observer to act; current player's Move / Train / Special taken; recruits/2; second recruit open; tower edits used / limit; advanced wheel |
| wheel | 56 | rotation one-hot (8); tile kind one-hot (6: five skills, special) per wheel position (8x6) |
| offers | 48 | kind one-hot showing in each region's window (7x6) and the All Regions window (6; zero on the advanced side) |
| regions | 70 | castellers per region per number / 5 |
| local performances | 210 | per region row and slot (7x2x15): present, shape flag, shape widths bottom first (5, /8), exhibition flag, the named skills (5), levels / 5, points / 5 |
| lying tokens | 7 | special-action tokens in each region's performance area / 8 |
| festivals | 280 | per calendar space (14x20): held, still to come, region one-hot 7, size-token counts per number 10 (/2), round / 10 |
| bag | 10 | castellers left in the bag per number / 15 (public by counting) |
| players | 4x121 | present, to act, pawn one-hot (off board + 7), castellers owned per number /8 (10), free per number /8 (10), tower levels 13x4 (present, width/8, lower number/10, mixed/8), skills / max (5), forced uses Balance/Strength/Mix / max (3), tokens left / 7, collected tokens per region / 4 (7), size tokens per number / 2 (10), size tokens per region / 2 (7), prizes trophy/medal/ribbon / 8 (3), local performance points / 20, best tower score / 20, tiles performed / 8 |
"""

from __future__ import annotations

import numpy as np

from . import data as D
from .rules import NR, NS, State, forced_uses

MAX_PLAYERS = 4
TOWER_SLOTS = (
    13  # 10 numbers + 3 Strength levels at the default max_skill; higher levels are not shown
)
PLAYER_SIZE = 2 + 8 + 10 + 10 + TOWER_SLOTS * 4 + 5 + 3 + 1 + 7 + 10 + 7 + 3 + 3
LP_FEATURES = 15
FEST_FEATURES = 20

_blocks = [
    ("round", 10),
    ("turn", 8),
    ("wheel", 56),
    ("offers", 48),
    ("regions", NR * NS),
    ("local_performances", NR * D.LP_PER_ROW * LP_FEATURES),
    ("lying_tokens", NR),
    ("festivals", len(D.CALENDAR) * FEST_FEATURES),
    ("bag", NS),
    ("players", MAX_PLAYERS * PLAYER_SIZE),
]
OFFSETS = {}
_at = 0
for _name, _size in _blocks:
    OFFSETS[_name] = (_at, _at + _size)
    _at += _size
OBS_SIZE = _at

_EYE6 = np.eye(6, dtype=np.float32)


def _build_tile_table() -> np.ndarray:
    """Features per tile id; the last row (index -1) is an empty slot."""
    table = np.zeros((len(D.LOCAL_PERFORMANCES) + 1, LP_FEATURES), dtype=np.float32)
    for tile, t in enumerate(D.LOCAL_PERFORMANCES):
        f = table[tile]
        f[0] = 1
        if t.kind == "shape":
            f[1] = 1
            f[2 : 2 + len(t.shape)] = np.array(t.shape) / 8
            f[13] = len(t.shape) / 5
        else:
            f[7] = 1
            for k in t.skills:
                f[8 + k] = 1
            f[13] = t.points / 5
        f[14] = t.points / 5
    return table


TILE_TABLE = _build_tile_table()


def observe(state: State, seat: int) -> np.ndarray:
    # Blocks are cached on the state: a player's block changes only on that player's steps
    # and at the end of a round, the wheel and calendar only at the end of a round.
    # The board blocks change only when castellers, tiles or tokens leave the board.
    cache = state.__dict__.get("_obs_cache")
    if cache is None or cache["round"] != state.round:
        cache = state._obs_cache = {
            "round": state.round,
            "players": {},
            "static": _round_blocks(state),
            "board": (-1, None),
        }
    if cache["board"][0] != state.board_version:
        cache["board"] = (state.board_version, _board_blocks(state, cache["static"]))
    obs = cache["board"][1].copy()
    P = state.num_players
    t0 = OFFSETS["turn"][0]
    obs[t0 : t0 + 8] = (
        state.current_player == seat,
        state.moved,
        state.trained,
        state.specialed,
        state.recruits / 2,
        state.recruit_open,
        state.edits / state.edit_limit,
        state.advanced,
    )
    p0 = OFFSETS["players"][0]
    current = state.current_player
    versions = state.player_version
    blocks = cache["players"]
    for i in range(P):
        p = (seat + i) % P
        block = blocks.get(p)
        if block is None or block[0] != versions[p]:
            out = np.zeros(PLAYER_SIZE, dtype=np.float32)
            _player(state, p, out)
            blocks[p] = block = (versions[p], out)
        at = p0 + i * PLAYER_SIZE
        obs[at : at + PLAYER_SIZE] = block[1]
        obs[at + 1] = p == current
    return obs


def _board_blocks(state: State, static: np.ndarray) -> np.ndarray:
    """Regions, local performance rows and lying tokens, over the round's blocks."""
    obs = static.copy()
    r0 = OFFSETS["regions"][0]
    obs[r0 : r0 + NR * NS] = np.minimum(state.regions.ravel() / 5, 1)
    l0, l1 = OFFSETS["local_performances"]
    obs[l0:l1] = TILE_TABLE[state.lp.ravel()].ravel()
    k0 = OFFSETS["lying_tokens"][0]
    obs[k0 : k0 + NR] = np.minimum(state.lp_tokens.sum(axis=1) / 8, 1)
    return obs


def _round_blocks(state: State) -> np.ndarray:
    """The blocks that change only between rounds: round, wheel, offers, calendar, bag."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    obs[min(state.round, D.ROUNDS) - 1] = 1
    w0 = OFFSETS["wheel"][0]
    obs[w0 + state.rotation] = 1
    obs[w0 + 8 : w0 + 56] = _EYE6[state.wheel].ravel()
    o0 = OFFSETS["offers"][0]
    shown = [state.window_kind(w) for w in range(D.WHEEL_WINDOWS)]
    obs[o0 : o0 + 48] = _EYE6[shown].ravel()
    if state.advanced:
        obs[o0 + 42 : o0 + 48] = 0
    obs[OFFSETS["festivals"][0] : OFFSETS["festivals"][1]] = _festivals(state).ravel()
    b0 = OFFSETS["bag"][0]
    obs[b0 : b0 + NS] = np.bincount(np.array(state.bag, dtype=np.int64), minlength=NS) / 15
    return obs


def _festivals(state: State) -> np.ndarray:
    f = np.zeros((len(D.CALENDAR), FEST_FEATURES), dtype=np.float32)
    for i, (rnd, _) in enumerate(D.CALENDAR):
        f[i, 0] = state.fest_held[i]
        f[i, 1] = rnd >= state.round
        f[i, 2 + state.fest_region[i]] = 1
        for s in state.fest_sizes[i]:
            f[i, 9 + s] += 0.5
        f[i, 19] = rnd / 10
    return f


_TOWER_AT = 30
_SKILLS_AT = _TOWER_AT + TOWER_SLOTS * 4
_WON_AT = _SKILLS_AT + 9  # collected tokens onwards: changes only on performing
_TOKEN_SCALE = np.array([1 / 4] * NR, dtype=np.float32)


def _player(state: State, p: int, out: np.ndarray) -> None:
    out[0] = 1
    out[2 + state.pawn[p] + 1] = 1
    hand = state.hand[p]
    out[10:30] = np.minimum(np.concatenate((hand, hand - state.in_tower[p])) * 0.125, 1)
    tower = state.towers[p]
    if tower:
        rows = [(1.0, w / 8, (lo + 1) / 10, m / 8) for w, lo, m in tower[:TOWER_SLOTS]]
        out[_TOWER_AT : _TOWER_AT + 4 * len(rows)] = np.array(rows, dtype=np.float32).ravel()
    at = _SKILLS_AT
    uses = forced_uses(tower) if tower else (0, 0, 0)
    out[at : at + 9] = np.minimum(
        np.concatenate((state.skills[p], uses, (0,))) / state.max_skill, 1
    )
    out[at + 8] = state.tokens[p] / D.TOKENS_PER_PLAYER
    out[_WON_AT:] = _won_block(state, p)


def _won_block(state: State, p: int) -> np.ndarray:
    """Tokens, tiles, prizes, best score: they change only when performing or at festivals,
    so the block is cached per (round, tiles performed)."""
    cache = state.__dict__.setdefault("_won_cache", {})
    key = (state.round, len(state.performed[p]))
    hit = cache.get(p)
    if hit is not None and hit[0] == key:
        return hit[1]
    out = np.zeros(PLAYER_SIZE - _WON_AT, dtype=np.float32)
    out[0:7] = np.minimum(state.collected[p] / 4, 1)
    out[7:17] = np.minimum(state.size_tokens[p].sum(axis=0) / 2, 1)
    out[17:24] = np.minimum(state.size_tokens[p].sum(axis=1) / 2, 1)
    out[24:27] = np.minimum(state.prizes[p].sum(axis=0) / 8, 1)
    lp_points = sum(D.LOCAL_PERFORMANCES[t].points for t, _ in state.performed[p])
    out[27] = min(lp_points / 20, 1)
    out[28] = min(state.best[p] / 20, 1)
    out[29] = min(len(state.performed[p]) / 8, 1)
    cache[p] = (key, out)
    return out


assert _WON_AT + 30 == PLAYER_SIZE
