"""Castell's components as data.

What the rule text and ../RULES.md give is marked *given*; everything else is
*reconstructed* (no public source lists it): the value is a plausible choice consistent with
the component counts, explained in RULES.md, and lives here so that it is easy to change.
``RECONSTRUCTED`` names every reconstructed entry.
"""

from __future__ import annotations

from typing import NamedTuple

# --- castellers (given: 150 tiles numbered 1-10; reconstructed: 15 of each number) -------
SIZES = 10
CASTELLERS_PER_SIZE = (15,) * SIZES
TOTAL_CASTELLERS = 150
assert sum(CASTELLERS_PER_SIZE) == TOTAL_CASTELLERS

# castellers per region at setup and at refill, by player count (given)
REGION_SETUP = {2: 3, 3: 4, 4: 5}
HAND_SETUP = 7  # given: each player draws seven
TOKENS_PER_PLAYER = 7  # given: seven special-action tokens
ROUNDS = 10  # given
FESTIVAL_ROUNDS = range(3, 11)  # given: festivals at the end of rounds 3 to 10
REFILL_ROUNDS = (2, 4, 6, 8)  # reconstructed: "every other round", at the round's end

# --- regions (given: seven; reconstructed: names and adjacency) --------------------------
# Seven towns of the castells heartland, laid out roughly as on a map of Catalonia.
REGIONS = ("Lleida", "Valls", "Tarragona", "Vilafranca", "Barcelona", "Terrassa", "Girona")
REGION_ABBR = ("LLE", "VAL", "TAR", "VIL", "BCN", "TER", "GIR")
NUM_REGIONS = len(REGIONS)
# touching borders, plus one dotted line (Lleida - Terrassa) across the interior
BORDERS = ((0, 1), (1, 2), (1, 3), (2, 3), (3, 4), (3, 5), (4, 5), (4, 6), (5, 6))
DOTTED_LINES = ((0, 5),)
ADJACENT = tuple(
    tuple(
        sorted(
            {b for a, b in BORDERS + DOTTED_LINES if a == r}
            | {a for a, b in BORDERS + DOTTED_LINES if b == r}
        )
    )
    for r in range(NUM_REGIONS)
)

# --- skills and the skill wheel ----------------------------------------------------------
SKILLS = ("Balance", "Base", "Mix", "Strength", "Width")  # given
BALANCE, BASE, MIX, STRENGTH, WIDTH = range(5)
SPECIAL = 5  # a wheel tile showing the special action
WHEEL_KIND_NAMES = SKILLS + ("Special",)
# reconstructed: the 8 board skill tiles are the five skills plus three special-action tiles
WHEEL_TILES = (BALANCE, BASE, MIX, STRENGTH, WIDTH, SPECIAL, SPECIAL, SPECIAL)
# reconstructed: the wheel has 8 windows over the 8 tiles; window r (0-6) belongs to region r,
# window 7 is "All Regions" on the normal side and blank on the advanced "No Regions" side.
WHEEL_WINDOWS = 8
ALL_REGIONS_WINDOW = 7
MAX_SKILL = 3  # reconstructed: the skill track runs 0-3 (rules option)
START_SKILL = 0  # reconstructed: skill tiles start on 0

# --- festivals ---------------------------------------------------------------------------
# reconstructed: 14 festival location tiles = one "I" and one "II" tile per region; the
# calendar has 7 "I" spaces (rounds 3-6) and 7 "II" spaces (rounds 7-10), with one size
# token under each "I" space and two under each "II" space.
FESTIVAL_TILES_I = tuple(range(NUM_REGIONS))  # the region of each I tile
FESTIVAL_TILES_II = tuple(range(NUM_REGIONS))
CALENDAR = (  # (round, phase) for each calendar space, in the order they are scored
    (3, 1),
    (4, 1),
    (4, 1),
    (5, 1),
    (5, 1),
    (6, 1),
    (6, 1),
    (7, 2),
    (8, 2),
    (8, 2),
    (9, 2),
    (9, 2),
    (10, 2),
    (10, 2),
)
SIZE_TOKENS_PER_SPACE = {1: 1, 2: 2}
# the rules option festival_size_tokens="one" deals a single token under every space instead
SIZE_TOKENS_PER_SPACE_OPTIONS = {"by_phase": SIZE_TOKENS_PER_SPACE, "one": {1: 1, 2: 1}}
# reconstructed: 30 size tokens = three of each number 1-10
SIZE_TOKENS = tuple(s for s in range(SIZES) for _ in range(3))
# reconstructed: festivals held by player count: with 2 players only the first space of each
# round is held (8 festivals); with 3 or 4 players every space (14 festivals).
FESTIVAL_SPACES_HELD = {
    2: tuple(i == 0 or CALENDAR[i - 1][0] != CALENDAR[i][0] for i in range(len(CALENDAR))),
    3: (True,) * len(CALENDAR),
    4: (True,) * len(CALENDAR),
}
FESTIVAL_LEVELS = 4  # given: a festival tower has (at least) four levels

