"""Budgets a model config must fit before anything is built from it.

A checkpoint's or a Hugging Face folder's ``config.json`` is a few bytes that describe a model of
any size: 10^6 layers of width 2 are only 44M parameters (under the parameter limit) but 10^6
Python modules, about 27 GB; a 49M-word vocabulary of width 4 is 196M parameters. Every shape is
therefore checked here, from the numbers alone, before :func:`uqcore.build.build_model` runs:
:func:`check_budget` raises :class:`~uqcore.exceptions.CheckpointError` naming the limit and what
to do. The defaults (:data:`DEFAULT_BUDGET`) admit every shipped checkpoint and the usual
BERT-base / RoBERTa-base / DistilBERT classifiers (12 layers, width 768, 30-50k words, 512-514
positions) with room to spare (48 layers, width 4096).

The memory a model takes is estimated as :func:`model_bytes`: its parameters in float32 (the
dtype every checkpoint is loaded in) plus :data:`LAYER_OVERHEAD_BYTES` for the modules of each
layer, against ``max_bytes`` (1 GiB). Loading holds about twice the parameters for a moment (the
model and the tensors read from the file), so a model at the budget needs about 2 GiB beside the
server's own memory.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from dataclasses import dataclass

import torch

from uqcore.backbones import get_backbone
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.families import get_family

# Measured (torch 2.13, CPU; python -m uqcore.budget): the RSS one more layer of width 2 adds
# beyond its parameters is 26.8 KiB (TRANS, MC dropout), 28.5 KiB (H-STO), 30.5 KiB (BAM): the
# nn.Module objects, their dicts and the small tensors' allocations. Rounded up.
LAYER_OVERHEAD_BYTES = 32 * 1024
FLOAT_BYTES = 4  # a loaded model is float32


@dataclass(frozen=True)
class Budget:
    """The largest model this process builds from a config it did not write.

    ``max_layers`` (n_layers), ``max_d_model`` (width), ``max_d_ff`` (FFN width),
    ``max_heads``, ``max_vocab`` (embedding rows), ``max_positions`` (max_len),
    ``max_classes``, ``max_ensemble`` (members), ``max_structure`` (any other integer of the
    family's or the backbone's structure: H-STO centroids, BAM's prior width, token types,
    adapter rank), ``max_parameters`` (:meth:`ModelConfig.n_parameters`) and ``max_bytes``
    (:func:`model_bytes`)."""

    max_layers: int = 48
    max_d_model: int = 4096
    max_d_ff: int = 16384
    max_heads: int = 64
    max_vocab: int = 262_144
    max_positions: int = 8192
    max_classes: int = 1000
    max_ensemble: int = 16
    max_structure: int = 4096
    max_parameters: int = 200_000_000
    max_bytes: int = 2**30


DEFAULT_BUDGET = Budget()

# (field, what it counts, its other name in a Hugging Face config.json, the Budget limit)
_LIMITS = (
    ("n_layers", "layers", "num_hidden_layers / n_layers", "max_layers"),
    ("d_model", "hidden width", "hidden_size / dim", "max_d_model"),
    ("d_ff", "feed-forward width", "intermediate_size / hidden_dim", "max_d_ff"),
    ("n_heads", "attention heads", "num_attention_heads / n_heads", "max_heads"),
    ("vocab_size", "vocabulary entries", None, "max_vocab"),
    ("max_len", "positions", "max_position_embeddings", "max_positions"),
    ("num_classes", "classes", "id2label", "max_classes"),
    ("ensemble_size", "ensemble members", None, "max_ensemble"),
)


def _structure_ints(cfg: ModelConfig) -> dict[str, int]:
    """Every integer of the family's and the backbone's structure, and the adapters' rank.
    Token ids (``int | None`` fields such as ``pool_skip_id``) are not structure: they are
    indices, bounded by the vocabulary in :meth:`ModelConfig.validate` (a Llama 3 pads with
    id 128,004); nor is a field whose metadata says ``structure: False`` (a record of how the
    model was made, such as :class:`uqcore.nets.posterior.LaplaceParams`'s ``fit_rows``)."""
    out = {}
    for where, params in (
        ("attention", cfg.attention),
        ("backbone_params", cfg.backbone_params),
        ("adapters", cfg.adapters),
    ):
        if dataclasses.is_dataclass(params):
            hints = typing.get_type_hints(type(params))
            for f in dataclasses.fields(params):
                value = getattr(params, f.name)
                if hints[f.name] == int | None or f.metadata.get("structure") is False:
                    continue
                if isinstance(value, int) and not isinstance(value, bool):
                    out[f"{where}.{f.name}"] = value
    return out


def _extra_parameters(cfg: ModelConfig) -> int:
    """Parameters :meth:`ModelConfig.n_parameters` leaves out: the family's own tensors in
    each layer, adapters, token types and position offsets (only called within the limits)."""
    spec = get_family(cfg.spec.member_family or cfg.family)
    with torch.device("meta"):  # the family's tensors: shapes, no memory
        own = sum(p.numel() for p in spec.weights(cfg.attention, cfg.n_heads, cfg.d_head).values())
    d, f = cfg.d_model, cfg.d_ff
    layer = own + (cfg.adapters.rank * (8 * d + 2 * f) if cfg.adapters is not None else 0)
    rows = sum(getattr(cfg.backbone_params, k, 0) for k in ("type_vocab_size", "position_offset"))
    return cfg.ensemble_size * (cfg.n_layers * layer + rows * d)


# The weights an adapter target names in one block, in units of (d_model^2, d_model * d_ff):
# the weights its adapters are merged into at loading, which each member then holds on its own.
_TARGET_SIZES = {"qkv": (3, 0), "proj": (1, 0), "ff1": (0, 1), "ff2": (0, 1), "ff_gate": (0, 1)}


def _shared_per_member(cfg: ModelConfig) -> int:
    """Parameters of one member that every member of an ensemble on a pretrained base points at
    one held copy of (:func:`uqcore.readers.base_model.share_base`): a decoder's whole frozen
    base less its head and the weights its adapters are merged into; an encoder's embedding
    tables (:data:`uqcore.nets.bert.SHARED_TABLES`). 0 for one network or a word-level model.
    Rounded down (a member is counted as holding more of its own, never less)."""
    spec = get_backbone(cfg.backbone)
    if cfg.ensemble_size == 1 or not spec.pretrained:
        return 0
    d, f = cfg.d_model, cfg.d_ff
    if spec.classifier != "decoder":
        return cfg.vocab_size * d  # the word table (positions and types counted as own)
    merged = 0
    if cfg.adapters is not None:
        blocks = cfg.n_layers if cfg.adapters.layers is None else len(cfg.adapters.layers)
        for target in cfg.adapters.targets:
            squares, ffn = _TARGET_SIZES.get(target, (4, 3))  # unknown: a whole block
            merged += blocks * (squares * d * d + ffn * d * f)
    one = cfg.n_parameters() // cfg.ensemble_size
    return max(0, one - merged - d * d - d * cfg.num_classes)


def held_parameters(cfg: ModelConfig) -> int:
    """About how many parameters a loaded model of ``cfg`` holds: :meth:`ModelConfig.
    n_parameters` (every member whole), less the base the members of an ensemble on a pretrained
    base share (held once, however many members: :func:`_shared_per_member`)."""
    return cfg.n_parameters() - (cfg.ensemble_size - 1) * _shared_per_member(cfg)


def model_bytes(cfg: ModelConfig) -> int:
    """About the bytes a loaded model of ``cfg`` takes: float32 parameters plus the modules'
    overhead per layer (:data:`LAYER_OVERHEAD_BYTES`), every ensemble member counted and a
    pretrained base its members share counted once (:func:`held_parameters`)."""
    params = held_parameters(cfg) + _extra_parameters(cfg)
    return FLOAT_BYTES * params + cfg.ensemble_size * cfg.n_layers * LAYER_OVERHEAD_BYTES


def check_budget(
    cfg: ModelConfig, budget: Budget = DEFAULT_BUDGET, where: str = "The config"
) -> ModelConfig:
    """Return ``cfg`` if a model of it fits ``budget``; else raise
    :class:`~uqcore.exceptions.CheckpointError` naming the limit and what to do. Computed from the
    numbers alone, in microseconds: call it before anything is built or read for ``cfg``.
    ``where`` starts the message (``"config.json"``)."""
    n = held_parameters(cfg)
    if n > budget.max_parameters:  # first: the wording callers have matched since 200M was set
        raise CheckpointError(
            f"{where} describes {n / 1e6:,.0f}M parameters; this app loads models of at most "
            f"{budget.max_parameters / 1e6:,.0f}M. Check n_layers, d_model, d_ff, vocab_size and "
            "ensemble_size in config.json."
        )
    for name, what, hf_name, limit in _LIMITS:
        value, most = getattr(cfg, name), getattr(budget, limit)
        if value > most:
            also = f"; {hf_name} in a Hugging Face config.json" if hf_name else ""
            raise CheckpointError(
                f"{where} describes {value:,} {what} ({name}{also}); this app builds models of "
                f"at most {most:,} (uqcore.budget.Budget.{limit}). Use a smaller model: "
                "BERT-base has 12 layers of width 768, 12 heads and 30,522 words."
            )
    for name, value in _structure_ints(cfg).items():
        if value > budget.max_structure:
            raise CheckpointError(
                f"{where} sets {name} to {value:,}; this app builds models whose structure "
                f"numbers are at most {budget.max_structure:,} (uqcore.budget.Budget."
                "max_structure). Use the value the model was trained with."
            )
    size = model_bytes(cfg)
    if size > budget.max_bytes:
        raise CheckpointError(
            f"{where} describes a model of about {size / 2**20:,.0f} MB in memory; this app "
            f"loads models of at most {budget.max_bytes / 2**20:,.0f} MB (uqcore.budget.Budget."
            "max_bytes), so that the server keeps room. Use a smaller model."
        )
    return cfg


def _measure(n_layers: int = 2000) -> None:  # pragma: no cover - a measurement, not a test
    """Print the RSS one more layer adds beyond its parameters, per family (fresh process)."""
    code = (
        "import gc, sys\n"
        "from uqcore.build import build_model\nfrom uqcore.config import ModelConfig\n"
        "def rss():\n"
        "    return next(int(x.split()[1]) * 1024 for x in open('/proc/self/status')"
        " if x.startswith('VmRSS'))\n"
        "def cfg(n):\n"
        "    return ModelConfig(family=sys.argv[1], vocab_size=8, max_len=4, n_layers=n,"
        " n_heads=1, d_model=2, d_ff=2)\n"
        "build_model(cfg(1)); gc.collect(); r0 = rss()\n"
        "m = build_model(cfg(int(sys.argv[2]))); gc.collect()\n"
        "params = sum(p.numel() for p in m.parameters()) * 4\n"
        "print(f'{sys.argv[1]:10s} {(rss() - r0 - params) / int(sys.argv[2]) / 1024:.1f} KiB"
        " a layer')\n"
    )
    for family in ("trans", "mcdropout", "hsto", "bam"):
        subprocess.run([sys.executable, "-c", code, family, str(n_layers)], check=True)


if __name__ == "__main__":  # pragma: no cover
    _measure()
