"""Turn a local Hugging Face classifier folder into a checkpoint: ``python -m uqlab.import_hf
FOLDER --name NAME (--task TASK | --task-file T.json) [--family trans|mcdropout|sto|bam]
[--layers last|all|0,5] [--copy] [--root DIR]``.

The task is a built-in one, one that a checkpoint of ``--root`` was trained on from a task
file (its ``training.task_spec``: CR among the shipped ones), or one described by ``--task-file``
(:mod:`uqlab.catalog.task_file`, read within its bounds). A task that is not built in is kept in the
checkpoint's ``training.task_spec``, as training keeps it, so ``uqlab.evaluate`` and the app
read it without the file (:func:`uqlab.catalog.task_file.register_from_training`).

The folder is what ``save_pretrained`` writes for a ``BertForSequenceClassification``,
``RobertaForSequenceClassification`` or ``DistilBertForSequenceClassification`` (BERT, MiniLM,
TinyBERT... in BERT's layout), or for a decoder classifier: ``LlamaForSequenceClassification``
(SmolLM...), ``Qwen2ForSequenceClassification``, ``MistralForSequenceClassification``,
``GPT2ForSequenceClassification`` (:mod:`uqcore.nets.decoder`: the last real token read, the text
wrapped in what the folder's own tokenizer template adds): ``config.json`` with ``id2label``,
``model.safetensors`` and ``tokenizer.json``. The checkpoint references the folder by its path
and the sha256 of its weights (no copy: :class:`uqcore.readers.base_model.BaseRecord`), or with
``--copy`` keeps a float16 copy of the weights, config and tokenizer inside it (``base/``). Its
own ``model.safetensors`` holds only the family's tensors (none for the training-free
families).

The families need no training; each adds noise to this model, which stays itself at zero noise:
``trans`` (the model as it is), ``mcdropout`` (dropout kept on, at the model's hidden dropout
rate), ``sto`` (Gumbel noise of scale lambda on the attention logits of the stochastic layers,
before their division by tau2 = sqrt(d_head): lambda = 0 is the model) and ``bam`` (Weibull
attention weights whose mean is the model's attention, shape k = 10 / lambda; the prior is fixed,
uniform: this model has no learned prior). A folder written by :mod:`uqlab.export_hf` carries
its family in ``uq_family.json`` / ``uq_family.safetensors`` and is imported as that family.

Everything is checked before anything is built or written: the architecture, ``id2label``
against the classifier's rows, the sizes the config claims (within :mod:`uqcore.budget`:
layers, widths, vocabulary, memory), links, pickles, the tokenizer's size, finite weights. The
model is built once, by the strict load that checks the written checkpoint.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from uqcore.backbones import get_backbone
from uqcore.budget import check_budget
from uqcore.checkpoint import (
    MAX_HEADER_BYTES,
    PICKLE_SUFFIXES,
    load_checkpoint,
    save_checkpoint,
)
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError, ConfigError, UQError
from uqcore.families import TRAINING_FREE, get_family
from uqcore.nets.bert import read_hf_config
from uqcore.readers.base_model import BaseRecord, file_sha256
from uqcore.readers.decoder_weights import decoder_pool_skip_id, decoder_specials
from uqcore.readers.hf_decoder_layouts import DECODER_LAYOUTS, decoder_layout_of
from uqcore.readers.hf_fields import shown
from uqcore.readers.hf_layouts import ARCHITECTURES, layout_of, read_config_json
from uqcore.registry import check_name, list_checkpoints
from uqcore.text.wordpiece import TOKENIZER_FILE, WordPiece
from uqcore.untrusted import read_json_file
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import read_task_file, register_from_training
from uqlab.catalog.tasks import TASK_NAMES, TASKS, TaskSpec, describe, get_task
from uqlab.models.import_reading import ReadingLength, probe, reading_length
from uqlab.models.stale import staged_checkpoint, staging_pattern

SIDE_JSON, SIDE_TENSORS = "uq_family.json", "uq_family.safetensors"  # written by uqlab.export_hf
SIDE_BYTES = 1 << 20  # a larger uq_family.json is refused unread
WEIGHTS = "model.safetensors"
BASE_COPY = "base"  # --copy / uploads: the folder inside the checkpoint
HF_FILES = ("config.json", WEIGHTS, TOKENIZER_FILE)  # + the side files, when present
MAX_LABELS = 1000
STAGING_PATTERN = staging_pattern()  # import_folder's work folders


ALL_ARCHITECTURES = (*ARCHITECTURES, *(x.architecture for x in DECODER_LAYOUTS.values()))


class ImportError_(UQError):  # "ImportError" is a builtin
    """A refused folder; the message names what is wrong and what to do."""


@dataclass
class HFFolder:
    """A checked Hugging Face classifier folder: its path, config, architecture, labels, the
    :class:`ModelConfig` fields of its shape, and the family record of an exported checkpoint."""

    path: Path
    hf: dict
    backbone: str
    labels: tuple[str, ...]
    fields: dict[str, Any]
    side: dict | None = None  # uq_family.json, when the folder was written by uqlab.export_hf
    side_tensors: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def architecture(self) -> str:
        return get_backbone(self.backbone).hf.architecture


def inspect(folder: str | Path) -> HFFolder:
    """Check ``folder`` without building anything; :class:`CheckpointError` says what is wrong."""
    path = Path(folder)
    if path.is_symlink() or not path.is_dir():
        raise CheckpointError("That is not a folder (links are not followed).")
    entries = list(path.iterdir())
    links = sorted(e.name for e in entries if e.is_symlink())
    if links:
        raise CheckpointError(
            f"{', '.join(links[:3])} in the folder is a link; links are not followed (a Hub "
            "cache folder is made of them): copy the files into a plain folder."
        )
    names = {e.name for e in entries}
    if WEIGHTS not in names:
        pickles = sorted(n for n in names if Path(n).suffix.lower() in PICKLE_SUFFIXES)
        if pickles:
            raise CheckpointError(
                f"The folder holds {', '.join(pickles[:3])}, a pickle, and no {WEIGHTS}: pickles "
                "can run code and are never loaded. Convert it: model.save_pretrained(folder, "
                "safe_serialization=True)."
            )
        raise CheckpointError(f"The folder has no {WEIGHTS}; save the model with save_pretrained.")
    hf = read_config_json(path)
    kind = hf.get("model_type")
    decoder = isinstance(kind, str) and kind in DECODER_LAYOUTS  # a list or an object: neither
    try:
        layout = decoder_layout_of(hf) if decoder else layout_of(hf)
    except CheckpointError:
        raise CheckpointError(
            f"config.json describes a {shown(kind)} model; this app "
            f"imports {', '.join(ALL_ARCHITECTURES)}."
        ) from None
    archs = hf.get("architectures") or [layout.architecture]
    if not isinstance(archs, list) or layout.architecture not in archs:
        raise CheckpointError(
            f"config.json names {shown(archs)}; this app imports sequence classifiers only "
            f"({', '.join(ALL_ARCHITECTURES)}). Fine-tune a classification head first."
        )
    labels = _labels(hf)
    fields = {"backbone": layout.backbone, **layout.fields(hf)} if decoder else read_hf_config(path)
    shape = ModelConfig.from_dict({**fields, "family": "trans", "num_classes": len(labels)})
    check_budget(shape, where="config.json")  # from the numbers: before any tensor or tokenizer
    _check_header(path / WEIGHTS, layout, len(labels))
    info = HFFolder(path, hf, layout.backbone, labels, fields)
    check_tokenizer(info)
    if SIDE_JSON in names:
        _read_side(info)
    return info


def _labels(hf: dict) -> tuple[str, ...]:
    """``id2label`` as a tuple ordered by id 0..n-1."""
    raw = hf.get("id2label")
    if not isinstance(raw, dict) or not raw:
        raise CheckpointError(
            "config.json has no id2label: set the label names (model.config.id2label = {0: "
            "'negative', 1: 'positive'}) and save again; the app shows them."
        )
    if len(raw) > MAX_LABELS:
        raise CheckpointError(f"config.json lists {len(raw):,} labels; at most {MAX_LABELS}.")
    try:
        ids = sorted(int(k) for k in raw)
    except (TypeError, ValueError):
        raise CheckpointError(
            "config.json's id2label keys must be the class ids 0, 1, ..."
        ) from None
    if ids != list(range(len(ids))):
        raise CheckpointError("config.json's id2label must number the classes 0, 1, ... n-1.")
    names = tuple(str(raw.get(str(i), raw.get(i))) for i in ids)
    if any(not n or len(n) > 40 for n in names):
        raise CheckpointError("Each label name in id2label must have 1 to 40 characters.")
    if len(names) < 2:
        raise CheckpointError("config.json's id2label lists one class; a classifier needs two.")
    return names


def _check_header(weights: Path, layout, n_labels: int) -> None:
    """The classifier's rows against ``id2label``, from the safetensors header alone."""
    if weights.is_symlink():
        raise CheckpointError(f"{WEIGHTS} is a link; links are not followed.")
    with weights.open("rb") as fh:
        head = fh.read(8)
    if len(head) < 8 or int.from_bytes(head, "little") > MAX_HEADER_BYTES:
        raise CheckpointError(f"{WEIGHTS} is not a readable safetensors file; save it again.")
    name = layout.head["head.weight"]
    try:
        with safe_open(str(weights), framework="pt") as f:
            keys = set(f.keys())
            if name not in keys:
                raise CheckpointError(
                    f"{WEIGHTS} has no {name}: it is not a {layout.architecture} (a bare "
                    "encoder has no classifier to import)."
                )
            rows = f.get_slice(name).get_shape()[0]
    except CheckpointError:
        raise
    except Exception as exc:  # safetensors' own error types
        raise CheckpointError(
            f"{WEIGHTS} is not a readable safetensors file ({type(exc).__name__}); save it again."
        ) from None
    if rows != n_labels:
        raise CheckpointError(
            f"id2label names {n_labels} classes but the classifier ({name}) has {rows} rows; "
            "fix id2label in config.json to match the trained head."
        )


