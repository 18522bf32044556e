"""The scripts of the study of the Castle Siege ISMCTS agents: screens, pooled evaluations, the
ceiling, the endgame budget and the diagnostics (docs/data/castle_siege_ismcts/)."""
