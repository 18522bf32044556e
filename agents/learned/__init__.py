"""Learned agents and what loads them: the linear move scorer, move-feature networks,
MaskablePPO policies, and the safe model directories (``saved``) they are shipped in."""
