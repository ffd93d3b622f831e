"""Continue a shipped checkpoint's training under a new recipe (``TrainConfig.init_from``).

BERT's own schedule trained at 128 tokens, then went on at 512; the MiniLM IMDB adapters were
trained at 256 tokens and read better at 512 (docs/results.md). Going on from the 256-token
adapters over 2,500 reviews at 512 took 79 steps of ~11 s on this 2-core CPU (18 min 49 s with
the dev pass, docs/training.md) where two whole epochs at 512 would take ~3.8 h a model.

Contract: the source is a checkpoint on a pretrained base (a word-level one builds its
vocabulary from the training split, which the new recipe may cut differently), of the same
family, base and architecture as the recipe; only the reading length (``max_len``, which on a
decoder also sets ``ModelConfig.max_len``) may differ. Its adapters are read apart from the
base (``merge=False``) and each member starts from the source's member of the same index: what
the checkpoint stores (float16 where it was saved so) becomes the float32 starting point;
the base's frozen weights come from the base as in a fresh run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from uqcore.build import DeepEnsemble, frozen_names
from uqcore.checkpoint import load_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqlab.bases import get_base
from uqlab.catalog.paths import checkpoint_dir


@dataclass(frozen=True)
class Start:
    """The source's trained tensors, one unprefixed dict per member, and the record the new
    checkpoint keeps of where it started (``training["init_from"]``)."""

    members: list[dict[str, torch.Tensor]]
    record: dict[str, Any]


def source_folder(value: str) -> Path:
    """``value`` as a folder when it is one, else a checkpoint name under the checkpoint dir."""
    path = Path(value)
    return path if path.is_dir() else checkpoint_dir() / value


def load_start(value: str, cfg: ModelConfig, base: str | None) -> Start:
    """The starting weights for a run whose model is ``cfg`` on ``base``, from the checkpoint
    ``value`` names. :class:`ConfigError` (one line, saying what to change) for a source that
    is missing, not on a base, on another base, or of another architecture or family."""
    if base is None:
        raise ConfigError(
            "init_from continues adapters on a pretrained base: set base (e.g. minilm); a "
            "word-level model builds its vocabulary from the training split."
        )
    folder = source_folder(value)
    if not folder.is_dir():
        raise ConfigError(
            f"init_from: no checkpoint {value!r} (give a name under {checkpoint_dir().name}/ "
            "or a checkpoint folder)."
        )
    # the adapters apart: they go on training; a checkpoint that reads a sibling's identical
    # weights (imdb-minilm-mcdropout reads imdb-minilm-trans's: uqlab.share_weights) is followed
    ck = load_checkpoint(folder, merge=False, shared_weights=True)
    want = get_base(base).record()
    if ck.base is None or ck.base.sha256 != want.sha256:
        had = f"the base {ck.base.folder}" if ck.base is not None else "no base"
        raise ConfigError(f"init_from: {ck.name} is on {had}, the recipe on {base}.")
    differ = _differences(ck.config.replace(max_len=cfg.max_len), cfg)
    if differ:
        raise ConfigError(
            f"init_from: {ck.name} differs from the recipe in {', '.join(differ)}; only the "
            "reading length (max_len) may change."
        )
    frozen = frozen_names(cfg)
    sources = list(ck.model.members) if isinstance(ck.model, DeepEnsemble) else [ck.model]
    members = [
        {k: v.detach().clone() for k, v in m.state_dict().items() if k not in frozen}
        for m in sources
    ]
    training = ck.training or {}
    record = {
        "checkpoint": ck.name,
        "command": training.get("command"),
        "seconds": training.get("seconds"),
        "max_len": (training.get("config") or {}).get("max_len"),
    }
    return Start(members, record)


def apply_start(member: torch.nn.Module, tensors: dict[str, torch.Tensor]) -> None:
    """Copy a source member's trained tensors into ``member`` (one classifier, its base already
    loaded); every tensor the base does not provide must be among them."""
    expected = set(member.state_dict()) - frozen_names(member.cfg)
    missing = sorted(expected - set(tensors))
    if missing:  # load_start checked the architecture: this is a bug, not a user's mistake
        raise AssertionError(f"the source lacks {', '.join(missing[:5])}")
    with torch.no_grad():
        member.load_state_dict(tensors, strict=False)


def _differences(a: ModelConfig, b: ModelConfig) -> list[str]:
    """The names of the fields in which two model configs differ."""
    return [f.name for f in fields(a) if getattr(a, f.name) != getattr(b, f.name)]
