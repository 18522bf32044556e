"""Full-information solvers: with the whole deal known, can it be won, and how?

A solver sees every hidden card (the deck order, face-down tiles), so it answers a question
about the deal, not about play: the verdicts bound how winnable a difficulty is. Each game
has a contract module (``castle_siege``, ``castellion``: the verdicts, ``Result``), its
compiled search (``*_kernel``: numba kernels over the env's kernel rows, moving with the
kernel's public primitives) and its helpers (nested Monte Carlo search, loss proofs).
"""
