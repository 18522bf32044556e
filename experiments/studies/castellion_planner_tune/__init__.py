"""The scripts of the study of the Castellion planner's tuning: its parameter search, the face-up
probe and the checks on fresh deals (docs/data/castellion_planner_tune/)."""
