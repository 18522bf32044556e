"""The old path of the compiled Castle Siege solver, now ``castle_envs.vector.solve_castle_siege``
(it drives the vector layer's kernels, so it lives there). Kept for the code that still
imports it from here; this re-export is the one remaining import of ``vector`` by the
game package (``CROSSING_DEBT`` in ``tests/test_layers.py``).
"""
from ..vector.solve_castle_siege import CompiledSolver, shared_memo

__all__ = ["CompiledSolver", "shared_memo"]
