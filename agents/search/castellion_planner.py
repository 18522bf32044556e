"""Castellion planner agent: each decision's outcome scored by a formation planner.

At every decision with a choice the agent plays each candidate move on a copy of the
position that holds only what the player sees (both piles sorted, so their order is gone; a
face-down ordeal replaced by each card its slot may hold in turn, the results averaged),
finishes what the move forces (a Traitor's or a penalty's destructions, a power's steps:
the best choice at each), and scores the result:

    value = 1000 x ordeals passed - sum over the unresolved ordeals of weight x cost - pressure

``cost`` is ``castellion_plan.castle_cost``: the tiles the castle still needs for that
ordeal (its formations on usable sites, the complete foundation or the rows a row-removal
card takes, or for an Assault the cheaper of its formations and a castle big enough to
survive the penalty); later ordeals are scored on the castle as the row-removal cards before
them will leave it. ``weights`` (default 1, 0.3, 0.1) weigh the current ordeal and the next
two. ``pressure`` costs the current ordeal's missing tiles beyond what the draws left
before its trigger can bring (Traitors still to come before it x the pile's Defenders per
Traitor x ``useful``), so placing a Traitor that brings the encounter closer, or discarding
one (4 tiles destroyed), are weighed against each other.

Turn start: encounter the lowest ordeal early when it is face up (or every card its slot
may hold) and the castle passes it without penalty; play the revealed tile that scores best;
draw from the safe pile (no Traitors) while the next Traitor would trigger an ordeal the
castle does not meet yet, else from the regular pile. The Seer reveals from the regular pile
and a tower's reveal turns up the lowest face-down ordeal.

It reads only what a player sees: the castle, hand, revealed tiles, discard pile, the piles'
contents by kind (public by counting), the face-up ordeals and the Traitors beside them. It
never draws in its copies, so the piles' order never enters a decision, and a face-down card
is only ever replaced by the cards its slot may hold (``tests/agents/test_castellion_planner.py``
re-deals both and checks every decision is unchanged). It uses no randomness.

At the Menace the value also adds ``grow`` (default 0.5) per tile in the castle: a failed
Assault destroys 16 / 32 / 42 tiles (4 fewer per bastion) and the game is lost unless a
complete foundation survives, so a bigger castle is what lets a wrong guess about a
face-down card be survived. (Chosen on training deals 20,000,000+: 150 deals, grow 0 / 0.5 /
1.5 / 4 passed 0.31 / 0.47 / 0.61 / 0.69 ordeals a game; 600 others, grow 8 passed 0.75 and
won 5. That was without ``scout``, below: once the planner turns the Assaults up, it need
not hedge with size, and grow 0.5 is best.)

At the Menace the value also charges ``info`` (default 30) for each unresolved ordeal still
face down, counting the one a just-completed tower is about to turn up as known. Averaging
over the cards a face-down Assault may be values a castle that hedges between formations, but
a known card lets the castle be built for it: of the planner's Menace games, none passed
Assault II while it was still face down at its encounter (0 of 57 on 200 training deals),
against 25 of 69 face up. So completing a tower is worth more than its formation. (Chosen on
training deals 20,100,000+: 3,600 deals, info 0 won 29 and info 30 won 52; info 10 and 100
on 1,000 of them gave 8 and 10 wins against info 30's 10.) ``reveal=1`` turns up the lowest
face-down card *after* the current one when there is one, instead of the lowest (not
clearly better: 16 wins against 18 on 600 training deals, 13 against 8 on 800 others).

At the Menace, while an unresolved Assault is face down, the value also charges ``scout``
(default 5) per tile the castle still needs for one tower more than it holds
(``castellion_moves.tower_cost``). ``info`` pays for a reveal only once the tower stands, and
a tower takes four tiles of one faction in a column, which a one-move lookahead never plans
for; ``scout`` makes each of those tiles worth placing. What a known Assault is worth: on
2,000 Menace training deals (20,200,000+) the planner with every card turned up from the
start won 132 against 25 face down (any one card up: 47-55). With ``scout`` the planner meets
nearly every Assault face up (Assault I in 96% of games, against 70% without; 4,000
training deals 20,400,000+).

Chosen on training deals (Menace, 4,000 deals 20,300,000+, wins): the planner before (scout
0, grow 8) 57; scout 5 and grow 8 124; scout 5 and info 60 with grow 0 / 1 / 2: 173 / 216 /
183 (info 100: the same games); scout 5 and info 30 with grow 0.25 / 0.5 / 0.75 / 1.5: 221 /
**254** / 204 / 183; scout 3 and 10 within 9 wins of scout 5 at grow 0, 1 and 2. Checked on
4,000 other training deals (20,400,000+): the planner before 58, scout 5 and grow 8 114,
grow 1 168, grow 0.5 **215** (5.4%). Held out (1,000,000-1,000,999): 52 wins (5.2% [4.0,
6.8]) against 16 for the planner before, paired +3.6 points [+2.1, +5.2] (better on 47
deals, worse on 11); 12 ms a game. ``scout=0,grow=8`` is the planner before.

Agent spec:
``planner[:w1=0.3,w2=0.1,useful=0.4,pressure=0.5,pyro=1,grow=0.5,info=30,reveal=0,scout=5]``.

The decisions are compiled (``search.castellion_planner_kernel``, over kernel rows; the plain-Python
planner it replaced is ``tests/reference/castellion_planner.py``, checked move for move):
the ``pimc`` agent plays the planner through thousands of positions a decision.
"""

