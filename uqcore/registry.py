"""Named checkpoints in a folder: each subdirectory holding a ``config.json`` is one checkpoint.

Names are directory names such as ``imdb-sto`` (the task is the part before the first ``-``
unless the checkpoint's training info says ``task``). The app lists them with
:func:`list_checkpoints` (cheap: no weights read) and loads one with :func:`load`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uqcore.checkpoint import (  # check_name: re-exported, the registry's public API
    CONFIG_FILE,
    MAX_JSON_BYTES,
    Checkpoint,
    check_name,
    load_checkpoint,
    read_checkpoint_info,
)
from uqcore.exceptions import CheckpointError, UQError
from uqcore.untrusted import read_json_file


@dataclass(frozen=True)
class CheckpointInfo:
    """One listed checkpoint. ``error`` is None for a readable one; for a corrupt one it holds the
    reason (the other fields are then best effort: ``family`` may be ``"unknown"``)."""

    name: str
    path: Path
    family: str
    task: str
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    training: dict[str, Any]
    card: str | None = None
    error: str | None = None
    base: dict[str, Any] | None = None  # the pretrained base record (pretrained backbones)


def _root(root: str | os.PathLike) -> Path:
    if not isinstance(root, str | os.PathLike) or not str(root):
        raise CheckpointError(
            f"A checkpoint folder must be a path, got {root!r}; pass the folder that holds the "
            "checkpoint directories (the library has no default folder)."
        )
    return Path(root)


def _task(name: str, training: dict[str, Any]) -> str:
    task = training.get("task")
    return task if isinstance(task, str) and task else name.split("-", 1)[0]


def _names(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / CONFIG_FILE).is_file()
    )


def list_checkpoints(root: str | os.PathLike) -> list[CheckpointInfo]:
    """Every checkpoint under ``root`` , sorted by name.

    Subdirectories without ``config.json`` (and hidden ones) are skipped; a missing folder gives
    ``[]``. A corrupt checkpoint is listed with ``error`` set instead of failing the listing.
    """
    folder = _root(root)
    infos = []
    for name in _names(folder):
        path = folder / name
        try:
            info = read_checkpoint_info(path, shared_weights=True)  # siblings, same folder
        except UQError as exc:
            infos.append(_broken(name, path, str(exc)))
            continue
        infos.append(
            CheckpointInfo(
                name=name,
                path=path,
                family=info["config"]["family"],
                task=_task(name, info["training"]),
                config=info["config"],
                metrics=info["metrics"],
                training=info["training"],
                card=info["card"],
                base=info.get("base"),
            )
        )
    return infos


def _broken(name: str, path: Path, error: str) -> CheckpointInfo:
    """Best-effort info on an unreadable checkpoint: family from the raw JSON if it parses."""
    config: dict[str, Any] = {}
    training: dict[str, Any] = {}
    try:
        doc = read_json_file(path / CONFIG_FILE, max_bytes=MAX_JSON_BYTES, allow_nan=True)
        config = doc.get("model") if isinstance(doc.get("model"), dict) else {}
        training = doc.get("training") if isinstance(doc.get("training"), dict) else {}
    except (OSError, ValueError, AttributeError):
        pass
    family = config.get("family")
    return CheckpointInfo(
        name=name,
        path=path,
        family=family if isinstance(family, str) else "unknown",
        task=_task(name, training),
        config=config,
        metrics=None,
        training=training,
        error=error,
    )


def load(name: str, root: str | os.PathLike) -> Checkpoint:
    """Load the checkpoint called ``name`` from ``root`` .

    An unknown name raises :class:`CheckpointError` listing the available names, or saying that
    the folder is missing or empty and how to get checkpoints; a corrupt one raises the error of
    :func:`uqcore.checkpoint.load_checkpoint`.
    """
    check_name(name)
    folder = _root(root)
    names = _names(folder)
    if name in names:
        return load_checkpoint(folder / name, shared_weights=True)  # siblings, same folder
    how = (
        "train a model and save it there with uqcore.checkpoint.save_checkpoint, or pass root= "
        "a folder of checkpoints"
    )
    if not folder.is_dir():
        raise CheckpointError(
            f"No checkpoint {name!r}: the checkpoint folder {folder} does not exist; {how}."
        )
    if not names:
        raise CheckpointError(f"No checkpoint {name!r}: the folder {folder} is empty; {how}.")
    raise CheckpointError(
        f"No checkpoint {name!r} in {folder}. Available: {', '.join(names)}. "
        "Use one of these names, or load_checkpoint(path) for a checkpoint elsewhere."
    )
