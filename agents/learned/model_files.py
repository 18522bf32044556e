"""The files of a saved model directory that every kind writes or reads: the card's format
(``model.json``), the size of network a card may ask for, and the weights read without
running code (a regular file only, a damaged pickle refused, every weight finite).
``saved`` (which loads each kind) and the kinds' own modules (``move_policy``) share them
from here.
"""

from __future__ import annotations

import json
from pathlib import Path

FORMAT = "castle-envs-model"
VERSION = 1
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.pt"


class BadModel(ValueError):
    """Raised by a ``ModelKind.load``: the directory's files do not make a model of its kind."""


#: the most parameters a network a model card describes may have (the shipped ones have
#: under a million): a card asking for more is refused before anything is allocated
MAX_PARAMETERS = 1 << 26


def mlp_parameters(widths: list, outputs: int, heads: int = 1) -> int:
    """The parameters of ``heads`` MLPs of layer ``widths`` (input first), with a linear
    output of ``outputs`` after the first and of one after the others (actor and critic)."""
    layers = sum((a + 1) * b for a, b in zip(widths, widths[1:]))
    return heads * layers + (widths[-1] + 1) * outputs + (heads - 1) * (widths[-1] + 1)


def check_size(what: str, parameters: int) -> None:
    """ValueError when a card's network would have more than ``MAX_PARAMETERS``."""
    if parameters > MAX_PARAMETERS:
        raise ValueError(
            f"{what} makes a network of {parameters:,} parameters, more than the "
            f"{MAX_PARAMETERS:,} a model may have"
        )


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


#: the largest weights or checkpoint file read (the shipped models are a few MB)
MAX_TENSOR_BYTES = 1 << 30


def load_tensors(path, what: str = "file of tensors"):
    """A ``torch.save``d dict of tensors, read with ``weights_only=True``: torch's restricted
    unpickler accepts tensors and plain containers and refuses any other object, so a file
    crafted to run code is refused before it runs. Only a regular file is opened (a FIFO
    would block, a device never end: ``core.files.read_bytes``); a missing one is a
    FileNotFoundError, anything else that is not such a file a ValueError naming it."""
    import io

    import torch

    from castle_envs.core.files import read_bytes

    data = read_bytes(path, what, MAX_TENSOR_BYTES)
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:
        # a damaged pickle fails in torch's unpickler as whatever its stack machine hit
        # (IndexError on an empty stack, KeyError on a missing memo, EOFError, ...)
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"refused {path}: not a plain file of tensors ({first})") from None


def tensor_dict(path, what: str = "file of tensors") -> dict:
    """``load_tensors``, which must give a dict of finite tensors by name (a state dict):
    a NaN or infinite weight would make every score NaN and the agent play its first
    legal move, silently."""
    import torch

    tensors = load_tensors(path, what)
    if not isinstance(tensors, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in tensors.items()
    ):
        raise ValueError(f"refused {path}: not a dict of tensors by name")
    for name, value in tensors.items():
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise ValueError(f"refused {path}: tensor {name!r} holds NaN or infinite values")
    return tensors


def load_weights(module, directory, card: dict) -> None:
    """The card's weights file into ``module`` (a torch module), or ValueError when they are
    not finite tensors or do not fit the model the card describes."""
    tensors = tensor_dict(Path(directory) / card["weights"], "weights file")
    try:
        module.load_state_dict(tensors)
    except (RuntimeError, TypeError, AttributeError) as err:
        raise ValueError(
            f"{directory}: the weights do not fit the policy model.json "
            f"describes ({str(err).splitlines()[0]})"
        ) from None


def load_optimizer(optimizer, path) -> None:
    """A torch optimizer's ``state_dict`` from file ``path`` (a training checkpoint) into
    ``optimizer``, checked: torch's own ``load_state_dict`` takes per-parameter tensors of
    any shape, and a moment of the wrong shape would fail later, in the middle of a
    training step. ValueError naming the file and what does not fit."""
    import torch

    state = load_tensors(path, "optimizer state")
    try:
        optimizer.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{path}: not the state of this run's optimizer ({first})") from None
    for group in optimizer.param_groups:
        for param in group["params"]:
            for key, value in optimizer.state.get(param, {}).items():
                if not isinstance(value, torch.Tensor):
                    continue
                if value.dim() and value.shape != param.shape:
                    raise ValueError(
                        f"{path}: optimizer {key} has shape {tuple(value.shape)} for a "
                        f"parameter of shape {tuple(param.shape)}"
                    )
                if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise ValueError(f"{path}: optimizer {key} holds NaN or infinite values")


def load_npz_arrays(path, names, option: str, what: str) -> dict:
    """The arrays ``names`` of an ``.npz`` of plain finite numbers (nothing pickled is read,
    only a regular file is opened); a file that lacks one, or is no such file, is a
    ValueError naming the agent ``option`` (``ismcts option value=PATH``) and ``what`` the
    file should be."""
    import io
    import zipfile

    import numpy as np

    from castle_envs.core.files import UnreadableFile, read_bytes

    try:
        data = read_bytes(path, what, MAX_TENSOR_BYTES)
    except UnreadableFile as err:
        raise ValueError(f"{option}={err}") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            missing = sorted(set(names) - set(f.files))
            if missing:
                raise ValueError(f"{option}={path}: the file lacks {missing}")
            arrays = {k: f[k] for k in names}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        if "lacks" in str(err):
            raise
        raise ValueError(f"{option}={path}: not a {what} .npz ({err})") from None
    for name, array in arrays.items():
        if array.dtype.kind not in "biuf" or not np.isfinite(array).all():
            raise ValueError(f"{option}={path}: array {name} is not all finite numbers")
    return arrays
