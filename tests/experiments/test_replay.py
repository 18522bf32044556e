"""Game records and castle-envs replay: a replay reproduces every recorded position and the
outcome, a tampered record is refused with a clear error, the HTML page holds one frame per
position; evaluate and tournament --record write replayable records."""

import copy
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from castle_envs.agents import make_agent
from castle_envs.experiments.cli import main
from castle_envs.experiments.records import Recorder, RecordError, final_state, load, replay, save

from castle_envs.registry import GAMES, get_game

VARIANTS = [("castle-siege", "hard"), ("castellion", "menace"), ("castle-rooms", 3), ("castell", 2)]


def play_recorded(game, variant, seed=4, agent="random", env_options=None):
    """A game played on the rules core, its record, and every position along the way."""
    spec = get_game(game)
    env = spec.make(**{spec.variant_arg: variant}, **(env_options or {}))
    state = env.new_state(np.random.default_rng(seed), {})
    agents = [make_agent(agent, game, seed=seed + s) for s in range(state.num_players)]
    rec = Recorder(
        game,
        {spec.variant_arg: variant},
        env_options or {},
        seed,
        state,
        [agent] * state.num_players,
        "test",
    )
    positions = [state.to_dict()]
    while not state.is_terminal():
        action = agents[state.current_player].act(None, state.legal_action_mask(), state.clone())
        state.apply_action(action)
        rec.step(action, state)
        positions.append(state.to_dict())
    return rec.finish(state), positions, state


@pytest.mark.parametrize("game,variant", VARIANTS)
def test_replay_reproduces_every_position_and_the_outcome(game, variant):
    record, positions, final = play_recorded(game, variant)
    record = json.loads(json.dumps(record))  # as it comes back from a file
    steps = list(replay(record))
    assert len(steps) == len(record["actions"]) == len(positions) - 1
    assert steps[0].before.to_dict() == positions[0]
    for step, position in zip(steps, positions[1:]):
        assert step.after.to_dict() == position
    assert [float(r) for r in steps[-1].after.returns()] == record["outcome"]["returns"]
    assert record["outcome"]["returns"] == [float(r) for r in final.returns()]


def test_rules_options_travel_with_the_record():
    record, positions, _ = play_recorded(
        "castle-siege", "easy", seed=9, env_options={"attack": "most_recent"}
    )
    assert record["env_options"] == {"attack": "most_recent"}
    assert final_state(record).to_dict() == positions[-1]


def _tamper_cases():
    def set_action(k, value):
        def f(r):
            r["actions"][k] = value

        return f

    def other_legal_action(r):  # a legal but different move at step 3
        from castle_envs.experiments.records import make_env, start_state

        env = make_env(r)
        state = start_state(r, env)
        for a in r["actions"][:3]:
            state.apply_action(a)
        r["actions"][3] = next(
            int(a) for a in np.flatnonzero(state.legal_action_mask()) if a != r["actions"][3]
        )

    def swap_deck(r):
        deck = r["start"]["deck"]
        deck[0], deck[-1] = deck[-1], deck[0]

    def recount(r):  # the outcome's step count kept in line with the actions
        r["outcome"]["steps"] = len(r["actions"])

    def swap_deck_unseeded(r):
        swap_deck(r)
        r["seed"] = None

    return [
        ("illegal action", set_action(0, 1612), "step 0: action 1612 is illegal"),
        ("action out of range", set_action(2, 99999), "step 2: action 99999 is illegal"),
        ("action not an id", set_action(1, "12"), "action 1 is '12', not an action id"),
        ("another legal move", other_legal_action, "step 3: the position after"),
        (
            "outcome edited",
            lambda r: r["outcome"].__setitem__("returns", [1.0 - r["outcome"]["returns"][0]]),
            "the record's outcome says returns",
        ),
        (
            "seed edited",
            lambda r: r.__setitem__("seed", r["seed"] + 1),
            "deals a different game than the record's start",
        ),
        ("deal edited", swap_deck, "deals a different game than the record's start"),
        ("deal edited, no seed", swap_deck_unseeded, "step 0: "),
        (
            "card duplicated",
            lambda r: r["start"]["deck"].__setitem__(0, r["start"]["deck"][1]),
            "start position is invalid",
        ),
        (
            "last move dropped",
            lambda r: (r["actions"].pop(), r["digests"].pop(), recount(r)),
            "the record says the game ended",
        ),
        (
            "move added",
            lambda r: (r["actions"].append(1669), r["digests"].append("0" * 16), recount(r)),
            "the game was already over",
        ),
        ("digests cut", lambda r: r["digests"].pop(), "'digests' must list one hash per action"),
        ("not a record", lambda r: r.pop("format"), "is not a castle-envs game record"),
        ("newer version", lambda r: r.__setitem__("version", 2), "record version 2"),
        (
            "actions not a list",
            lambda r: r.__setitem__("actions", "1,2,3"),
            "field 'actions' must be a list",
        ),
        ("unknown game", lambda r: r.__setitem__("game", "chess"), "unknown game 'chess'"),
        (
            "unknown variant",
            lambda r: r.__setitem__("variant", {"difficulty": "nightmare"}),
            "unknown difficulty 'nightmare'",
        ),
        ("negative seed", lambda r: r.__setitem__("seed", -5), "'seed' must be a non-negative"),
    ]


