"""Stored samples: each checkpoint's T samples of every bundled evaluation example at its default
settings, written once by ``python -m uqlab.evaluate`` and read by the app's dataset pages.

File ``samples.safetensors`` beside ``metrics.json``: a tensor ``logits [N, T', C]`` in
float16, or float32 where float16 would move a probability (:func:`storage_dtype`) (row ``i`` =
the task's :func:`bundled_rows` ``i``; ``T' = T``, or 1 when the settings draw no noise and every
sample is the same; NaN rows: a text the checkpoint cannot read), a
tensor ``examples [P, T'', C]`` of the task's example sentences (:mod:`uqlab.catalog.presets`) at
the explorer's and Table 3's default T (:data:`T_EXAMPLES`), and a metadata record: the format,
task, T, seed, the resolved settings, the sha256 of every subset's texts and labels and of the
example sentences, the sha256 of the weights and model config, and the tokens each text was
read at (``read_len``: the checkpoint's training length). A file of format 1 (before
the examples) is still read, for its bundled rows. Probabilities are the softmax
of the stored logits, as in a live run. float16 keeps a logit within 2^-11 of its value
relative, which keeps a trained head's probabilities within 1e-3 of a live run (measured on the
shipped checkpoints, ``tests/uqlab/evaluation/test_stored.py``).

:func:`read` never trusts a file that is missing, truncated, of another format, from another
version of a subset or from other weights: it returns why instead, and the pages recompute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.numpy import save

from uqcore.checkpoint import Checkpoint, read_length, weights_path
from uqcore.inference.batch_predict import predict_ids
from uqcore.settings import ForwardSettings, is_stochastic, resolve
from uqcore.text.vocab import write_atomic
from uqlab.catalog.presets import preset_rows
from uqlab.data import task_examples

FILE = "samples.safetensors"
FORMAT = "2"
READABLE_FORMATS = ("1", "2")  # 1: the bundled rows only
T_STORED = 10  # the dataset pages' default T (the paper's protocol)
T_EXAMPLES = 50  # the explorer's and Table 3's default T (ui.logic.state.DEFAULT_T; a test pins it)
SEED_STORED = 0  # the sidebar's default seed
REDO = "python -m uqlab.evaluate --ckpt NAME --stored-only"  # writes (again) a checkpoint's file
TOLERANCE = (
    1e-3  # |p stored - p live| on the shipped checkpoints (tests/uqlab/evaluation/test_stored.py)
)
SETTING_FIELDS = tuple(
    f.name
    for f in dataclasses.fields(ForwardSettings)
    if f.name not in ("fused_attention", "need_kl")  # how, not what, is computed
)


def bundled_rows(task: str) -> list[tuple[str, int, str, int]]:
    """``(text, gold, domain key, index in its subset)`` of every bundled example of ``task``:
    its subsets (:func:`uqlab.data.task_examples`) in order, in-domain first."""
    out = []
    for domain, (_, split) in task_examples(task).items():
        pairs = zip(split.texts, split.labels, strict=True)
        out += [(t, int(y), domain, i) for i, (t, y) in enumerate(pairs)]
    return out


def subset_hashes(task: str) -> dict[str, str]:
    """sha256 of each bundled subset's texts and labels (what a stored row depends on)."""
    out = {}
    for stem, split in task_examples(task).values():
        doc = json.dumps([list(split.texts), [int(y) for y in split.labels]]).encode()
        out[stem] = hashlib.sha256(doc).hexdigest()
    return out


def examples_hash(task: str) -> str:
    """sha256 of the task's example sentences and their labels (:mod:`uqlab.catalog.presets`)."""
    doc = json.dumps([[text, label] for text, label, _ in preset_rows(task)]).encode()
    return hashlib.sha256(doc).hexdigest()


