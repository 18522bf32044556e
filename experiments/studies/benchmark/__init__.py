"""The scripts behind the benchmark's labelled deal sets (``castle_envs.experiments.deals``):
the reference agents played on every deal of a set, and the sets built from the studies'
records under ``docs/data/``."""
