"""``CastleSiegeVectorEnv``: many Castle Siege games stepped at once by a compiled kernel.

```python
import castle_envs
envs = castle_envs.make_vec("castle-siege", num_envs=4096, difficulty="very_hard")
obs, info = envs.reset(seed=0)          # obs (4096, 882) float32
masks = envs.action_masks()             # (4096, 1676) bool, also info["action_mask"]
obs, rew, term, trunc, info = envs.step(actions)
```

It is a ``gymnasium.vector.VectorEnv`` with the single env's layouts (observation exactly
``castle_siege.observation.encode``, ``Discrete(1676)`` per env, the same mask), and it is
the same game: env ``i`` reset with ``seed=s`` plays exactly the games of
``CastleSiegeEnv`` reset with ``seed=s + i`` (what ``gymnasium.vector.SyncVectorEnv`` does),
action for action; ``tests/vector`` checks this over thousands of games.

**Autoreset** is ``SAME_STEP``: a finished env starts its next game in the same ``step``; the
returned observation and mask are the new game's, the last observation of the finished
game is ``info["final_obs"][i]`` where ``info["_final_obs"][i]``, and ``info["won"][i]`` says
whether it was won.

**Info** has the single env's keys at every step, each a ``(num_envs,)`` array with its
``_`` mask: ``action_mask`` (the new game's where one ended), ``won``, the
``events_<name>`` counters (where an episode ended, those of the game that ended, as
``won`` and ``final_obs``), ``illegal_action`` in penalty mode; and ``final_obs`` where an
episode ended.

**Keyword arguments**: those of ``CastleSiegeEnv`` (``difficulty``, ``reward``,
``illegal_action``, ``illegal_action_penalty``, ``max_episode_steps``, ``render_mode``,
rules options ``attack``/``defeated``/``victory``), plus ``copy`` (default True: returned
arrays are fresh copies, yours to change; False returns the env's own buffers, overwritten
by the next step, which is faster: treat them as read-only, because each step updates the
observation rows in place, writing only the entries that change, so an entry changed by the
caller would stay wrong, and checks actions against the mask rows), and ``threads`` (default 1)
or ``parallel`` (default False; True means one thread per available core, as long as each
gets 256 envs or more; ``threads``, when given, is used exactly, at most one per env): the
batch is split into that many contiguous row ranges, stepped concurrently
on Python threads (a persistent ``ThreadPoolExecutor``, shut down by ``close()``) by kernels
that release the GIL; no numba threading layer is involved. Rows are independent, so the
results are exactly those of one thread (``tests/vector/test_threads.py``). Whether it is
faster depends on free cores (the batched-envs page of the docs gives measured speeds).
With ``illegal_action="raise"`` an illegal action raises ``IllegalActionError`` naming the env,
the move and why, before any env moves; with ``"penalty"`` that env's episode ends with the
penalty and ``info["illegal_action"][i]`` is True. An action outside ``Discrete(1676)``
raises ``ActionSpaceError`` naming the env in both modes, before any env moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege.actions import NUM_ACTIONS
from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.castle_siege.env import INFO_EVENT_KEYS, CastleSiegeEnv
from castle_envs.castle_siege.observation import OBS_SIZE
from castle_envs.castle_siege.rules import DIFFICULTIES, EVENTS, VICTORY_RULES, State
from castle_envs.core.batched import KernelVectorEnv, state_dtype
from castle_envs.core.jit import COMPILED


class GameRows:
    """What the batched and the compiled single env keep of the game: its parameters as the
    kernels take them, and the state rows."""

    #: the kernels' module (``sample_actions`` draws with its ``sample_legal``)
    kernel = K
    _obs_size, _num_actions, _state_type = OBS_SIZE, NUM_ACTIONS, State
    rules: dict

    def _set_game(self, reference: CastleSiegeEnv, n: int) -> None:
        """From ``reference`` (the Python env made with the same arguments), ``n`` rows."""
        self.difficulty = reference.difficulty
        self.rows = DIFFICULTIES[self.difficulty]
        self.recent = self.rules["attack"] == "most_recent"
        self.leave = self.rules["defeated"] == "leave_game"
        self.shaped = reference.reward_mode == "shaped"
        # compiled kernels widen int8 arithmetic to int64; plain Python (NumPy scalars) would
        # not, so without numba the state lives in int64
        self._cards = np.zeros((n, K.CARD_WORDS), state_dtype())
        self._ints = np.zeros((n, K.INT_WORDS), np.int32 if COMPILED else np.int64)
        self._ints[:, K.STRICT] = self.rules["victory"] == "deck_left"  # kept by every deal
        # what the batched env's row kernels take
        self._row_state = (self._cards, self._ints)
        self._game_args = (self.rows, self.recent, self.leave)
        self._reward_arg = self.shaped


class CastleSiegeVectorEnv(GameRows, KernelVectorEnv):
    game_title = "Castle Siege"
    single_env = CastleSiegeEnv
    position_attrs = {"cards": "_cards", "ints": "_ints"}
    row_attrs = ("_cards", "_ints", "recent")
    info_rows_attr = "_ints"  # the event counters

    def info_entries(self, rows: np.ndarray, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The ``events_<name>`` counters of every row, int64 (the single env's entries)."""
        counts = rows[:, K.EVENTS : K.EVENTS + len(EVENTS)].astype(np.int64)
        return {key: counts[:, j] for j, key in enumerate(INFO_EVENT_KEYS)}

    def __init__(
        self, num_envs: int, difficulty: str = "very_hard", *args: Any, **kwargs: Any
    ) -> None:
        """``difficulty`` and the other keyword arguments: module docstring."""
        super().__init__(num_envs, difficulty, *args, **kwargs)

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """``seed``: an int (env i gets ``seed + i``), a list of per-env seeds, or None.
        ``options``: ``{"decks": (num_envs, 52) card ids, top first}`` deals those decks."""
        self._seed(seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"decks"})
        if unknown:
            raise ValueError(f"unknown reset option {unknown}; known: ['decks']")
        if options.get("decks") is not None:
            from castle_envs.castle_siege.rules import check_deck

            decks = [check_deck(d) for d in options["decks"]]
            if len(decks) != self.num_envs:
                raise ValueError(f"options['decks'] needs {self.num_envs} decks, got {len(decks)}")
            for i, deck in enumerate(decks):
                K.load_deal(self._cards[i], self._ints[i], self.rows, deck)
            self._mask_padded[:] = False
            self._refresh(slice(None))
        else:
            self._reset_rows()
        return self._reset_result()

    def action_masks(self) -> np.ndarray:
        """(num_envs, 1676) bool: the legal actions of every env's current position."""
        return super().action_masks()

    def _draw_actions(self, out: np.ndarray) -> None:
        # the step kernel counted each row's legal actions: no scan of the 1676-wide mask
        self.run_rows(K.sample_counted_rows, self._mask_padded, self._ints, self._sample_words, out)

    # --- positions as rules-core states ---------------------------------------------------------
    def state(self, i: int) -> State:
        """Env ``i``'s position as a ``castle_siege.rules.State`` (a copy)."""
        return read_state(self._cards[i], self._ints[i], self.rows, self.rules)

    def set_state(self, i: int, state: State) -> None:
        """Put ``state`` (same difficulty and rules) into env ``i``; its episode step count
        restarts at 0."""
        write_state(self._cards[i], self._ints[i], state, self.rows, self.rules)
        self._refresh(slice(i, i + 1))
        self._started = True

    def _same_row(self, i: int, state: State) -> bool:
        b, v = np.zeros_like(self._cards[i]), np.zeros_like(self._ints[i])
        write_state(b, v, state, self.rows, self.rules)
        # the deck is a ring: the writer puts its top first, the kernels anywhere
        head = int(self._ints[i, K.HEAD])
        if not 0 <= head < NUM_CARDS:
            return False
        b[K.DECK : K.DECK + NUM_CARDS] = np.roll(b[K.DECK : K.DECK + NUM_CARDS], head)
        v[K.HEAD], v[K.STEPS] = head, self._ints[i, K.STEPS]
        same = (
            np.array_equal(b[: K.NEED], self._cards[i, : K.NEED])
            and np.array_equal(v[: K.DIRTY], self._ints[i, : K.DIRTY])
            and v[K.STRICT] == self._ints[i, K.STRICT]
        )
        if same:
            self._cards[i], self._ints[i] = b, v
        return bool(same)

    def _episode_steps(self, i: int) -> int:
        return int(self._ints[i, K.STEPS])

    def _refresh(self, rows: slice) -> None:
        """Observation and mask rows recomputed from the state rows."""
        K.refresh_all(
            self._cards[rows],
            self._ints[rows],
            self.rows,
            self.recent,
            self.leave,
            self._obs[rows],
            self._mask_padded[rows],
        )


