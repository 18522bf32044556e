"""``castle-envs play GAME``: a person plays in the terminal.

The board is drawn with the env's ``ansi`` renderer and the legal moves are listed in words,
a page at a time. A move is chosen by its number, or by typing it: a text that names exactly
one legal move (the move in words, the action table's text, or any part of it that only one
move contains) plays it; a text that several moves contain lists just those (``J♦`` or
``JD`` shows every move with the Jack of diamonds). ``?`` prints the notation's legend and
the commands, ``save [FILE]`` writes the game record (``castle-envs replay FILE`` shows it;
``--save FILE`` writes it when the game ends), ``q`` quits. Bad input gets a message and a new
prompt, never a crash. Castle Siege's moves are listed by usefulness (captures, Royal
Assaults and exact hits first, then the other moves, then over-kill attacks by the rank they
waste, fewest cards first); what a move set off (a Precision Strike, a Flush Siege's draw, a
capture, the next turn's defenders...) is announced after it; text is wrapped to the
terminal's width, between words. In the multi-player games the person holds the seats in ``--human``
(default 0; ``--hotseat`` for all) and the ``--opponent`` agent (default the game's
heuristic) plays the others.
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
import unicodedata
from typing import Any

import numpy as np

from castle_envs.registry import get_game

from .common import add_game_arguments, describer, game_and_variant

PAGE = 20
COMMANDS_HELP = (
    "Commands: a move's number; part of a move's text to list the moves that "
    "contain it (a move is played when only one does); n / p: next / previous "
    "page; all: every move again; b: the board; save [FILE]: write the game "
    "record; ?: this help; q: quit."
)


def add_parser(sub):
    p = sub.add_parser("play", help="play a game in the terminal")
    add_game_arguments(p)
    p.add_argument("--seed", type=int, default=None, help="the deal (a non-negative integer)")
    p.add_argument(
        "--human",
        type=int,
        nargs="*",
        default=[0],
        help="multi-player games: the seats a person plays (default 0)",
    )
    p.add_argument("--hotseat", action="store_true", help="a person plays every seat")
    p.add_argument(
        "--opponent",
        default="heuristic",
        help="multi-player games: the agent in the other seats (default heuristic; "
        "best, random, mcts:sims=50, model:DIR, linear:PATH ...)",
    )
    p.add_argument(
        "--save",
        default=None,
        metavar="FILE",
        help="write the game record to FILE when the game ends or you quit",
    )
    p.add_argument(
        "--page",
        type=int,
        default=PAGE,
        metavar="N",
        help=f"moves listed at a time (default {PAGE})",
    )
    p.add_argument(
        "--width",
        type=int,
        default=None,
        metavar="N",
        help="wrap text to N columns, between words (default: the terminal's "
        "width, 80 when unknown; 0: no wrapping)",
    )
    p.set_defaults(run=run)


def run(args, stdin=None, stdout=None) -> int:
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.page < 1:
        raise ValueError(f"--page must be at least 1, got {args.page}")
    if args.width is not None and args.width < 0:
        raise ValueError(f"--width must be 0 (no wrapping) or more, got {args.width}")
    spec, variant = game_and_variant(args)
    if args.save:
        from .records import check_save_path

        check_save_path(args.save, "--save")  # now, not when the game is over
    env = spec.make(render_mode="ansi", **variant)
    render = spec.load_renderer()
    session = Session(
        stdin or sys.stdin,
        stdout or sys.stdout,
        spec.slug,
        getattr(render, "LEGEND", ""),
        args.page,
        width=args.width,
        events=getattr(render, "events", None),
    )
    game = _Game(spec, variant, args.seed, args.save)
    try:
        return _play(spec, env, game, session, args)
    except KeyboardInterrupt:  # Ctrl-C: keep the game when asked to, then stop
        if game.recorder is not None and game.save_path:
            session.say("")
            game.save(_rules(env), session)
        raise


def _play(spec, env, game, session, args) -> int:
    if spec.solitaire:
        return _play_solitaire(env, game, session)
    seats = set(range(env.num_players)) if args.hotseat else set(args.human or [])
    bad = sorted(s for s in seats if not 0 <= s < env.num_players)
    if bad:
        raise ValueError(f"--human seats {bad} are not seats 0-{env.num_players - 1}")
    from castle_envs.agents import make_agent

    from .evaluate import resolve_best

    opponent_spec = resolve_best(args.opponent, spec.slug)
    opponent = make_agent(opponent_spec, spec.slug, seed=args.seed)
    return _play_multiplayer(env, game, seats, opponent, opponent_spec, session)


# --- reading what the person types --------------------------------------------------------
_CARD = re.compile(r"^(a|[2-9]|10|j|q|k)([shdc])([,.;:!?)]*)$")
_SUIT_OF_LETTER = dict(zip("schd", "♠♣♥♦"))


def normalize(text: str, cards: bool = False) -> str:
    """Lower case, one space between words, composed accents (NFC); with
    ``cards``, card names typed with suit letters (``JD``, ``10h``) take their suit symbols."""
    text = unicodedata.normalize("NFC", text).lower()
    words = text.split()
    if cards:
        words = [_CARD.sub(lambda m: m[1] + _SUIT_OF_LETTER[m[2]] + m[3], w) for w in words]
    return " ".join(words)


def _shown(text: str, limit: int = 24) -> str:
    """What the person typed, short enough to echo."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