def _read_side(info: HFFolder) -> None:
    """The family record an export wrote beside the weights (JSON + safetensors)."""
    try:  # within the bounds of uqcore.untrusted: its message names the file and the problem
        side = read_json_file(info.path / SIDE_JSON, max_bytes=SIDE_BYTES, error=CheckpointError)
    except OSError:
        raise CheckpointError(f"{SIDE_JSON} cannot be read; export the checkpoint again.") from None
    if not isinstance(side, dict) or not isinstance(side.get("model"), dict):
        raise CheckpointError(f"{SIDE_JSON} must hold an object with 'model'; export again.")
    info.side = side
    tensors = info.path / SIDE_TENSORS
    if tensors.is_file() and not tensors.is_symlink():
        try:
            with safe_open(str(tensors), framework="pt") as f:
                info.side_tensors = {k: f.get_tensor(k) for k in f.keys()}
        except Exception as exc:  # safetensors' own error types
            raise CheckpointError(
                f"{SIDE_TENSORS} is not readable ({type(exc).__name__}); "
                "export the checkpoint again."
            ) from None


def parse_layers(text: str | None, n_layers: int) -> tuple[int, ...] | None:
    """``last`` (default) -> ``(n-1,)``; ``all`` -> None (every layer); ``0,5`` -> ``(0, 5)``."""
    if text in (None, "", "last"):
        return (n_layers - 1,)
    if text == "all":
        return None
    try:
        layers = tuple(sorted({int(x) for x in text.split(",")}))
    except ValueError:
        raise ConfigError(
            f"--layers must be 'last', 'all' or indices like 0,5; got {text!r}."
        ) from None
    if not layers or any(not 0 <= i < n_layers for i in layers):
        raise ConfigError(f"--layers: this model has layers 0-{n_layers - 1}; got {text!r}.")
    return layers


