"""The scripts of the study of the Castle Siege search agent against the ceiling: its
evaluations combined (docs/data/castle_siege_search/)."""
