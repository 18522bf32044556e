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


def write_weights(
    directory,
    kind: str,
    game: str,
    variant: dict,
    env_kwargs: dict,
    policy: dict,
    tensors: dict,
    extra: dict | None = None,
) -> Path:
    """A model directory of torch weights: the card of a ``kind`` trained on ``game`` (its
    ``variant`` and env keywords, the ``policy`` architecture, ``extra`` entries after
    them) and ``tensors`` (a state dict) in ``WEIGHTS_FILE``."""
    import torch

    directory = write_card(
        directory,
        {
            "kind": kind,
            "game": game,
            "variant": dict(variant),
            "env_kwargs": dict(env_kwargs),
            "policy": policy,
            "weights": WEIGHTS_FILE,
            **(extra or {}),
        },
    )
    torch.save(tensors, directory / WEIGHTS_FILE)
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
    except (
        pickle.UnpicklingError,
        RuntimeError,
        EOFError,
        ValueError,
        AttributeError,
        TypeError,
    ) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"refused {path}: not a plain file of tensors ({first})") from None


def load_weights(module, directory, card: dict) -> None:
    """The card's weights file into ``module`` (a torch module), or ValueError when they do
    not fit the model the card describes."""
    tensors = load_tensors(Path(directory) / card["weights"])
    try:
        module.load_state_dict(tensors)
    except (RuntimeError, TypeError, AttributeError) as err:
        raise ValueError(
            f"{directory}: the weights do not fit the policy model.json "
            f"describes ({str(err).splitlines()[0]})"
        ) from None


def load_npz_arrays(path, names, option: str, what: str) -> dict:
    """The arrays ``names`` of an ``.npz`` of plain arrays (nothing pickled is read); a file
    that lacks one, or is no such file, is a ValueError naming the agent ``option``
    (``ismcts option value=PATH``) and ``what`` the file should be."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as f:
            missing = sorted(set(names) - set(f.files))
            if missing:
                raise ValueError(f"{option}={path}: the file lacks {missing}")
            return {k: f[k] for k in names}
    except (OSError, ValueError) as err:
        if isinstance(err, FileNotFoundError) or "lacks" in str(err):
            raise
        raise ValueError(f"{option}={path}: not a {what} .npz ({err})") from None