def uses_side(info: HFFolder, family: str | None) -> bool:
    """Whether the import takes the family an export recorded (no family asked, or that one)."""
    return info.side is not None and family in (None, info.side["model"].get("family"))


def family_config(info: HFFolder, family: str | None, layers: str | None = None) -> ModelConfig:
    """The :class:`ModelConfig` of ``info`` as ``family`` (one of :data:`TRAINING_FREE`; None:
    the family an export recorded, else MC dropout, or STO for a model without dropout), the
    base providing every tensor of the encoder and its head."""
    base = {**info.fields, "num_classes": len(info.labels)}
    base["backbone_params"] = {**base["backbone_params"], "head_from_base": True}
    if get_backbone(info.backbone).classifier == "decoder":  # its head reads as transformers'
        base["backbone_params"]["pool_skip_id"] = _pool_skip_id(info)
    if uses_side(info, family):
        model = {**info.side["model"], **{k: base[k] for k in base if k != "backbone_params"}}
        model["backbone_params"] = base["backbone_params"]
        model.pop("adapters", None)
        return ModelConfig.from_dict({**model, "adapters": None})
    # MC dropout at a rate of 0 (Llama's attention_dropout) would add no noise: STO then
    family = family or ("mcdropout" if base.get("dropout", 0.0) > 0 else "sto")
    if family not in TRAINING_FREE:
        raise ConfigError(
            f"--family must be one of {', '.join(TRAINING_FREE)} (no training "
            f"needed); got {family!r}."
        )
    spec = get_family(family)
    d_head = base["d_model"] // base["n_heads"]
    params, inference = spec.untrained(d_head)
    layers_ = parse_layers(layers, base["n_layers"]) if spec.layered else None
    return ModelConfig.from_dict({**base, "family": family}).replace(
        attention=params, inference=inference, stochastic_layers=layers_
    )


