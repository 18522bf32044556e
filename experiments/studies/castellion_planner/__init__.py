"""The scripts of the study of the Castellion planner: what the training screens show of the
encounters dealt face down (docs/data/castellion_planner/info/training_screens/)."""