def weights_hash(path: str | Path) -> str:
    """sha256 of a checkpoint's model config and the weights file it loads. Kept per version
    of the two files (path, size, modification time), so the stored samples and the stored map
    of one checkpoint read its weights once."""
    root = Path(path)
    files = (root / "config.json", weights_path(root))
    version = tuple((str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return _weights_hash(version)


@lru_cache(maxsize=256)
def _weights_hash(version: tuple) -> str:
    (config, _, _), (weights, _, _) = version
    model = json.loads(Path(config).read_text(encoding="utf-8")).get("model")
    digest = hashlib.sha256(json.dumps(model, sort_keys=True).encode())
    with open(weights, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def settings_record(fs: ForwardSettings) -> dict:
    """The resolved settings that decide a sample (plain values)."""
    return {name: getattr(fs, name) for name in SETTING_FIELDS}


@dataclass(frozen=True)
class StoredSamples:
    """A checkpoint's stored samples (see the module doc). ``rows``: text -> row of ``logits``;
    ``example_rows``: text -> row of ``examples`` (``examples_T`` samples each)."""

    logits: np.ndarray  # [N, T', C] float16 (float32 where float16 loses too much)
    T: int  # the paper's name
    seed: int
    settings: dict
    rows: dict[str, int]
    examples: np.ndarray | None = None  # [P, T'', C] float16
    examples_T: int = 0
    example_rows: dict[str, int] = field(default_factory=dict)

    def matches(self, seed: int, fs: ForwardSettings) -> str | None:
        """None when samples drawn with ``seed`` under settings ``fs`` are the stored ones,
        else why not (one line)."""
        if settings_record(fs) != self.settings:
            return "the settings differ from the checkpoint's own"
        if seed != self.seed:
            return f"stored for seed {self.seed}"
        return None

    def serves(self, T: int, seed: int, fs: ForwardSettings) -> str | None:
        """None when a request of ``T`` samples with ``seed`` and settings ``fs`` on the
        bundled examples is served from this file (their first T samples), else why not."""
        why = self.matches(seed, fs)
        if why:
            return why
        if T > self.T:
            return f"stored for T up to {self.T}"
        return None

    def get(self, text: str, T: int) -> np.ndarray | None:
        """``logits [T, C]`` float64 of ``text``'s first T samples, or None (not stored with
        T samples, or a text the checkpoint cannot read). The caller checked :meth:`matches`."""
        tables = (
            (self.logits, self.rows, self.T),
            (self.examples, self.example_rows, self.examples_T),
        )
        for table, rows, kept in tables:
            row = rows.get(text)
            if table is None or row is None or T > kept:
                continue
            got = table[row].astype(np.float64)  # [T', C]
            if not np.isfinite(got).all():
                return None
            return np.broadcast_to(got, (T, got.shape[1])) if got.shape[0] == 1 else got[:T]
        return None

    @property
    def nbytes(self) -> int:
        extra = 0 if self.examples is None else int(self.examples.nbytes)
        return int(self.logits.nbytes) + extra + 200 * (len(self.rows) + len(self.example_rows))


def compute(
    ck: Checkpoint,
    T: int = T_STORED,
    seed: int = SEED_STORED,
    bar=None,
    texts: list[str] | None = None,
) -> np.ndarray:
    """``logits [N, T', C]`` float16 of ``texts`` (default: the bundled rows of the
    checkpoint's task) at the checkpoint's own settings (see module)."""
    if texts is None:
        texts = [r[0] for r in bundled_rows((ck.training or {}).get("task"))]
    fs = resolve(ck.config)
    noisy = is_stochastic(ck.config, fs) or ck.config.spec.ensemble
    t_kept = T if noisy else 1
    shape = (len(texts), t_kept, ck.config.num_classes)
    readable, encoded = [], []
    for i, text in enumerate(texts):
        try:
            encoded.append(ck.vocab.encode(text, ck.read_len).ids)
            readable.append(i)
        except Exception:  # an unreadable text stays NaN; the page says why
            continue
    if not encoded:
        return np.full(shape, np.nan, dtype=np.float16)
    with torch.inference_mode():
        _, logits = predict_ids(
            ck.model, encoded, t_kept, seed, settings=fs, bar=bar, with_logits=True
        )  # [T', n, C]
    values = logits.permute(1, 0, 2).numpy()  # [n, T', C] float32
    out = np.full(shape, np.nan, dtype=storage_dtype(values))
    out[readable] = values.astype(out.dtype)
    return out


def storage_dtype(logits: np.ndarray) -> type:
    """float16 when it keeps every probability within a quarter of :data:`TOLERANCE` of the
    float32 logits' (a trained head's logits are small), else float32: a label-word head reads
    a language model's logits (about 20), whose float16 steps (2^-6 there) moved p by 0.003."""

    def softmax(z: np.ndarray) -> np.ndarray:
        e = np.exp(z - z.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    z = logits.astype(np.float64)
    moved = np.abs(softmax(z) - softmax(logits.astype(np.float16).astype(np.float64)))
    return np.float16 if float(moved.max(initial=0.0)) <= TOLERANCE / 4 else np.float32


def write(
    ck: Checkpoint,
    T: int = T_STORED,
    seed: int = SEED_STORED,
    bar=None,
    reuse: bool = True,
    sink=write_atomic,
) -> Path:
    """Compute and write ``samples.safetensors`` into the checkpoint's folder; its path.
    ``reuse``: bundled rows of a trusted file already there (same weights, subsets, settings,
    T and seed) are kept, not sampled again; the example sentences are always sampled.
    ``sink(path, bytes)`` writes the file (:class:`uqlab.evaluation.pending.Pending` holds it until
    a whole command has succeeded)."""
    task = ck.training["task"]
    old, _ = read(ck.path, task, resolve(ck.config)) if reuse else (None, "")
    if old is not None and old.T == T and old.seed == seed:
        logits = old.logits
        if bar is not None:
            bar.update(len(old.rows))
    else:
        logits = compute(ck, T, seed, bar)
    texts = [r[0] for r in preset_rows(task)]
    examples = compute(ck, T_EXAMPLES, seed, bar, texts=texts)
    meta = {
        "format": FORMAT,
        "task": task,
        "T": str(T),
        "seed": str(seed),
        "settings": json.dumps(settings_record(resolve(ck.config))),
        "subsets": json.dumps(subset_hashes(task)),
        "weights": weights_hash(ck.path),
        "read_len": str(ck.read_len),
        "examples_T": str(T_EXAMPLES),
        "examples": examples_hash(task),
        "dtype": str(logits.dtype),
        "command": REDO.replace("NAME", ck.name),
    }
    path = Path(ck.path) / FILE
    sink(path, save({"logits": np.ascontiguousarray(logits), "examples": examples}, metadata=meta))
    return path


def reading_of(path: str | Path) -> tuple[int, int]:
    """``(tokens the checkpoint at ``path`` reads a text at, its position table)`` from its
    config.json (:func:`uqcore.checkpoint.read_length`)."""
    doc = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    positions = int(doc["model"]["max_len"])
    return read_length(positions, doc.get("training")), positions


def provenance(meta: dict, subsets: dict, path: str | Path, task: str, what: str) -> str:
    """Why a file stored for ``task``'s bundled examples in checkpoint folder ``path`` is not
    trusted for where it came from (``subsets``: the sha256 it records of each subset,
    ``meta["weights"]``: of the weights, ``meta["read_len"]``: the tokens each text was read
    at; a file without it was read at the position table, as every file before issue 36), or ""
    when it is. ``what`` names the file in the message."""
    if subsets != subset_hashes(task):
        return f"the bundled examples changed since {what} was written"
    try:
        same_weights = meta.get("weights") == weights_hash(path)
        read, positions = reading_of(path)
    except Exception:  # an unreadable weights file is not the same weights
        return f"{what} comes from other weights"
    if not same_weights:
        return f"{what} comes from other weights"
    recorded = meta.get("read_len", str(positions))
    if recorded != str(read):
        return f"{what} read each text at {recorded} tokens, not the {read} it was trained at"
    return ""


def read(path: str | Path, task: str, fs: ForwardSettings) -> tuple[StoredSamples | None, str]:
    """The stored samples of the checkpoint folder ``path`` (task ``task``, own settings
    ``fs``), or None and why they are not trusted (one line; also "" when read). The reason
    is shown to the app's visitors, so it names no command (:data:`REDO` writes the file)."""
    file = Path(path) / FILE
    if not file.is_file():
        return None, "no stored results for this checkpoint"
    try:
        with safe_open(str(file), framework="np") as fh:
            meta = fh.metadata() or {}
            logits = fh.get_tensor("logits")
            examples = fh.get_tensor("examples") if "examples" in fh.keys() else None
        settings = json.loads(meta["settings"])
        subsets = json.loads(meta["subsets"])
        T, seed = int(meta["T"]), int(meta["seed"])
    except Exception:  # any unreadable file is simply not trusted
        return None, "the stored results file does not parse"
    if meta.get("format") not in READABLE_FORMATS or meta.get("task") != task:
        return None, "the stored results are of another format or task"
    stale = provenance(meta, subsets, path, task, "the stored results")
    if stale:
        return None, stale
    texts = [r[0] for r in bundled_rows(task)]
    if logits.ndim != 3 or logits.shape[0] != len(texts) or logits.shape[1] not in (1, T):
        return None, "the stored results have the wrong shape"
    if settings != settings_record(fs):
        return None, "the stored results are for other settings"
    rows = {text: i for i, text in enumerate(texts)}
    if meta.get("format") == "1":
        return StoredSamples(logits, T, seed, settings, rows), ""
    presets = [r[0] for r in preset_rows(task)]
    try:
        examples_t = int(meta["examples_T"])
    except (KeyError, ValueError):
        return None, "the stored results file does not parse"
    if meta.get("examples") != examples_hash(task):
        return None, "the example sentences changed since the results were stored"
    if (
        examples is None
        or examples.ndim != 3
        or examples.shape[0] != len(presets)
        or examples.shape[1] not in (1, examples_t)
        or examples.shape[2] != logits.shape[2]
    ):
        return None, "the stored results have the wrong shape"
    example_rows = {text: i for i, text in enumerate(presets)}
    return StoredSamples(logits, T, seed, settings, rows, examples, examples_t, example_rows), ""
