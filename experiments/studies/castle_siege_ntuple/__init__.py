"""The scripts of the study of the Castle Siege n-tuple afterstate value
(``models/castle_siege_ntuple_value``; data in docs/data/castle_siege_ntuple/)."""