class Session:
    """The terminal: paged move lists, filters, commands; ``choose`` returns an action id,
    ``None`` to quit, or ``"save"`` with ``self.save_path`` set."""

    def __init__(
        self,
        stdin,
        stdout,
        game: str = "",
        legend: str = "",
        page: int = PAGE,
        width: int | None = None,
        events=None,
    ):
        self.stdin, self.stdout = stdin, stdout
        render = get_game(game).load_renderer() if game else None
        self.cards = bool(getattr(render, "TYPED_CARDS", False))
        self.describe = describer(game) if game else (lambda s, a: s.describe_action(a))
        #: the render module's ``move_order(state, action)`` key of the move list, if any
        self.order_key = getattr(render, "move_order", None)
        self.legend = legend
        self.page_size = page
        self.legend_shown = False
        #: the columns text is wrapped to (None: the terminal's, 80 when unknown; 0: none)
        self.width = width
        #: ``events(before, after)``: what a move set off, in words (the render module's)
        self.events = events

    def columns(self) -> int:
        """The width text is wrapped to (at least 20), 0 for none."""
        if self.width is not None:
            return self.width and max(20, self.width)
        return max(20, shutil.get_terminal_size((80, 24)).columns)

    def say(self, text=""):
        width = self.columns()
        print(wrap(str(text), width) if width else text, file=self.stdout, flush=True)

    def announce(self, before, after) -> None:
        """Each event the move from ``before`` to ``after`` set off, on its own line."""
        if self.events is None:
            return
        for note in self.events(before, after):
            self.say(f"  * {note}")

    def _read(self):
        self.stdout.write("move> ")
        self.stdout.flush()
        try:
            return self.stdin.readline()
        except (UnicodeDecodeError, ValueError) as err:  # bytes that are not text
            return f"\0unreadable input ({type(err).__name__})\n"

    def choose(self, state, mask, board=None):
        legal, texts = _ordered(state, mask, self.describe, self.order_key)
        keys = [normalize(t, self.cards) for t in texts]
        codes = [normalize(str(state.actions.decode(a)), self.cards) for a in legal]
        if not self.legend_shown and self.legend:
            self.say("How to read the moves: " + self.legend)
            self.say("Type ? for help.")
            self.legend_shown = True
        view = list(range(len(legal)))  # the moves listed (indices into legal)
        page, query = 0, None  # query: the text that narrowed the list
        self._list(texts, view, page, query)
        while True:
            line = self._read()
            if not line:
                self.say("\n(end of input)")
                return None
            raw = line.strip()
            if raw.startswith("\0"):
                self.say(f"{raw[1:]}: type a move's number, part of a move, ? or q")
                continue
            text = normalize(raw, self.cards)
            pages = max(1, -(-len(view) // self.page_size))
            if text in ("q", "quit", "exit"):
                return None
            if text in ("?", "h", "help"):
                if self.legend:
                    self.say(self.legend)
                self.say(COMMANDS_HELP)
                continue
            if text in ("b", "board"):
                if board:
                    self.say(board())
                self._list(texts, view, page, query)
                continue
            if text == "save" or text.startswith("save "):
                self.save_path = raw[4:].strip() or None
                return "save"
            if text in ("", "n", "next", "more"):
                if not text and pages == 1:
                    self.say(
                        f"type a move's number (0-{len(legal) - 1}), part of a move, "
                        "? for help or q to quit"
                    )
                    continue
                page = (page + 1) % pages
                self._list(texts, view, page, query)
                continue
            if text in ("p", "prev", "previous"):
                page = (page - 1) % pages
                self._list(texts, view, page, query)
                continue
            if text in ("all", "*", "clear"):
                view, page, query = list(range(len(legal))), 0, None
                self._list(texts, view, page, query)
                continue
            if raw.isascii() and raw.isdigit():
                if len(raw) <= 6 and int(raw) < len(legal):
                    return legal[int(raw)]
                self.say(
                    f"'{_shown(raw)}' is not a move number: type 0-{len(legal) - 1}, "
                    "part of a move, ? for help or q"
                )
                continue
            exact = [i for i in range(len(legal)) if text in (keys[i], codes[i])]
            if len(exact) == 1:
                return legal[exact[0]]
            matches = self._matching(text, keys, codes)
            if len(matches) == 1:
                return legal[matches[0]]
            if not matches:
                self.say(
                    f"'{_shown(raw)}' is not a move number and no legal move contains "
                    f"it: type 0-{len(legal) - 1}, part of a move, ? for help or q"
                )
                continue
            view, page, query = matches, 0, _shown(raw)
            self._list(texts, view, page, query)

    @staticmethod
    def _matching(text, keys, codes) -> list[int]:
        """Moves containing ``text`` as a phrase; failing that, containing each of its words."""
        phrase = [i for i in range(len(keys)) if text in keys[i] or text in codes[i]]
        if phrase:
            return phrase
        words = text.split()
        return [
            i
            for i in range(len(keys))
            if all(w in keys[i] for w in words) or all(w in codes[i] for w in words)
        ]

    def _list(self, texts, view, page, query):
        size = self.page_size
        pages = max(1, -(-len(view) // size))
        shown = view[page * size : (page + 1) * size]
        if query is not None:
            self.say(f"{len(view)} moves contain '{query}':")
        elif len(view) > size:
            self.say(
                f"{len(view)} legal moves, page {page + 1} of {pages} "
                "(Enter or n: next page; type part of a move to narrow the list):"
            )
            groups = _groups([texts[i] for i in view])
            if groups:
                self.say("  moves: " + ", ".join(groups))
        for i in shown:
            self.say(f"  {i:>3}  {texts[i]}")
        if query is not None and pages > 1:
            self.say(f"  (page {page + 1} of {pages}: n for more, all for every move)")


def _head(text: str) -> str:
    return text.partition(" with ")[0]


def _ordered(state, mask, describe, key=None) -> tuple[list[int], list[str]]:
    """The legal actions and their words; numbers in the list index this order. With
    ``key`` (``key(state, action)``, e.g. Castle Siege's ``render.move_order``) sorted by it; else moves
    with one head together (all attacks on one defender), fewest cards first."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    texts = [describe(state, a) for a in legal]
    if key is not None:
        order = sorted(range(len(legal)), key=lambda i: (key(state, legal[i]), i))
        return [legal[i] for i in order], [texts[i] for i in order]
    rank: dict[str, int] = {}
    for t in texts:
        rank.setdefault(_head(t), len(rank))
    order = sorted(
        range(len(legal)), key=lambda i: (rank[_head(texts[i])], texts[i].count(" + "), i)
    )
    return [legal[i] for i in order], [texts[i] for i in order]


_NUMBERED = re.compile(r"^(\s*\d+\s+|\s*[-*]\s+|\s*)")


def wrap(text: str, width: int) -> str:
    """Each line of ``text`` wrapped to ``width`` columns between words (never inside one),
    continuation lines indented under the line's text (after a move number or a bullet)."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * len(_NUMBERED.match(line).group(1))  # type: ignore[union-attr]  # any line
        out.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [line]
        )
    return "\n".join(out)


def _groups(texts: list[str], limit: int = 16) -> list[str]:
    """'attack 9♥ (12)'-style summaries when many moves share a head (the words before
    ' with '), so a long list can be narrowed by typing one."""
    heads: dict[str, int] = {}
    others = []
    for t in texts:
        head, sep, _ = t.partition(" with ")
        if sep:
            heads[head] = heads.get(head, 0) + 1
        else:
            others.append(t)
    if not heads or len(heads) > len(texts) / 2:
        return []
    out = [f"{h} ({n})" for h, n in heads.items()]
    out = out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])
    if 0 < len(others) <= 4:
        out.append("and " + ", ".join(others))
    return out


# --- the game loop ---------------------------------------------------------------------------
class _Game:
    """What the game record needs, kept as the game is played."""

    def __init__(self, spec, variant, seed, save_path):
        self.spec, self.variant, self.seed, self.save_path = spec, variant, seed, save_path
        self.recorder: Any = None  # a records.Recorder once started

    def start(self, state, agents):
        from .records import Recorder

        self.recorder = Recorder(
            self.spec.slug, dict(self.variant), {}, self.seed, state, agents, "castle-envs play"
        )

    def step(self, action, state):
        self.recorder.step(action, state)

    def save(self, state, session, path=None) -> bool:
        """Write the game record (to ``path``, ``--save`` or a default name); False, and a
        message, when it could not be written."""
        from .records import check_save_path, save

        path = path or self.save_path or "castle-envs-game.json"
        try:
            save(self.recorder.finish(state), check_save_path(path, "save"))
        except OSError as err:
            session.say(f"could not save to {path}: {err.strerror or err}")
            return False
        except ValueError as err:
            session.say(f"could not save: {err}")
            return False
        session.say(f"saved the game record to {path} (castle-envs replay {path})")
        return True


def _rules(env):
    """The rules state: ``game_state`` in the PettingZoo envs (whose ``state()`` is
    PettingZoo's global state), ``state`` in the Gymnasium ones."""
    return env.game_state if hasattr(env, "game_state") else env.state


def _choose(session, env, game, mask):
    """The person's move, handling ``save`` requests; None when they quit."""
    while True:
        action = session.choose(_rules(env), mask, board=env.render)
        if action != "save":
            return action
        game.save(_rules(env), session, getattr(session, "save_path", None))


def _finish(game, env, session, abandoned: bool) -> int:
    """Save the game when ``--save`` asked for it; 0, or 2 when it could not be saved."""
    saved = game.save(_rules(env), session) if game.save_path else True
    if abandoned:
        session.say("game abandoned")
    return 0 if saved else 2


def _play_solitaire(env, game, session) -> int:
    obs, info = env.reset(seed=game.seed)
    game.start(_rules(env), ["human"])
    total = 0.0
    while True:
        session.say(env.render())
        action = _choose(session, env, game, info["action_mask"])
        if action is None:
            return _finish(game, env, session, abandoned=True)
        session.say(f"> {session.describe(_rules(env), action)}")
        before = _rules(env).clone()
        obs, reward, terminated, truncated, info = env.step(action)
        game.step(action, _rules(env))
        session.announce(before, _rules(env))
        total += reward
        if terminated or truncated:
            session.say(env.render())
            session.say(f"game over: return {total:g}")
            return _finish(game, env, session, abandoned=False)


def _play_multiplayer(env, game, humans, opponent, opponent_spec, session) -> int:
    env.reset(seed=game.seed)
    game.start(
        _rules(env), ["human" if s in humans else opponent_spec for s in range(env.num_players)]
    )
    totals = {agent: 0.0 for agent in env.agents}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent]
        mask = obs["action_mask"].astype(bool)
        if seat in humans:
            session.say(env.render())
            session.say(f"{agent} to move")
            action = _choose(session, env, game, mask)
            if action is None:
                return _finish(game, env, session, abandoned=True)
        else:
            state = _rules(env).player_view(seat) if opponent.needs_state else None
            action = opponent.act(obs, mask, state)
        session.say(f"{agent}: {session.describe(_rules(env), action)}")
        before = _rules(env).clone()
        env.step(action)
        game.step(action, _rules(env))
        session.announce(before, _rules(env))
    session.say(env.render())
    session.say("game over: " + ", ".join(f"{a} {r:+g}" for a, r in totals.items()))
    return _finish(game, env, session, abandoned=False)
