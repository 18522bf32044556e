"""Castell's pictures: a text table (``ansi``) and an RGB image (``rgb_array``)."""
from __future__ import annotations

import numpy as np

from ..core.raster import BLACK, BLUE, GOLD, GREY, RED, WHITE, Canvas
from . import data as D
from .rules import NR, State, level_text

SEAT_COLORS = ((200, 40, 40), (40, 80, 200), (230, 200, 40), (40, 160, 60))
SKILL_ABBR = ("BAL", "BAS", "MIX", "STR", "WID")


def _numbers(counts) -> str:
    return " ".join(f"{s + 1}" + (f"x{c}" if c > 1 else "")
                    for s, c in enumerate(counts) if c) or "-"


def render_ansi(state: State) -> str:
    lines = []
    if state.is_terminal():
        lines.append("Castell - game over")
    else:
        lines.append(f"Castell - round {state.round}/{D.ROUNDS}, player_{state.current_player} "
                     f"to act (taken: " + ", ".join(
                         name for name, done in (("move", state.moved), ("recruit", state.recruits),
                                                 ("train", state.trained),
                                                 ("special", state.specialed)) if done)
                     + f"; tower edits {state.edits}/{state.edit_limit})")
    side = "No Regions" if state.advanced else "All Regions"
    lines.append(f"Wheel ({side} side): " + ", ".join(
        f"{D.REGION_ABBR[w]}={D.WHEEL_KIND_NAMES[state.window_kind(w)]}" for w in range(NR))
        + ("" if state.advanced else
           f", ALL={D.WHEEL_KIND_NAMES[state.window_kind(D.ALL_REGIONS_WINDOW)]}"))
    lines.append("Regions:")
    for r in range(NR):
        pawns = "".join(f"P{p}" for p in range(state.num_players) if state.pawn[p] == r)
        tiles = " | ".join(str(D.LOCAL_PERFORMANCES[t]) if t >= 0 else "(done)"
                           for t in state.lp[r])
        lines.append(f"  {D.REGIONS[r]:<10} [{pawns:<8}] castellers {_numbers(state.regions[r]):<22} "
                     f"tokens {int(state.lp_tokens[r].sum())}  LP: {tiles}  "
                     f"adj {','.join(D.REGION_ABBR[a] for a in D.ADJACENT[r])}")
    lines.append("Festivals:")
    for i, (rnd, phase) in enumerate(D.CALENDAR):
        if not state.fest_held[i]:
            continue
        status = "done" if rnd < state.round else "to come"
        sizes = ",".join(str(s + 1) for s in state.fest_sizes[i])
        lines.append(f"  round {rnd:>2} {'I' * phase:<2} {D.REGIONS[state.fest_region[i]]:<10} "
                     f"sizes {sizes:<5} {status}")
    lines.append(f"Bag: {len(state.bag)} castellers")
    for p in range(state.num_players):
        where = D.REGIONS[state.pawn[p]] if state.pawn[p] >= 0 else "off board"
        scores = state.category_scores(p)
        lines.append(f"player_{p}: pawn {where}; castellers {_numbers(state.hand[p])}; "
                     f"tokens {state.tokens[p]}")
        lines.append("   skills " + " ".join(f"{D.SKILLS[k]} {state.skills[p, k]}" for k in range(5))
                     + "; tower (bottom first): "
                     + (" / ".join(level_text(lv) for lv in state.towers[p]) or "none"))
        lines.append("   score " + ", ".join(f"{k} {v}" for k, v in scores.items())
                     + f" = {sum(scores.values())}")
    for f in state.last_festivals:
        lines.append(f"Last festival at {D.REGIONS[f['region']]}: scores {f['scores']}, "
                     f"prizes {f['prizes']}, size tokens {f['size_tokens']}")
    return "\n".join(lines) + "\n"


def render_rgb(state: State) -> np.ndarray:
    c = Canvas(480, 720)
    c.text(6, 8, f"CASTELL ROUND {min(state.round, D.ROUNDS)}", WHITE, 2)
    if not state.is_terminal():
        c.text(6, 260, f"P{state.current_player} TO ACT", SEAT_COLORS[state.current_player], 2)
    # regions: one card each, with pawns, castellers and local performance tiles
    for r in range(NR):
        top, left = 26 + (r // 4) * 110, 8 + (r % 4) * 176
        c.box(top, left, 104, 170, (230, 220, 190), BLACK)
        c.text(top + 4, left + 4, D.REGIONS[r][:10], BLACK, 2)
        kind = state.window_kind(r)
        c.text(top + 4, left + 116, (SKILL_ABBR + ("SPE",))[kind], BLUE, 2)
        for p in range(state.num_players):
            if state.pawn[p] == r:
                c.box(top + 18, left + 4 + 14 * p, 10, 10, SEAT_COLORS[p], BLACK)
        c.text(top + 34, left + 4, _numbers(state.regions[r])[:20], BLACK, 1)
        for j, t in enumerate(state.lp[r]):
            label = "-" if t < 0 else str(D.LOCAL_PERFORMANCES[t])[:40]
            c.text(top + 48 + 10 * j, left + 4, label, RED, 1)
        c.text(top + 72, left + 4, f"TOKENS {int(state.lp_tokens[r].sum())}", BLACK, 1)
    if not state.advanced:
        c.text(26 + 110 + 4, 8 + 3 * 176 + 4,
               f"ALL: {D.WHEEL_KIND_NAMES[state.window_kind(D.ALL_REGIONS_WINDOW)]}", GOLD, 2)
    upcoming = [i for i, (rnd, _) in enumerate(D.CALENDAR)
                if rnd >= state.round and state.fest_held[i]][:5]
    c.text(26 + 110 + 24, 8 + 3 * 176 + 4, "FESTIVALS", WHITE, 1)
    for k, i in enumerate(upcoming):
        sizes = ",".join(str(z + 1) for z in state.fest_sizes[i])
        c.text(26 + 110 + 36 + 10 * k, 8 + 3 * 176 + 4,
               f"R{D.CALENDAR[i][0]} {D.REGION_ABBR[state.fest_region[i]]} SIZES {sizes}", WHITE, 1)
    # players: towers drawn as stacked boxes, skills and scores
    for p in range(state.num_players):
        top, left = 252, 8 + p * 178
        c.box(top, left, 220, 172, (245, 245, 245), SEAT_COLORS[p])
        total = sum(state.category_scores(p).values())
        c.text(top + 4, left + 4, f"P{p} SCORE {total}", BLACK, 2)
        c.text(top + 22, left + 4, " ".join(f"{SKILL_ABBR[k]}{state.skills[p, k]}"
                                             for k in range(5)), BLUE, 1)
        c.text(top + 32, left + 4, f"TOKENS {state.tokens[p]} BEST {state.best[p]}", BLACK, 1)
        y = top + 210
        for w, lo, m in state.towers[p][:14]:
            y -= 12
            width = 12 * w
            x = left + 86 - width // 2
            c.box(y, x, 11, width, GREY, BLACK)
            label = level_text((w, lo, m))
            if Canvas.text_width(label, 1) + 4 <= width:
                c.text(y + 3, x + 2, label, BLACK, 1)
            else:
                c.text(y + 3, x + width + 3, label, BLACK, 1)
    return c.image()
