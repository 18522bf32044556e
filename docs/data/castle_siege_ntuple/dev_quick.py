import sys
import time

import numpy as np
from castle_envs.agents.learned import castle_siege_ntuple_kernel as M
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy
from castle_envs.agents.solvers.castle_siege_nested_kernel import new_scratch

lr = float(sys.argv[1])
lam = float(sys.argv[2])
eps = float(sys.argv[3])
total = int(sys.argv[4])
mix = sys.argv[5]
shaped = float(sys.argv[6])
guide0 = float(sys.argv[7])
guide_until = int(sys.argv[8])
tag = sys.argv[9]
floor = float(sys.argv[10]) if len(sys.argv) > 10 else 0.0
gw = LinearPolicy.load("models/castle_siege_very_hard_linear/policy.json").vector()
x = new_scratch()
pattern = [{"m": 2, "h": 3, "v": 4}[c] for c in mix]


def decks(seed, n):
    return np.array([np.random.default_rng(seed + i).permutation(52) for i in range(n)], np.int8)


ev = {r: decks(1_005_000, 500) for r in (3, 4)}
w = np.zeros(M.N_WEIGHTS, np.float32)


def evaluate():
    out = []
    for r in (3, 4):
        won = np.zeros(500, np.bool_)
        st = np.zeros(3)
        M.play_games(
            ev[r], np.full(500, r), w, False, 0, 0, 0, shaped, True, 0, 0.0, gw, x, won, st
        )
        out.append(won.mean())
    return out


done = 0
chunk = 5000
t0 = time.process_time()
while done < total:
    d = decks(20_000_000 + done, chunk)
    rows = np.array([pattern[(done + i) % len(pattern)] for i in range(chunk)])
    won = np.zeros(chunk, np.bool_)
    st = np.zeros(3)
    guide = max(floor, guide0 * (1 - done / guide_until)) if guide_until else guide0
    M.play_games(d, rows, w, True, lr, lam, eps, shaped, True, done + 1, guide, gw, x, won, st)
    done += chunk
    e = evaluate()
    print(
        done,
        f"cpu {time.process_time() - t0:.0f}s guide {guide:.2f} train-win {won.mean():.3f} td-mse {st[1] / st[2]:.4f} dec/game {st[0] / chunk:.1f} eval hard {e[0]:.3f} vh {e[1]:.3f}",
        flush=True,
    )
    np.save(f"/tmp/ntl/w_{tag}.npy", w)