def _pool_skip_id(info: HFFolder) -> int | None:
    """The id a decoder classifier's head skips, as transformers pools: its ``pad_token_id``
    (None when absent, or when it is no token of the vocabulary: then it never matches)."""
    skip = decoder_pool_skip_id(info.path)
    return skip if skip is not None and skip < info.fields["vocab_size"] else None


def import_folder(
    folder: str | Path,
    name: str,
    task: str,
    *,
    family: str | None = None,
    layers: str | None = None,
    copy: bool = False,
    root: str | Path | None = None,
    info: HFFolder | None = None,
    describe_task: bool = True,
    max_len: int | None = None,
) -> Path:
    """Write checkpoint ``root/name`` from the folder; returns its path. Nothing is written when
    a check fails; an earlier checkpoint of that name is replaced only once the new one loads.
    The work is done in ``root/.staging-<name>.<pid>@<host>``; those of killed imports (their
    process gone) are removed first, those of running ones kept (:mod:`uqlab.models.stale`).
    ``task`` must be in the task table (:func:`task_for` puts it there); ``describe_task``: a
    task that is not built in is kept in ``training.task_spec`` (False for an upload, which
    never names a file of the server). ``max_len``: the tokens a text is read at
    (:func:`uqlab.models.import_reading.reading_length`: else the task's, the folder's...)."""
    info = info or inspect(folder)
    root = Path(root) if root is not None else checkpoint_dir()
    target = root / check_name(name)
    with staged_checkpoint(root, name) as staging:
        record = _base(info, staging, copy)
        write_checkpoint(
            staging,
            info,
            task,
            family,
            layers,
            record,
            describe_task=describe_task,
            max_len=max_len,
        )
    return target


