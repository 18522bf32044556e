"""Formation detection against a plain breadth-first reference on random 6 x 6 grids."""

from hypothesis import given, settings
from hypothesis import strategies as st

from castle_envs.castellion.rules import formations_of_boards


def reference(grid):
    """(towers, bastions, lines) by BFS over a 6 x 6 grid of factions (-1 = empty)."""
    seen, counts = set(), [0, 0, 0]
    for r0 in range(6):
        for c0 in range(6):
            if grid[r0][c0] < 0 or (r0, c0) in seen:
                continue
            comp, todo = [], [(r0, c0)]
            seen.add((r0, c0))
            while todo:
                r, c = todo.pop()
                comp.append((r, c))
                for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if (
                        0 <= rr < 6
                        and 0 <= cc < 6
                        and (rr, cc) not in seen
                        and grid[rr][cc] == grid[r0][c0]
                    ):
                        seen.add((rr, cc))
                        todo.append((rr, cc))
            if len(comp) != 4:
                continue
            rows = {r for r, _ in comp}
            cols = {c for _, c in comp}
            if len(cols) == 1:
                counts[0] += 1
            elif len(rows) == 2 and len(cols) == 2:
                counts[1] += 1
            elif len(rows) == 1:
                counts[2] += 1
    return tuple(counts)


def boards(grid):
    out = [0, 0, 0, 0]
    for r in range(6):
        for c in range(6):
            if grid[r][c] >= 0:
                out[grid[r][c]] |= 1 << (r * 6 + c)
    return out


grids = st.lists(st.lists(st.integers(-1, 3), min_size=6, max_size=6), min_size=6, max_size=6)
# few factions make large groups and exact formations common
dense = st.lists(
    st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=6, max_size=6), min_size=6, max_size=6
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(grids, dense))
def test_bitboard_formations_match_the_reference(grid):
    assert formations_of_boards(boards(grid)) == reference(grid)
    mirrored = [row[::-1] for row in grid]
    assert formations_of_boards(boards(mirrored)) == reference(grid)
    flipped = grid[::-1]
    assert formations_of_boards(boards(flipped)) == reference(grid)
