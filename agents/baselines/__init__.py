"""Hand-written policies: each game's heuristic and greedy player ``policy(state, rng)``, and
the heuristic position values that reward shaping reads."""
