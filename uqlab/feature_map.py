"""A map of a dataset: each example's last-layer [CLS] features projected to 2D, written once per
checkpoint for its bundled examples and read by the Error analysis page.

Features: :func:`uqcore.inference.batch_predict.features_ids`, one pass without noise or dropout (a
deep ensemble: the mean over its members), the same features as the distance baseline of
:mod:`uqlab.evaluate`. Projection: PCA (scikit-learn) fitted on the examples shown, centred,
two components; the file also keeps the share of variance each explains. UMAP is not used: its
package pulls numba and llvmlite (a JIT compiler) into the app's install for a picture PCA
already gives deterministically.

File ``map.safetensors`` beside ``samples.safetensors``: ``xy [N, 2]`` stored as float16
(float32 past its range; row ``i`` = :func:`uqlab.evaluation.stored.bundled_rows` ``i``; NaN: a
text it cannot read) and
metadata (format, task, method, explained variance, the sha256 of the subsets and of the weights).
:func:`read` trusts nothing else and says why, as :mod:`uqlab.evaluation.stored` does, and gives
float32. Float16 (format 2; format 1 was float32): a scatter's coordinates need 3 significant
digits (1/2048 of a coordinate is finer than a pixel of the page's plot), and the 47 shipped maps
took 256 KiB less of the assets' 80 MiB on disk (81,740 -> 81,484 KiB).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.numpy import save
from sklearn.decomposition import PCA

from uqcore.checkpoint import Checkpoint, load_checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import feature_batches
from uqcore.registry import list_checkpoints
from uqcore.runtime import tune_cpu
from uqcore.text.vocab import write_atomic
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import register_from_training
from uqlab.catalog.tasks import TASKS
from uqlab.evaluation.journal import Journal, journaled_features
from uqlab.evaluation.stored import bundled_rows, provenance, subset_hashes, weights_hash

FILE = "map.safetensors"
FORMAT = "2"  # 2: xy stored as float16 (1: float32)
METHOD = "pca"


def features(
    ck: Checkpoint, texts: list[str], bar=None, journal: Journal | None = None
) -> np.ndarray:
    """``[N, D]`` float32 last-layer [CLS] features of ``texts`` (NaN rows: unreadable), in
    :func:`uqcore.inference.batch_predict.feature_batches`'s length-sorted batches; ``bar(share)``
    is told the share of the readable texts done after each batch. ``journal``: finished batches
    are read from and written to it (:mod:`uqlab.evaluation.journal`), so that a stopped
    evaluation does not read the examples again."""
    out = np.full((len(texts), ck.config.d_model), np.nan, dtype=np.float32)
    readable, encoded = [], []
    for i, text in enumerate(texts):
        try:
            encoded.append(ck.vocab.encode(text, ck.read_len).ids)
            readable.append(i)
        except UQError:  # no known word: stays NaN, the page leaves it out
            continue
    plan = feature_batches(ck.model, encoded)
    got = journaled_features(
        ck.model, encoded, plan, range(len(plan)), journal, _Share(bar, len(encoded))
    )
    out[readable] = got.numpy()
    return out


class _Share:
    """A tqdm-like ``update(n)`` that tells ``bar(share)`` the share of ``total`` rows done."""

    def __init__(self, bar, total: int):
        self.bar, self.total, self.done = bar, max(1, total), 0

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar(min(1.0, self.done / self.total))


def project(feats: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """PCA to two components of the finite rows of ``feats [N, D]`` -> ``(xy [N, 2],
    explained variance ratios)``; NaN rows stay NaN. Fewer than 3 rows, or rows that are all
    the same (nothing to explain: scikit-learn's ratios would be 0/0 = NaN): zeros."""
    xy = np.full((feats.shape[0], 2), np.nan, dtype=np.float32)
    ok = np.isfinite(feats).all(1)
    rows = feats[ok].astype(np.float64)  # [n, D]
    if ok.sum() < 3 or not (rows != rows[:1]).any():
        xy[ok] = 0.0
        return xy, [0.0, 0.0]
    pca = PCA(n_components=2, svd_solver="full")
    xy[ok] = pca.fit_transform(rows).astype(np.float32)
    sign = np.sign(xy[ok][np.abs(xy[ok]).argmax(0), [0, 1]])  # a fixed orientation
    xy[ok] *= np.where(sign == 0, 1, sign)
    return xy, [float(v) for v in pca.explained_variance_ratio_]


def write(ck: Checkpoint, sink=write_atomic, bar=None, journal: Journal | None = None) -> Path:
    """Compute and write the map of the checkpoint's bundled examples; its path. ``sink(path,
    bytes)`` writes the file (as in :func:`uqlab.evaluation.stored.write`); ``bar(fraction)``
    is told the share of the texts read so far and ``journal`` keeps the finished batches (as
    :func:`features` takes them)."""
    task = ck.training["task"]
    texts = [r[0] for r in bundled_rows(task)]
    with torch.inference_mode():
        xy, explained = project(features(ck, texts, bar, journal))
    meta = {
        "format": FORMAT,
        "task": task,
        "method": METHOD,
        "explained": json.dumps(explained),
        "subsets": json.dumps(subset_hashes(task)),
        "weights": weights_hash(ck.path),
        "read_len": str(ck.read_len),
        "command": f"python -m uqlab.feature_map --ckpt {ck.name}",
    }
    path = Path(ck.path) / FILE
    sink(path, _encoded(xy, meta))
    return path


F16_MAX = float(np.finfo(np.float16).max)


def _encoded(xy: np.ndarray, meta: dict[str, str]) -> bytes:
    """The file's bytes: ``xy`` in float16, or float32 where a coordinate is past float16's range
    (a visitor's model with huge features would otherwise plot as infinities)."""
    finite = xy[np.isfinite(xy)]
    wide = finite.size and float(np.abs(finite).max()) > F16_MAX
    stored = xy.astype(np.float32 if wide else np.float16)
    return save({"xy": np.ascontiguousarray(stored)}, metadata=meta)


def read(path: str | Path, task: str) -> tuple[tuple[np.ndarray, list[float]] | None, str]:
    """``((xy [N, 2], explained), "")`` of the checkpoint folder ``path``, or ``(None, why)``:
    one line, shown to the app's visitors, so it names no command (``python -m
    uqlab.feature_map --ckpt NAME`` writes the file)."""
    file = Path(path) / FILE
    if not file.is_file():
        return None, "no stored map for this checkpoint"
    try:
        with safe_open(str(file), framework="np") as fh:
            meta = fh.metadata() or {}
            xy = fh.get_tensor("xy")
        explained = [float(v) for v in json.loads(meta["explained"])]
        subsets = json.loads(meta["subsets"])
    except Exception:  # any unreadable file is simply not trusted
        return None, "the stored map does not parse"
    if meta.get("format") != FORMAT or meta.get("task") != task or meta.get("method") != METHOD:
        return None, "the stored map is of another format, task or method"
    stale = provenance(meta, subsets, path, task, "the stored map")
    if stale:
        return None, stale
    if xy.shape != (len(bundled_rows(task)), 2) or xy.dtype not in (np.float16, np.float32):
        return None, "the stored map has the wrong shape"
    return (xy.astype(np.float32), explained), ""


def recast(path: str | Path) -> bool:
    """Rewrite the format-1 (float32) map of the checkpoint folder ``path`` as format 2, the same
    coordinates cast to float16 (what :func:`write` now stores of the same features), without
    computing anything; False when there is no format-1 map. Metadata other than the format
    is kept as written."""
    file = Path(path) / FILE
    if not file.is_file():
        return False
    with safe_open(str(file), framework="np") as fh:
        meta = dict(fh.metadata() or {})
        xy = fh.get_tensor("xy")
    if meta.get("format") != "1" or xy.dtype != np.float32:
        return False
    meta["format"] = FORMAT
    write_atomic(file, _encoded(xy, meta))
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Write each checkpoint's map of its bundled examples (map.safetensors)."
    )
    p.add_argument("--ckpt", nargs="*", default=[], help="checkpoint names")
    p.add_argument("--all", action="store_true", help="every checkpoint of the folder")
    p.add_argument("--root", default=str(checkpoint_dir()))
    p.add_argument(
        "--recast",
        action="store_true",
        help="only rewrite format-1 (float32) maps as format 2 (float16), computing nothing",
    )
    args = p.parse_args(argv)
    tune_cpu(2)
    infos = [i for i in list_checkpoints(args.root) if not i.error]
    names = [i.name for i in infos] if args.all else args.ckpt
    if not names:
        p.error("name checkpoints with --ckpt or pass --all")
    try:
        for name in names:
            if args.recast:
                done = recast(Path(args.root) / name)
                print(f"{name}: {'recast as float16' if done else 'no format-1 map'}", flush=True)
                continue
            ck = load_checkpoint(Path(args.root) / name, shared_weights=True)
            if register_from_training(ck.training) not in TASKS:
                print(f"{name}: no task with bundled examples, skipped", flush=True)
                continue
            print(f"{name}: map -> {write(ck)}", flush=True)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