def write_checkpoint(
    out: Path,
    info: HFFolder,
    task: str,
    family: str | None,
    layers: str | None,
    record: BaseRecord,
    *,
    local_base: bool = True,
    describe_task: bool = False,
    described: dict | None = None,
    max_len: int | None = None,
) -> None:
    """Write the checkpoint files of ``info`` as ``family`` into ``out`` (its base named by
    ``record``) and load it back strictly (``local_base=False``: as an upload, whose base must
    lie inside it). ``describe_task``: keep the description of a task that is not built in in
    ``training.task_spec``, as a trained checkpoint keeps it (an operator's import).
    ``described``: a visitor's own task (a data-free description, checked by
    :func:`uqlab.models.intake.visitor_task`, never registered), kept as it is in
    ``training.task_spec`` instead of a task of the table. The tokens a text is read at
    (``max_len``, else the task's, the export's, the tokenizer config's: :func:`reading`) are
    kept in ``training.config``; the written checkpoint runs once on a probe text
    (:func:`uqlab.models.import_reading.probe`): one that cannot run is refused."""
    spec = describe(described, ".", "the task description", data_free=True) if described else None
    spec = spec or get_task(task)
    if len(spec.label_names) != len(info.labels):
        raise ConfigError(
            f"The model has {len(info.labels)} classes ({', '.join(info.labels)}) but task "
            f"{task!r} has {len(spec.label_names)}; pick a task with as many labels."
        )
    cfg = check_budget(family_config(info, family, layers), where="The imported model")
    length = reading(info, spec, max_len)
    side = uses_side(info, family)
    # The base provides every tensor but the exported family's own (centroids, prior network),
    # and those are all the checkpoint stores: nothing is built to write it. The strict load
    # below builds the model once and checks everything, as the app will.
    tensors = dict(info.side_tensors) if side else {}
    training = {
        "task": task,
        "family": cfg.family,
        "label_names": list(info.labels),
        "imported": {
            "architecture": info.architecture,
            "folder": info.path.name,
            "base": "inside" if record.inside else "referenced",
            "family_from_export": side,
        },
        "config": length.training(),  # the reading length and where it came from
    }
    if side:
        training = {**info.side.get("training", {}), **training}  # our config: the length
        training.pop("task_spec", None)  # the task is the one asked for now
    if described:  # a visitor's: what it said, without files (never the parsed form)
        training["task_spec"] = described
    elif describe_task and not spec.builtin:  # evaluating or opening it needs no task file
        training["task_spec"] = spec.description
    try:
        save_checkpoint(
            out, tensors, cfg, None, training=training, base=record, card=_card(info, cfg)
        )
    except CheckpointError as exc:
        if not side:
            raise
        raise CheckpointError(
            f"{SIDE_TENSORS} does not fit {SIDE_JSON} ({exc}); export the checkpoint again."
        ) from None
    probe(load_checkpoint(out, local_base=local_base))  # checked again, as the app will; run once


def reading(info: HFFolder, spec: TaskSpec, max_len: int | None = None) -> ReadingLength:
    """The reading length of an import of ``info`` for task ``spec`` and where it came from
    (:func:`uqlab.models.import_reading.reading_length`; a built-in task's training length is its
    word-level recipe's, not this model's, and is not taken)."""
    return reading_length(
        info.path,
        info.fields["max_len"],
        max_len=max_len,
        task=None if spec.builtin else spec.description,
        side=info.side,
    )


def _card(info: HFFolder, cfg: ModelConfig) -> str:
    """The model card of an imported checkpoint: where it came from and what its noise means."""
    spec = cfg.spec
    where = (
        "every layer"
        if cfg.stochastic_layers is None
        else "layer(s) " + ", ".join(map(str, cfg.stochastic_layers))
    )
    noise = f" Noise in {where}." if spec.layered else ""
    return (
        f"# {info.path.name} as {spec.title}\n\nA pretrained {info.architecture} "
        f"({cfg.n_layers} layers, width {cfg.d_model}, labels {', '.join(info.labels)}), "
        f"imported as it is. {spec.title}: {spec.untrained_help or 'as exported'}.{noise}\n\n"
        "Made stochastic without training: the samples measure how sensitive this model is to "
        "that noise, not a posterior of a model trained with it (docs/models.md, section 3b). "
        "Not evaluated at import: the app's dataset pages sample it live; an evaluation by "
        "uqlab.evaluate stores its metrics and calibration.\n"
    )


def _base(info: HFFolder, staging: Path, copy: bool) -> BaseRecord:
    """The base record: the folder itself (absolute path, sha256), or a float16 copy inside."""
    if not copy:
        return BaseRecord.for_folder(str(info.path.resolve()), file_sha256(info.path / WEIGHTS))
    out = staging / BASE_COPY
    out.mkdir()
    for fname in ("config.json", TOKENIZER_FILE):
        shutil.copyfile(info.path / fname, out / fname)
    with safe_open(str(info.path / WEIGHTS), framework="pt") as f:
        tensors = {k: _half(f.get_tensor(k)) for k in f.keys()}
    save_file(tensors, str(out / WEIGHTS))
    return BaseRecord.for_folder(BASE_COPY, file_sha256(out / WEIGHTS))


def _half(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.float16).contiguous() if t.is_floating_point() else t.contiguous()


