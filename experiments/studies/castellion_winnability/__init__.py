"""The scripts of the study of Castellion winnability (docs/castellion_winnability.md): the
solver's records analysed, the agents per deal, the proofs of wins and losses and the
settled table (docs/data/castellion_winnability/)."""
