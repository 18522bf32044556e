"""The scripts of the study of Castle Siege winnability (docs/castle_siege_winnability.md): the
compiled solver's prefix summary and the relaxed roots
(docs/data/castle_siege_winnability/)."""