# --- prizes (given: trophy 5, medal 3, ribbon 1; reconstructed: the chart) ---------------
PRIZES = ("trophy", "medal", "ribbon")
PRIZE_POINTS = (5, 3, 1)
# reconstructed prize chart: places awarded at each festival by player count
PRIZE_CHART = {2: 1, 3: 2, 4: 3}

# --- end scoring (given) -----------------------------------------------------------------
VARIETY_POINTS = (0, 0, 1, 3, 5, 7, 10, 14)  # by number of regions (0-7)


# --- local performance tiles (given: 32, two per region row; reconstructed: contents) -----
class LocalPerformance(NamedTuple):
    kind: str  # "shape" or "exhibition"
    points: int
    shape: tuple = ()  # shape: level widths, bottom first
    skills: tuple = ()  # exhibition: skills the tower must use (levels == points)

    def __str__(self) -> str:
        if self.kind == "shape":
            return f"shape {'-'.join(map(str, self.shape))} ({self.points} pts)"
        return (
            f"exhibition {self.points} levels + "
            f"{'+'.join(SKILLS[s] for s in self.skills)} ({self.points} pts)"
        )


def _shape(points: int, *widths: int) -> LocalPerformance:
    return LocalPerformance("shape", points, tuple(widths))


def _exhibition(points: int, *skills: int) -> LocalPerformance:
    return LocalPerformance("exhibition", points, (), tuple(sorted(skills)))


# reconstructed: 16 tower shapes (points grow with levels and the skills the shape forces) and
# 16 skill exhibitions (2-5 levels, one or two skills).
LOCAL_PERFORMANCES = (
    _shape(1, 2, 1),
    _shape(1, 3, 1),
    _shape(1, 3, 2),
    _shape(2, 3, 2, 1),
    _shape(3, 2, 2, 1),
    _shape(3, 3, 3, 2),
    _shape(3, 3, 3, 1),
    _shape(3, 3, 2, 2),
    _shape(3, 4, 3, 2),
    _shape(3, 4, 2, 1),
    _shape(4, 2, 2, 2),
    _shape(4, 3, 2, 1, 1),
    _shape(4, 4, 3, 2, 1),
    _shape(4, 5, 3, 1),
    _shape(4, 3, 3, 2, 1),
    _shape(5, 4, 4, 3, 2, 1),
    _exhibition(2, MIX),
    _exhibition(2, STRENGTH),
    _exhibition(2, BALANCE),
    _exhibition(2, WIDTH),
    _exhibition(2, BASE),
    _exhibition(3, MIX, STRENGTH),
    _exhibition(3, BALANCE, MIX),
    _exhibition(3, WIDTH, STRENGTH),
    _exhibition(3, BASE, BALANCE),
    _exhibition(3, MIX, WIDTH),
    _exhibition(4, BALANCE),
    _exhibition(4, WIDTH),
    _exhibition(4, BASE),
    _exhibition(4, STRENGTH, BALANCE),
    _exhibition(5, BALANCE, WIDTH),
    _exhibition(5, BASE, STRENGTH),
)
assert len(LOCAL_PERFORMANCES) == 32
LP_PER_ROW = 2  # given

RECONSTRUCTED = {
    "CASTELLERS_PER_SIZE": "15 of each number (an even split of 150)",
    "REFILL_ROUNDS": "refill at the end of rounds 2, 4, 6 and 8, topping regions up",
    "REGIONS": "names of seven castells towns",
    "BORDERS / DOTTED_LINES": "adjacency graph",
    "WHEEL_TILES": "5 skill tiles + 3 special-action tiles",
    "WHEEL_WINDOWS": "7 region windows + All Regions (blank on the No Regions side)",
    "MAX_SKILL / START_SKILL": "skill track 0-3, starting at 0",
    "FESTIVAL_TILES / CALENDAR": "one I and one II tile per region; 7 I spaces in rounds 3-6, "
    "7 II spaces in rounds 7-10",
    "SIZE_TOKENS": "three of each number; one under each I space, two under each II space",
    "FESTIVAL_SPACES_HELD": "2 players: one festival per round; 3-4 players: all 14",
    "PRIZE_CHART": "places awarded = players - 1 (trophy, medal, ribbon)",
    "LOCAL_PERFORMANCES": "16 tower shapes + 16 skill exhibitions with their points",
}