def read_state(b: np.ndarray, v: np.ndarray, rows: int, rules: dict) -> State:
    """The position in kernel rows ``b``/``v`` as a ``castle_siege.rules.State`` (a copy)."""
    # the victory option is read from the row (write_state and the envs set it there)
    s = State(
        rows,
        attack=rules["attack"],
        defeated=rules["defeated"],
        victory=VICTORY_RULES[int(v[K.STRICT])],
    )
    # a State is a view over rows of this layout: the position's words are copied, the
    # observation's bookkeeping and the episode's step count are not
    s.b[: K.NEED] = b[: K.NEED]
    s.v[: K.DIRTY] = v[: K.DIRTY]
    s.v[K.STEPS] = 0
    return s


def write_state(b: np.ndarray, v: np.ndarray, state: State, rows: int, rules: dict) -> None:
    """Load ``state`` into kernel rows ``b``/``v`` (episode step count 0). The rules option
    options come from the state (``victory``: word ``STRICT``); each one ``rules`` names must
    match the state's."""
    named = state.rule_options()
    if state.rows != rows or any(rules.get(key, value) != value for key, value in named.items()):
        raise ValueError("the state's difficulty and rules must match the env's")
    b[:] = 0
    v[:] = 0
    b[: K.NEED] = state.b[: K.NEED]
    v[: K.DIRTY] = state.v[: K.DIRTY]
    v[K.STEPS] = 0
    v[K.STRICT] = state.victory == "deck_left"