@pytest.mark.parametrize(
    "name,tamper,message", _tamper_cases(), ids=[c[0] for c in _tamper_cases()]
)
def test_a_tampered_record_is_refused_with_a_clear_error(name, tamper, message, tmp_path, capsys):
    record, _, _ = play_recorded("castle-siege", "hard", seed=4, agent="heuristic")
    assert len(record["actions"]) > 5 and record["outcome"]["terminal"]
    bad = copy.deepcopy(record)
    tamper(bad)
    with pytest.raises(RecordError, match=re.escape(message)):
        list(replay(bad))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["replay", str(path), "--no-html", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("castle-envs replay: error: ") and message in err and "\n" not in err


def test_garbage_files_are_refused(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    assert main(["replay", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def _frames(page: str):
    data = json.loads(
        re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1)
    )
    return data, ["\n".join(data["lines"][k] for k in frame) for frame in data["frames"]]


@pytest.mark.parametrize("game,variant", VARIANTS)
def test_html_holds_one_frame_per_position_and_each_move_in_words(game, variant, tmp_path, capsys):
    record, positions, _ = play_recorded(game, variant, seed=2)
    path = save(record, str(tmp_path / "game.json"))
    assert main(["replay", path]) == 0
    out = capsys.readouterr().out
    n = len(record["actions"])
    assert f"replayed {n} moves, every position as recorded" in out
    page = (tmp_path / "game.html").read_text(encoding="utf-8")
    data, frames = _frames(page)
    assert len(frames) == n + 1 == len(positions) and len(data["moves"]) == n
    sizes = set()
    for svg in frames:
        root = ET.fromstring(svg)  # each frame is a whole SVG document
        assert root.tag.endswith("svg")
        sizes.add((root.get("width"), root.get("height")))
    assert len(sizes) == 1
    steps = list(replay(record))
    assert [
        m["text"].split(": ", 1)[-1] if game in ("castle-rooms", "castell") else m["text"]
        for m in data["moves"]
    ] == [s.move for s in steps]
    # self-contained: no scripts, styles, fonts or images fetched from anywhere
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "@font-face" in page or "CastleEnvsSans" in page


def test_terminal_replay_prints_every_move_and_the_boards(tmp_path, capsys):
    record, _, _ = play_recorded("castle-siege", "easy", seed=3, agent="heuristic")
    path = save(record, str(tmp_path / "g.json"))
    assert main(["replay", path, "--boards", "--no-html"]) == 0
    out = capsys.readouterr().out
    assert out.count("Castle Siege  turn") == len(record["actions"]) + 1
    assert "   1. " in out and not (tmp_path / "g.html").exists()


def test_evaluate_and_tournament_write_replayable_records(tmp_path, capsys):
    out = str(tmp_path)
    assert (
        main(
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--difficulty",
                "easy,hard",
                "--agent",
                "random,heuristic",
                "--episodes",
                "5",
                "--record",
                "2",
                "--workers",
                "2",
                "--out",
                out,
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )
    folder = tmp_path / "evaluate-castle-siege-easy-hard-seed0-n5-records"
    files = sorted(p.name for p in folder.iterdir())
    assert files == sorted(
        f"{v}-{a}-seed{s}.json"
        for v in ("easy", "hard")
        for a in ("random", "heuristic")
        for s in (0, 1)
    )
    for name in files:
        record = load(str(folder / name))
        assert record["source"] == "castle-envs evaluate" and record["agent_seeds"][0][1] in (0, 1)
        assert final_state(record).is_terminal()
    summary = json.loads((tmp_path / "evaluate-castle-siege-easy-hard-seed0-n5.json").read_text())
    assert "records" not in summary
    assert (
        main(
            [
                "tournament",
                "--game",
                "castle-rooms",
                "--players",
                "3",
                "--agents",
                "random,heuristic",
                "--games",
                "3",
                "--record",
                "2",
                "--workers",
                "1",
                "--out",
                out,
                "--no-plot",
                "--no-progress",
            ]
        )
        == 0
    )
    folder = tmp_path / "tournament-castle-rooms-3p-seed0-n3-records"
    records = sorted((load(str(p)) for p in folder.iterdir()), key=lambda r: r["seed"])
    assert len(records) == 2
    assert records[0]["agents"] == ["random", "heuristic", "random"]
    assert records[1]["agents"] == ["heuristic", "random", "heuristic"]
    for record in records:
        final = final_state(record)
        assert [float(r) for r in final.returns()] == record["outcome"]["returns"]


def test_record_count_must_be_a_count(capsys):
    assert (
        main(
            [
                "evaluate",
                "--game",
                "castle-siege",
                "--episodes",
                "2",
                "--record",
                "-1",
                "--no-progress",
            ]
        )
        == 2
    )
    assert "--record must be a number of games >= 0" in capsys.readouterr().err


def test_every_game_has_a_replay_picture_and_events():
    for slug in GAMES:
        render = __import__(f"castle_envs.{slug.replace('-', '_')}.render", fromlist=["events"])
        assert callable(render.events) and callable(render.build_scene)


# --- the page's data block holds any text safely ------------------------------------------
from castle_envs.experiments.replay import html_page, script_json  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st

_MARKUP = st.lists(
    st.sampled_from(
        [
            "<",
            ">",
            "&",
            "</script>",
            "</SCRIPT ",
            "<!--",
            "-->",
            "<script>",
            "x",
            " ",
            "\u2028",
            "é",
            '"',
            "\\",
        ]
    ),
    min_size=1,
    max_size=8,
).map("".join)
_DATA_BLOCK = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)
_PLAYED = {}


def _played_record():
    if "r" not in _PLAYED:
        _PLAYED["r"] = play_recorded("castle-siege", "easy", seed=3, agent="heuristic")[0]
    return copy.deepcopy(_PLAYED["r"])


def _string_paths(value, path=()):
    """Every string leaf of a record, by its path of keys and indices."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _string_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _string_paths(v, path + (i,))


def _check_data_block(page: str, record: dict):
    blocks = _DATA_BLOCK.findall(page)
    assert len(blocks) == 1, "the page's data block ends where it should, once"
    block = blocks[0]
    assert "</script" not in block.lower() and "<!--" not in block
    assert "<" not in block and ">" not in block and "&" not in block
    data = json.loads(block)
    assert data["record"] == record
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_MARKUP, which=st.data())
def test_markup_in_any_string_field_of_a_record_stays_inside_the_data_block(text, which):
    record = _played_record()
    steps = list(replay(record))
    # the fields a person can write freely: agent names, the source, the version, and a
    # string in every other place the record holds one (the digests are not checked here)
    record["agents"] = [text + "x<!--<script>"]
    record["source"] = text
    record["castle_envs_version"] = text
    record["note"] = {"text": text, "list": [text, "</script><script>alert(1)</script>"]}
    paths = [p for p in _string_paths(record) if p[0] not in ("game", "format")]
    assert len(paths) > 5
    path = which.draw(st.sampled_from(paths))
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = target[path[-1]] + text  # one more field, chosen at random
    page = html_page(record, steps)
    _check_data_block(page, record)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | _MARKUP | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(_MARKUP, c, max_size=3),
        max_leaves=12,
    )
)
def test_script_json_reads_back_the_same_and_holds_no_markup(value):
    text = script_json(value)
    assert json.loads(text) == value
    assert not set(text) & set("<>&\u2028\u2029")


def test_the_record_from_the_issue_replays_to_a_page_that_parses(tmp_path, capsys):
    record = _played_record()
    record["agents"] = ["x<!--<script>"]
    path = save(record, str(tmp_path / "evil.json"))
    assert main(["replay", path, "--quiet"]) == 0
    page = (tmp_path / "evil.html").read_text(encoding="utf-8")
    _check_data_block(page, record)
    # the header's summary is escaped HTML text
    assert "x&lt;!--&lt;script&gt;" in page and "x<!--<script>" not in page


def test_the_control_buttons_use_no_glyph_fonts_lack(tmp_path):
    page = html_page(_played_record(), list(replay(_played_record())))
    controls = page[page.index('<div id="controls">') : page.index('<input id="slider"')]
    for button in re.findall(r"<button[^>]*>(.*?)</button>", controls, re.S):
        # each button is a picture (inline SVG), or plain ASCII text
        assert button.startswith("<svg") or button.isascii(), button
    # nor does the script put one in (play/pause swaps its picture)
    script = page[page.rindex("<script>") :]
    assert not re.search(r"&#x2[3-5][0-9A-F]{2};|[\u2300-\u25ff]", script)


# --- the page's keys and colours --------------------------------------------------------------
#: the page's script run under Node with the few DOM objects it touches; a key the script
#: does not cancel gets the browser's own action on a focused range input (one step, then an
#: ``input`` event), as Chromium does
_KEYS_HARNESS = r"""
const fs = require("fs");
const page = fs.readFileSync(process.argv[2], "utf8");
const data = page.match(/<script type="application\/json" id="data">([\s\S]*?)<\/script>/)[1];
const code = page.slice(page.lastIndexOf("<script>") + 8, page.lastIndexOf("</script>"));
function element(id) {
  const el = {id: id, children: [], className: "", value: "0", max: "0", _text: "",
    appendChild(c) { this.children.push(c); }, scrollIntoView() {},
    set textContent(t) { this._text = String(t); }, get textContent() { return this._text; },
    set innerHTML(h) { this._html = h; },
    get innerHTML() {
      return this._html !== undefined ? this._html :
        this._text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    }};
  return el;
}
const elements = {};
let keydown = null;
global.document = {
  getElementById(id) { return elements[id] || (elements[id] = element(id)); },
  createElement(tag) { return element(tag); },
  addEventListener(kind, f) { if (kind === "keydown") keydown = f; },
};
document.getElementById("data").textContent = data;
global.setInterval = () => 1; global.clearInterval = () => {};
eval(code);
const slider = elements.slider, out = [];
for (const key of JSON.parse(process.argv[3])) {
  let cancelled = false;
  keydown({key: key, target: slider, preventDefault() { cancelled = true; }});
  if (!cancelled && (key === "ArrowRight" || key === "ArrowLeft")) {
    const v = Number(slider.value) + (key === "ArrowRight" ? 1 : -1);
    slider.value = String(Math.max(0, Math.min(Number(slider.max), v)));
    slider.oninput();
  }
  out.push(elements.where.textContent);
}
console.log(JSON.stringify(out));
"""


def test_an_arrow_key_on_the_focused_slider_moves_one_step(tmp_path):
    import shutil
    import subprocess

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed: the page's script cannot run here")
    record = _played_record()
    steps = list(replay(record))
    assert len(steps) >= 3
    page = tmp_path / "page.html"
    page.write_text(html_page(record, steps), encoding="utf-8")
    harness = tmp_path / "keys.js"
    harness.write_text(_KEYS_HARNESS, encoding="utf-8")
    keys = ["ArrowRight", "ArrowRight", "ArrowLeft", "End", "Home"]
    done = subprocess.run(
        [node, str(harness), str(page), json.dumps(keys)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    n = len(steps)
    assert json.loads(done.stdout) == [
        f"move 1 of {n}",
        f"move 2 of {n}",
        f"move 1 of {n}",
        f"move {n} of {n}",
        f"move 0 of {n}",
    ]


def _css_rules(page: str) -> dict:
    """{selector: {property: value}} of the page's style sheet."""
    css = re.sub(r"/\*.*?\*/", "", page[page.index("<style>") : page.index("</style>")], flags=re.S)
    css = css.split("@media")[0]
    rules: dict = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        props = dict(
            (k.strip(), v.strip())
            for k, _, v in (d.partition(":") for d in body.split(";"))
            if v.strip()
        )
        for selector in selectors.split(","):
            rules.setdefault(" ".join(selector.split()), {}).update(props)
    return rules


def _luminance(colour: str) -> float:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    channels = [int(colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_highlighted_moves_number_is_readable():
    rules = _css_rules(html_page(_played_record(), list(replay(_played_record()))))
    # a list number is drawn outside its item's box, on the list's own background, in the
    # item's colour unless a ::marker rule gives it one
    background = rules["aside"]["background"]
    for item in ("aside li", "aside li.now"):
        marker = rules.get(item + "::marker", {}).get("color") or rules[item].get("color")
        marker = marker or rules["body"]["color"]
        assert contrast(marker, background) >= 4.5, (item, marker, background)
    # the highlighted item's own text stays readable on its highlight
    now = rules["aside li.now"]
    assert contrast(now["color"], now["background"]) >= 4.5
