"""Lockstep runs of the batched env against single envs (the differential harness)."""
from __future__ import annotations

import numpy as np

from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.vector import HAVE_NUMBA
from castle_envs.vector.castle_siege import CastleSiegeVectorEnv


def games(n: int) -> int:
    """``n`` games with numba; without it the kernels run as plain Python (the fallback is
    still compared, on a fiftieth of the games, so the suite stays fast)."""
    return n if HAVE_NUMBA else max(4, n // 50)


def lockstep(n_envs: int, n_games: int, seed: int, illegal_every: int = 0,
             compare_states: bool = False, **kwargs) -> dict:
    """Play random masked games on ``n_envs`` batched envs and on ``n_envs`` single envs seeded
    ``seed + i``, the same actions on both, until ``n_games`` games have ended; assert that
    observations, masks, rewards, terminations, truncations, final observations and wins are
    identical at every step. ``illegal_every``: roughly one action in that many is a random
    (usually illegal) id, for penalty mode. Returns counts for the caller's own checks."""
    envs = CastleSiegeVectorEnv(n_envs, **kwargs)
    singles = [CastleSiegeEnv(**kwargs) for _ in range(n_envs)]
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed)
    single_obs, single_info = zip(*(e.reset(seed=seed + i) for i, e in enumerate(singles)))
    single_obs, single_mask = list(single_obs), [inf["action_mask"] for inf in single_info]
    assert np.array_equal(obs, np.stack(single_obs))
    assert np.array_equal(info["action_mask"], np.stack(single_mask))
    stats = {"games": 0, "steps": 0, "won": 0, "truncated": 0, "illegal": 0, "reward": 0.0}
    while stats["games"] < n_games:
        masks = envs.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if illegal_every:
            wild = rng.integers(illegal_every, size=n_envs) == 0
            actions[wild] = rng.integers(-2, 1680, size=int(wild.sum()))
        obs, rewards, terminated, truncated, info = envs.step(actions)
        stats["steps"] += n_envs
        for i, env in enumerate(singles):
            o, r, term, trunc, inf = env.step(actions[i])
            assert (r, term, trunc) == (rewards[i], terminated[i], truncated[i]), (i, stats)
            if illegal_every:
                assert inf.get("illegal_action", False) == info["illegal_action"][i]
                stats["illegal"] += int(info["illegal_action"][i])
            if term or trunc:
                assert info["_final_obs"][i]
                assert np.array_equal(o, info["final_obs"][i])
                assert inf.get("won", False) == info["won"][i]
                stats["games"] += 1
                stats["won"] += int(info["won"][i])
                stats["truncated"] += int(trunc)
                o, inf = env.reset()
            elif "_final_obs" in info:
                assert not info["_final_obs"][i]
            stats["reward"] += r
            assert np.array_equal(o, obs[i]), (i, stats)
            assert np.array_equal(inf["action_mask"], info["action_mask"][i]), (i, stats)
            if compare_states:
                assert envs.state(i).to_dict() == env.state.to_dict()
    return stats
