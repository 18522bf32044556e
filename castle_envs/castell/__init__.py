"""Castell (Renegade Game Studios, 2018) as a PettingZoo AEC environment for 2-4 players."""