from __future__ import annotations

from castle_envs.agents.search import castellion_planner_kernel as C

from castle_envs.castellion.data import PYRO
from castle_envs.castellion.rules import State
from castle_envs.core.options import Option, Options

#: the options (``planner:w1=...`` in a spec): weights, charges and the Menace's terms are
#: numbers in 0-100, ``pyro`` and ``reveal`` are 0 or 1
OPTIONS = Options(
    w1=Option(0.3, 0, 100),
    w2=Option(0.1, 0, 100),
    useful=Option(0.4, 0, 100),
    pressure=Option(0.5, 0, 100),
    pyro=Option(1, 0, 1),
    grow=Option(0.5, 0, 100),
    info=Option(30.0, 0, 100),
    reveal=Option(0, 0, 1),
    scout=Option(5.0, 0, 100),
)
DEFAULTS = OPTIONS.defaults()
OPTION_TYPES = OPTIONS.types()
WIN, LOSS = C.WIN, C.LOSS


class PlannerPolicy:
    """``policy(state, rng) -> action`` (module docstring); ``rng`` is not used."""

    @OPTIONS.keywords
    def __init__(self, **options):
        o = OPTIONS.check(options, "planner option", "PlannerPolicy")
        self.weights = (1.0, o["w1"], o["w2"])
        self.useful, self.pressure, self.pyro = o["useful"], o["pressure"], o["pyro"]
        self.grow, self.info, self.reveal = o["grow"], o["info"], o["reveal"]
        self.scout = o["scout"]
        self._prm = C.params(
            self.weights,
            self.pressure,
            self.useful,
            self.grow,
            self.info,
            self.pyro,
            self.reveal,
            self.scout,
        )

    @staticmethod
    def visible(state: State) -> State:
        """The player's view (piles sorted, face-down cards set to their slot's first card),
        as the planner's own model: the guard is lifted because the planner deals every card
        a face-down ordeal may be itself, and no move it simulates draws from a pile."""
        other = state.player_view()
        other.hidden = False
        return other

    def value(self, state: State) -> float:
        """The score of a position (module docstring); face-down cards averaged over their
        slot's cards."""
        return float(C.value(state.s, state.level, self._prm))

    def value_after(self, view: State, action: int) -> float:
        """``action``'s value in ``view``, averaged over the cards a face-down lowest ordeal
        may be, with the best choice of any power it leads to."""
        return float(C.after_value(view.s, action, view.level, view.rule_flags, self._prm))

    def one_step(self, view: State, action: int) -> float:
        """The value right after ``action`` (a destruction's)."""
        return float(C.one_step_value(view.s, action, view.level, self._prm))

    def move_choices(self, state: State) -> list[int]:
        """The moves the planner weighs: a Pyro's destruction only of top tiles."""
        return C.choices(state.s, state.level, state.rule_flags).tolist()

    def power_worth(self, view: State) -> bool:
        return bool(self.pyro) or view.hand // 3 != PYRO

    def __call__(self, state: State, rng=None) -> int:
        return int(C.planner_move(state.s, state.level, state.rule_flags, self._prm))


def make_planner_policy(options: dict) -> PlannerPolicy:
    return PlannerPolicy(**options)


def build_agent(name: str, rest: str, game: str, seed: int | None):
    """The agent registry's entry: options ``key=value,...`` (``OPTION_TYPES``)."""
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.options import parse_options

    policy = make_planner_policy(parse_options(rest, OPTION_TYPES, name))
    return PolicyAgent(policy, name + (":" + rest if rest else ""), seed)
