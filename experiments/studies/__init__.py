"""The study scripts: the code that produced the figures and tables of the documentation's
studies (docs/castle_siege_winnability.md, docs/castellion_winnability.md and the model
cards), one sub-package per study, one file per script.

These are not commands a user needs: those are ``castle-envs`` and the modules of
``castle_envs.experiments``. Each script here is run from the repository root, as the
study's page shows (``python experiments/studies/<study>/<script>.py ...``), and reads and
writes the study's data under ``docs/data/<study>/``. Importing one runs it: they are
scripts, kept importable only so that a test can check their imports still resolve.
"""
