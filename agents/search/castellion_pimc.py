"""Castellion Monte Carlo agent: the planner's close calls settled by planner games in
sampled worlds.

At each decision with a choice the agent

1. takes the planner's move (``castellion_planner.PlannerPolicy``) and the planner's next
   best moves: at most ``top`` candidates, and, where the planner scores its moves (a
   placement or discard, a power's steps, a Traitor's destructions), only those within
   ``gap`` of the best score (planner units: about one tile the castle still needs); at the
   turn start (draw from a pile, encounter early, take a revealed tile) and the Seer's and
   tower's choices every legal move, planner's first. One candidate left: it plays it at
   once, so most decisions cost what the planner costs;
2. deals ``worlds`` worlds consistent with what the player knows (``State.determinize`` of
   the player's view: each pile's contents shuffled, each face-down Ordeal drawn again from
   its slot's cards), from the agent's own generator (``reset(seed)`` reseeds it);
3. plays each candidate in each world and then lets the planner play that world on
   (``horizon`` 0: to the end of the game; h > 0: until h more Ordeals are resolved);
4. after half the worlds stops if no candidate is ahead of the planner's move (it is
   played); otherwise plays the other half. It scores each finished world: 1 for a win, else ``share`` x the Ordeals passed / 3 (a world
   stopped at the horizon: ``share`` x the planner's value / 3,000, about the Ordeals
   passed, clipped to [0, ``share``]); and plays the candidate with the best mean over the
   same worlds (common random numbers), but leaves the planner's move only when the gain is
   more than ``margin``; ties go to the planner's order.

The continuation is the planner itself, which reads only the player's view of each world, so
this is a rollout improvement of the planner (one step of policy iteration, estimated by
sampling), not perfect-information search: a world's future tiles decide the draws, but no
move in a world is chosen by looking at them, so no strategy fusion. It reads only what a
player sees: the worlds are dealt from ``state.player_view()`` (the piles sorted, the
face-down cards replaced), the candidates are ranked on that view, and the planner never
reads hidden information (``tests/agents/test_castellion_pimc.py`` re-deals both and checks
the decisions are unchanged).

Agent spec: ``pimc[:worlds=8,top=2,gap=2,horizon=1,share=0.3,margin=0.02,planner_w1=...]``
(``planner_<option>``: the planner's options, ``planner``'s spec; Castellion only;
the defaults are the setting screened in ``docs/data/castellion_pimc/README.md``; at the
School the planner is the one tuned on training deals, ``LEVEL_PLANNER``). Held out
(1,000,000-1,000,999), paired with the planner: School 38.3% against 26.2% (+12.1 points
[+8.7, +15.5]), Academy 67.9% against 43.2% (+24.7 [+21.3, +28.0]), Menace 7.6% against
1.6% (+6.0 [+4.5, +7.7]; the planner with its ``scout`` term, which ``pimc`` plays, 5.2%:
+2.4 [+1.0, +3.9]; before ``scout`` ``pimc`` won 2.1% of the Menace). About 1.4 / 4.6 /
3.8 CPU-s a game (School / Academy / Menace). ``--agent best`` for Castellion.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from castle_envs.agents.search.castellion_planner import (
    OPTION_TYPES as PLANNER_OPTIONS,
)
from castle_envs.agents.search.castellion_planner import (
    PlannerPolicy,
)

from castle_envs.castellion.actions import DISCARD_POWER
from castle_envs.castellion.data import SCHOOL, SEER
from castle_envs.castellion.rules import (
    DEFENDER_PHASE,
    DESTROY_PHASE,
    DRAW_PHASE,
    PYRO_DESTROY,
    REVEAL_ORDEAL_PHASE,
    REVEAL_PHASE,
    State,
)
from castle_envs.core.options import Option, Options

#: the options (``pimc:worlds=...`` in a spec; the planner's are ``PREFIX`` + its own)
OPTIONS = Options(
    worlds=Option(8, 1, 1000),
    top=Option(2, 1, 200),
    gap=Option(2.0, 0, 1e6),
    horizon=Option(1, 0, 3),
    share=Option(0.3, 0, 1),
    margin=Option(0.02, 0, 1),
)
DEFAULTS = OPTIONS.defaults()
#: the planner's options, given to pimc as ``planner_<name>``: the planner that ranks the
#: candidates and plays the worlds on
PREFIX = "planner_"
OPTION_TYPES = {
    **OPTIONS.types(),
    **{PREFIX + k: v for k, v in PLANNER_OPTIONS.items()},
}
#: the planner's options by level where they are not its defaults, when no ``planner_``
#: option is given: tuned on training deals (``docs/data/castellion_planner_tune/``)
LEVEL_PLANNER: dict[int, dict[str, Any]] = {SCHOOL: {"w1": 0.8, "w2": 0.05, "pressure": 1.0}}
#: moves a world's game may take before it is scored where it stands (a game takes < 400)
MAX_STEPS = 2000


class PimcPolicy:
    """``policy(state, rng) -> action`` (module docstring)."""

    @OPTIONS.keywords
    def __init__(self, *, planner: PlannerPolicy | None = None, **options):
        o = OPTIONS.check(options, "pimc option", "PimcPolicy")
        self.worlds, self.top, self.gap = o["worlds"], o["top"], o["gap"]
        self.horizon, self.share, self.margin = o["horizon"], o["share"], o["margin"]
        # one planner for every level when given, else each level's (LEVEL_PLANNER)
        self.fixed = planner
        self.planners = {level: PlannerPolicy(**LEVEL_PLANNER.get(level, {})) for level in range(3)}
        self.planner = planner if planner is not None else self.planners[SCHOOL]
        self.searched = 0  # decisions settled by the worlds (for timing reports)
        self.rollouts = 0
        self.departed: dict[int, list[int]] = {}  # phase -> [searched, left the planner]

    # --- the candidates ----------------------------------------------------------------------
    def candidates(self, state: State, legal: list[int]) -> list[int]:
        """The moves the worlds compare, the planner's own move first."""
        planner = self.planner
        first = planner(state, None)
        if self.top == 1:
            return [first]
        view = planner.visible(state)
        phase = state.phase
        if phase in (DRAW_PHASE, REVEAL_PHASE, REVEAL_ORDEAL_PHASE):
            rest = [a for a in legal if a != first]
            return ([first] + rest)[: self.top]
        if phase == DESTROY_PHASE and state.destroy_reason != PYRO_DESTROY:
            if state.destroy_left > 4:
                return [first]  # a long penalty: the planner's tallest-column rule
            scores = {a: planner.one_step(view, a) for a in legal}
        else:
            options = legal
            if phase == DEFENDER_PHASE:
                options = [a for a in legal if a != DISCARD_POWER or planner.power_worth(view)]
            else:
                options = planner.move_choices(view)
            bonus = 0.5 if (phase == DEFENDER_PHASE and state.hand // 3 == SEER) else 0.0
            scores = {
                a: planner.value_after(view, a) + (bonus if a == DISCARD_POWER else 0.0)
                for a in options
            }
        best = scores.get(first, max(scores.values()))
        rest = sorted((a for a in scores if a != first), key=lambda a: (-scores[a], a))
        rest = [a for a in rest if scores[a] >= best - self.gap]
        return ([first] + rest)[: self.top]

    # --- the worlds --------------------------------------------------------------------------
    def _score(self, world: State) -> float:
        if world.outcome:
            return 1.0 if world.outcome > 0 else self.share * world.current / 3
        value = self.planner.value(world) / 3000.0
        return self.share * min(1.0, max(0.0, value))

    def _finish(self, world: State, stop: int) -> float:
        planner = self.planner
        for _ in range(MAX_STEPS):
            if world.outcome or world.current >= stop:
                break
            world.apply_legal(planner(world, None))
        self.rollouts += 1
        return self._score(world)

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        if self.fixed is None:
            self.planner = self.planners[state.level]
        legal = np.flatnonzero(state.legal_action_mask()).tolist()
        if len(legal) == 1:
            return legal[0]
        cands = self.candidates(state, legal)
        if len(cands) == 1:
            return cands[0]
        self.searched += 1
        view = state.player_view()
        worlds = [view.determinize(0, rng) for _ in range(self.worlds)]
        stop = 4 if self.horizon == 0 else state.current + self.horizon
        totals = [0.0] * len(cands)
        half = (len(worlds) + 1) // 2
        done = 0
        for chunk in (worlds[:half], worlds[half:]):
            for j, a in enumerate(cands):
                for world in chunk:
                    w = world.clone()
                    w.apply_legal(a)
                    totals[j] += self._finish(w, stop)
            done += len(chunk)
            if max(totals[1:]) <= totals[0]:
                break  # no candidate ahead of the planner's move after half the worlds
        means = [total / done for total in totals]
        best = max(range(len(cands)), key=lambda j: (means[j], -j))
        if best != 0 and means[best] - means[0] <= self.margin:
            best = 0
        tally = self.departed.setdefault(int(state.phase), [0, 0])
        tally[0] += 1
        tally[1] += best != 0
        return cands[best]


def make_pimc_policy(options: dict) -> PimcPolicy:
    planner = {k[len(PREFIX) :]: v for k, v in options.items() if k.startswith(PREFIX)}
    own = {k: v for k, v in options.items() if not k.startswith(PREFIX)}
    return PimcPolicy(**own, planner=PlannerPolicy(**planner) if planner else None)


def build_agent(name: str, rest: str, game: str, seed: int | None):
    """The agent registry's entry: options ``key=value,...`` (``OPTION_TYPES``)."""
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.options import parse_options

    policy = make_pimc_policy(parse_options(rest, OPTION_TYPES, name))
    return PolicyAgent(policy, name + (":" + rest if rest else ""), seed)
