"""A checkpoint's dev metric at the reading lengths you name, as its trainer measures it:
``python -m uqlab.training.dev_accuracy --ckpt NAME [--read 256,512] [--samples 1]``.

The trainer picks epochs by the metric of the mean prediction over ``dev_samples`` draws on its
dev split (:func:`uqlab.training.loop.evaluate`); this reads the same split (the task's, split
with the checkpoint's seed) at each length given, so a checkpoint trained at one length can be
set beside itself read at another, and beside a run continued at a longer one (``init_from``,
docs/training.md: imdb-minilm-hsto). The whole dev split is read (a run trained with ``--limit``
picked its epoch on the first N). Dev data only: nothing here reads a test split.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import ConfigError, UQError
from uqlab.catalog.task_file import checkpoint_task
from uqlab.data import load_task, resolve_data_dir
from uqlab.training.batches import encode_split
from uqlab.training.continued import source_folder
from uqlab.training.loop import evaluate

MAX_READ = 8192  # tokens: far past any shipped base's positions


def dev_metric(
    name: str, lengths: list[int] | None = None, samples: int = 1, data_dir: str | None = None
) -> tuple[str, int, list[tuple[int, float, float]]]:
    """``(metric name, texts, [(length, value, seconds)])`` of checkpoint ``name`` (a name under
    the checkpoint dir or a folder) on its task's dev split, read at each of ``lengths``
    (default: the length it reads, ``Checkpoint.read_len``; each capped by its position table)."""
    folder = source_folder(name)
    if not folder.is_dir():
        raise ConfigError(
            f"No checkpoint {name!r}: give a name under assets/checkpoints/ or a folder."
        )
    ck = load_checkpoint(folder, shared_weights=True)  # a sibling's identical weights: followed
    lengths = lengths or [ck.read_len]
    seed = ck.training.get("seed", 0)
    task, _ = checkpoint_task(ck.name, ck.training)  # a task file's task: its kept description
    data = load_task(task, resolve_data_dir(data_dir), split_seed=seed)
    out = []
    for length in lengths:
        started = time.time()
        dev = encode_split(data.dev, ck.vocab, min(length, ck.config.max_len))
        value = evaluate(ck.model, dev, data.metric, samples, seed, torch.device("cpu"))
        out.append((length, value, time.time() - started))
    return data.metric, len(data.dev), out


def _lengths(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--read takes lengths like 256,512, got {text!r}"
        ) from None
    if not values or not all(2 <= v <= MAX_READ for v in values):
        raise argparse.ArgumentTypeError(
            f"each length must be 2 to {MAX_READ} tokens, got {text!r}"
        )
    return values


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.training.dev_accuracy", description=__doc__.splitlines()[0]
    )
    p.add_argument("--ckpt", required=True, help="checkpoint name or folder")
    p.add_argument("--read", type=_lengths, help="reading lengths, e.g. 256,512 (default: its own)")
    p.add_argument("--samples", type=int, default=1, help="T draws averaged (default 1)")
    p.add_argument("--data-dir", help="folder laid out like ../shared/data (default $UQ_DATA_DIR)")
    args = p.parse_args(argv)
    if args.samples < 1:
        p.error(f"--samples must be at least 1, got {args.samples}")
    try:
        metric, texts, rows = dev_metric(args.ckpt, args.read, args.samples, args.data_dir)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for length, value, seconds in rows:
        print(
            f"{args.ckpt}: dev {metric} {value:.4f} read at {length} tokens, T = {args.samples}, "
            f"{texts} texts ({seconds:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
