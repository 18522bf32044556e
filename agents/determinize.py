"""Information-set sampling for games whose rules core does not define ``determinize`` yet.

``determinize(state, player, rng)`` calls ``state.determinize`` when the game implements
it, else the sampler registered here for the state's type. Each sampler returns a clone in
which only what ``player`` has not seen is re-dealt, uniformly among the arrangements
consistent with what that player has seen, and as a function of that information alone:
the unseen cards are sorted before they are shuffled, so two states the player cannot tell
apart give the same samples for the same ``rng``.

Approximations (stated, standard for ISMCTS): what a player could infer from opponents'
past choices is not used.
"""
from __future__ import annotations

import numpy as np


def _castle_rooms(state, player: int, rng: np.random.Generator):
    """Castle Rooms: the deck order and the other players' hands are hidden (their sizes,
    every row and the discard pile are public)."""
    other = state.clone()
    others = [s for s in range(state.num_players) if s != player]
    pool = sorted(list(state.deck) + [c for s in others for c in state.hands[s]])
    pool = [pool[i] for i in rng.permutation(len(pool))]
    k = 0
    for s in others:
        n = len(state.hands[s])
        other.hands[s] = sorted(pool[k:k + n])
        k += n
    other.deck = pool[k:]
    other._mask = None
    return other


def _castell(state, player: int, rng: np.random.Generator):
    """Castell: only the bag's order is hidden (its contents are public by counting)."""
    other = state.clone()
    bag = sorted(state.bag)
    other.bag = [bag[i] for i in rng.permutation(len(bag))]
    return other


def _castellion(state, player: int, rng: np.random.Generator):
    """Castellion: the order of each pile and the face-down ordeal cards are hidden. Each
    pile's contents are known to a player who remembers what came from it, so each pile is
    shuffled separately; a face-down card is drawn again from its level and slot's cards."""
    from castle_envs.castellion.data import ORDEALS_BY_SLOT
    other = state.clone()
    for name in ("regular", "safe"):
        pile = sorted(getattr(state, name))
        setattr(other, name, [pile[i] for i in rng.permutation(len(pile))])
    for slot in range(3):
        if state.face_down[slot]:
            ids = ORDEALS_BY_SLOT[state.level][slot]
            other.ordeals[slot] = int(ids[rng.integers(len(ids))])
    other._mask = None
    return other


SAMPLERS = {
    "castle_envs.castellion.rules.State": _castellion,
    "castle_envs.castle_rooms.rules.CastleRoomsState": _castle_rooms,
    "castle_envs.castell.rules.State": _castell,
}


def determinize(state, player: int, rng: np.random.Generator):
    try:
        return state.determinize(player, rng)
    except NotImplementedError:
        kind = f"{type(state).__module__}.{type(state).__qualname__}"
        sampler = SAMPLERS.get(kind)
        if sampler is None:
            raise ValueError(f"mcts needs {kind}.determinize(), which this game does not "
                             "implement yet") from None
        return sampler(state, player, rng)
