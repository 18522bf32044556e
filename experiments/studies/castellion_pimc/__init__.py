"""The scripts of the study of the PIMC agent for Castellion: the screens of its settings and
the held-out pairing (docs/data/castellion_pimc/)."""
