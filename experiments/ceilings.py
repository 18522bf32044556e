"""What is possible: the share of a solitaire's deals proven winnable, per variant.

A win-rate chart draws an agent against it. The figures are the winnability studies'
(``docs/castle_siege_winnability.md``, ``docs/castellion_winnability.md``): a deal counts
when a winning line, found with every card known, replays to a win in the env. Deals not
proven winnable may still be winnable, so each share is a lower bound on the true one, and
a player who sees only what the rules show can reach at most the true one. Each entry names
the summary in ``docs/data`` it is read from; a test checks the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ceiling:
    winnable: int  # deals proven winnable
    deals: int  # deals the study decided or tried, seeds ``seeds[0]..seeds[1]``
    seeds: tuple[int, int]
    source: str  # the study's summary, relative to docs/data

    @property
    def share(self) -> float:
        return self.winnable / self.deals

    def label(self) -> str:
        return (
            f"proven winnable: {self.winnable:,} of {self.deals:,} deals "
            f"(seeds {self.seeds[0]:,}–{self.seeds[1]:,})"
        )


_SIEGE = "castle_siege_winnability/"
_CASTELLION = "castellion_winnability/settled.json"

#: {game slug: {variant: Ceiling}}, the games and variants whose ceiling is known
CEILINGS: dict[str, dict] = {
    "castle-siege": {
        "easy": Ceiling(5000, 5000, (0, 4999), _SIEGE + "easy5k_20000.json"),
        "medium": Ceiling(5000, 5000, (0, 4999), _SIEGE + "medium5k_settled.summary.json"),
        "hard": Ceiling(1000, 1000, (0, 999), _SIEGE + "nested/hard_pass2.summary.json"),
        "very_hard": Ceiling(1000, 1000, (0, 999), _SIEGE + "nested/very_hard_pass7.summary.json"),
    },
    "castellion": {
        "school": Ceiling(494, 500, (0, 499), _CASTELLION),
        "academy": Ceiling(500, 500, (0, 499), _CASTELLION),
        "menace": Ceiling(372, 500, (0, 499), _CASTELLION),
    },
}


def ceiling(game: str, variant) -> Ceiling | None:
    """The proven ceiling of ``game`` (a registry slug) at ``variant``; None where unknown."""
    return CEILINGS.get(game, {}).get(variant)