def check_tokenizer(info: HFFolder) -> WordPiece:
    """The folder's tokenizer, loaded (size and specials checked)."""
    spec = get_backbone(info.backbone)
    specials = decoder_specials(info.path) if spec.classifier == "decoder" else spec.hf.specials
    tok = WordPiece.from_folder(info.path, specials)
    if len(tok) > info.fields["vocab_size"]:
        raise CheckpointError(
            f"The tokenizer has {len(tok):,} ids but the model embeds "
            f"{info.fields['vocab_size']:,}; use the model's own tokenizer."
        )
    return tok


def task_for(task: str | None, task_file: str | Path | None, root: str | Path | None = None) -> str:
    """The name of the task an import is for, registered in the task table: the task described
    by ``task_file`` (read and checked by :func:`uqlab.catalog.task_file.read_task_file`, within its
    bounds), else ``task``: a built-in task, or one a checkpoint of ``root`` (default: the
    checkpoint folder) keeps in its ``training.task_spec``. :class:`ConfigError` in one line
    otherwise (a bad file: its name and what is wrong)."""
    if task_file is not None:
        return read_task_file(task_file).name
    if not task:
        raise ConfigError("Give --task NAME or --task-file T.json.")
    if task not in TASKS:
        folder = Path(root) if root is not None else checkpoint_dir()
        for info in list_checkpoints(folder):  # the operator's checkpoints: trusted
            if not info.error and info.training.get("task") == task:
                register_from_training(info.training)
    if task not in TASKS:
        described = sorted(set(TASKS) - set(TASK_NAMES))
        known = ", ".join(TASK_NAMES) + (
            f" (built in), {', '.join(described)} (described by checkpoints)" if described else ""
        )
        raise ConfigError(
            f"Unknown task {task[:40]!r}; use one of {known}, or describe it in a file: "
            "--task-file T.json (uqlab.catalog.task_file)."
        )
    return task


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.import_hf", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("folder", help="a local Hugging Face classifier folder")
    p.add_argument("--name", required=True, help="the checkpoint's name")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--task",
        help=f"the task whose bundled data the dataset pages use (labels in order): "
        f"{', '.join(TASK_NAMES)}, or a task a checkpoint of --root was trained on from a file",
    )
    which.add_argument(
        "--task-file",
        help="a task described by a JSON file (uqlab.catalog.task_file), kept in the checkpoint",
    )
    p.add_argument(
        "--family",
        default=None,
        choices=TRAINING_FREE,
        help="default: the family an export recorded (uq_family.json), else mcdropout "
        "(sto for a model without dropout, which MC dropout would leave deterministic)",
    )
    p.add_argument(
        "--layers",
        default="last",
        help="which layers draw noise (sto, bam): last, all, or indices like 0,5",
    )
    p.add_argument(
        "--copy",
        action="store_true",
        help="keep a float16 copy of the weights inside the checkpoint",
    )
    p.add_argument(
        "--max-len",
        type=int,
        default=None,
        help="tokens a text is read at, specials included (default: the task file's "
        "train_defaults.max_len, else the length an export recorded, else the folder's "
        "tokenizer_config.json model_max_length, else the model's positions; at most those)",
    )
    p.add_argument("--root", default=None, help="checkpoint folder (default: UQ_CHECKPOINT_DIR)")
    args = p.parse_args(argv)
    start = time.perf_counter()
    try:
        task = task_for(args.task, args.task_file, args.root)
        info = inspect(args.folder)
        length = reading(info, get_task(task), args.max_len)
        out = import_folder(
            args.folder,
            args.name,
            task,
            family=args.family,
            layers=args.layers,
            copy=args.copy,
            root=args.root,
            info=info,
            max_len=args.max_len,
        )
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder that cannot be read or written: one line, not a traceback
        print(
            f"error: {exc.strerror or type(exc).__name__}: {exc.filename or args.folder}",
            file=sys.stderr,
        )
        return 2
    family = args.family or "mcdropout"
    if uses_side(info, args.family):
        family = f"{info.side['model'].get('family')} (as exported)"
    took = time.perf_counter() - start
    print(f"{out}: {info.architecture} as {family} in {took:.1f} s")
    print(f"reads {length.tokens:,} tokens a text (from {length.source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
