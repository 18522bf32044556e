"""The files of a saved model directory that every kind writes or reads: the card's format
(``model.json``) and the weights read without running code. ``saved`` (which loads each
kind) and the kinds' own modules (``move_policy``) share them from here.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

FORMAT = "castle-envs-model"
VERSION = 1
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.pt"


def write_card(directory, card: dict) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    card = {"format": FORMAT, "version": VERSION, **card}
    (directory / MODEL_FILE).write_text(json.dumps(card, indent=1, allow_nan=False) + "\n")
    return directory


def load_tensors(path):
    """A ``torch.save``d dict of tensors, read with ``weights_only=True``: torch's restricted
    unpickler accepts tensors and plain containers and refuses any other object, so a file
    crafted to run code is refused before it runs."""
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError,
            TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"refused {path}: not a plain file of tensors ({first})") from None
