"""The scripts of the study of expert iteration of the Castle Siege move network: the endgame
diagnostics (docs/data/castle_siege_exit_net/diagnostics/)."""
