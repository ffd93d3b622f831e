"""Resumable training state: safetensors for tensors, JSON for counters; never pickle.

A state directory holds ``state.safetensors`` (``model.*``, ``best.*`` and ``opt.<i>.<name>``
tensors; parameters that do not train, such as a pretrained base's frozen weights, are left out:
they are what the model was built with) and ``state.json`` (epoch, step, best metric, history,
optimizer hyper-parameters).
Both are written to temporary files first and renamed, so an interrupted save leaves the
previous state intact; an interrupted run loses at most the work since its last save.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from uqcore.exceptions import CheckpointError

TENSORS, META = "state.safetensors", "state.json"


@dataclass
class Progress:
    """Where a member's training stands. ``step`` counts batches done in ``epoch``."""

    epoch: int = 0
    step: int = 0
    global_step: int = 0
    best_metric: float | None = None
    best_epoch: int = -1
    bad_epochs: int = 0
    done: bool = False
    history: list[dict[str, float]] = field(default_factory=list)
    # wall seconds of the training loop that led to this state, summed over every process that
    # ran it (a resumed run counts the time before its restart; work lost after a save does not)
    seconds: float = 0.0


def loop_clock(progress: Progress) -> Callable[[], None]:
    """A function that sets ``progress.seconds`` to the training loop's time so far: what the
    processes before this one had recorded in it, plus the wall time since this call."""
    earlier, started = progress.seconds, time.monotonic()

    def stamp() -> None:
        progress.seconds = earlier + time.monotonic() - started

    return stamp


def save_state(
    directory: Path,
    model: torch.nn.Module,
    best: dict[str, torch.Tensor] | None,
    optimizer: torch.optim.Optimizer,
    progress: Progress,
    config: dict[str, Any],
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    fixed = _fixed(model)
    tensors = {
        f"model.{k}": v.detach().cpu().contiguous()
        for k, v in model.state_dict().items()
        if k not in fixed
    }
    if best is not None:
        tensors.update(
            {f"best.{k}": v.detach().cpu().contiguous() for k, v in best.items() if k not in fixed}
        )
    opt = optimizer.state_dict()
    for index, slots in opt["state"].items():
        for name, value in slots.items():
            tensors[f"opt.{index}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous()
    meta = {"progress": asdict(progress), "param_groups": opt["param_groups"], "config": config}
    _atomic(directory / TENSORS, lambda p: save_file(tensors, str(p)))
    _atomic(directory / META, lambda p: p.write_text(json.dumps(meta, indent=1)))


def load_state(
    directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: dict
) -> tuple[Progress, dict[str, torch.Tensor] | None] | None:
    """Restore ``model`` and ``optimizer`` in place; None if there is nothing to resume.
    Refuses a state written by a different configuration (it would silently mix runs)."""
    if not (directory / META).exists() or not (directory / TENSORS).exists():
        return None
    try:
        meta = json.loads((directory / META).read_text())
        tensors = load_file(str(directory / TENSORS))
    except Exception as exc:  # a truncated or foreign file
        raise CheckpointError(
            f"Cannot read the training state in {directory} ({exc}); delete it to start over."
        ) from None
    if meta.get("config") != config:
        raise CheckpointError(
            f"The training state in {directory} was written with another configuration; "
            "use the same settings to resume, or delete that folder (or pick another --out)."
        )
    fixed = _fixed(model)
    own = {k[6:]: v for k, v in tensors.items() if k.startswith("model.")}
    missing = set(model.state_dict()) - set(own) - fixed
    if missing or set(own) - set(model.state_dict()):
        raise CheckpointError(
            f"The training state in {directory} does not fit this model; delete that folder to "
            "start over."
        )
    model.load_state_dict(own, strict=False)
    best = {k[5:]: v for k, v in tensors.items() if k.startswith("best.")} or None
    if best is not None:  # the fixed tensors are the model's own (they never change)
        state = model.state_dict()
        best |= {k: state[k].detach().cpu().clone() for k in fixed}
    slots: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("opt."):
            _, index, name = key.split(".", 2)
            slots.setdefault(int(index), {})[name] = value
    optimizer.load_state_dict({"state": slots, "param_groups": meta["param_groups"]})
    return Progress(**meta["progress"]), best


def _fixed(model: torch.nn.Module) -> set[str]:
    """Names of the parameters that do not train (a frozen base's weights)."""
    return {name for name, p in model.named_parameters() if not p.requires_grad}


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)
