"""Samples of a checkpoint for every row of a large file, in shards, resumable:
``python -m uqlab.predict --ckpt NAME ([--task-file T.json] [--split test] | --file F
--text-column C) --out DIR [--samples 10] [--seed 0] [--shard-rows 2000]``.

Without ``--file`` the rows are a split of the checkpoint's own task (``--task-file`` for
the same task when its description's files moved; a file describing another task is refused).
Texts are read at the checkpoint's training length (:attr:`uqcore.checkpoint.Checkpoint.read_len`).

``DIR`` gets ``part-NNNNN.safetensors`` files (``probs [T, n, C]`` float16 of the rows
``[start, end)``, their range, the checkpoint, T and seed in its metadata) and, at the end,
``manifest.json`` (the request, the rows' sha256, the parts). Rerunning the same command skips
every part already written for the same request, so a run cut short resumes where it stopped;
a part of another request is never reused. Under ``torchrun --nproc_per_node=N`` part ``i`` is
written by rank ``i mod N`` (gloo on CPUs, nccl on GPUs); the library's counter noise makes a
row's samples the same whichever process or batch computes it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from tqdm import tqdm

from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import predict
from uqcore.runtime import tune_cpu
from uqcore.text.vocab import write_atomic
from uqlab.catalog.labelled import read_table
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import checkpoint_task
from uqlab.data import load_task, resolve_data_dir
from uqlab.evaluation.shards import join, leave

MANIFEST = "manifest.json"
SPLITS = ("train", "dev", "test", "ood")


def texts_of(args, ck) -> tuple[list[str], str]:
    """The texts to sample and where they come from: ``--file``'s column, else ``--split`` of
    the checkpoint's task (:func:`uqlab.catalog.task_file.checkpoint_task`)."""
    if args.file:
        table = read_table(Path(args.file))
        if args.text_column not in table.column_names:
            raise UQError(
                f"{Path(args.file).name} has no column {args.text_column!r}; its "
                f"columns: {', '.join(table.column_names[:12])}."
            )
        texts = [
            str(t) if t is not None else "" for t in table.column(args.text_column).to_pylist()
        ]
        return texts, f"{Path(args.file).name}:{args.text_column}"
    task, note = checkpoint_task(ck.name, ck.training, args.task_file)
    if note:
        print(f"note: {note}", file=sys.stderr)
    seed = int((ck.training or {}).get("seed", 0))  # the splits the checkpoint was trained with
    data = load_task(task, resolve_data_dir(args.data_dir), split_seed=seed)
    return list(getattr(data, args.split).texts), f"{task}:{args.split}"


def part_name(i: int) -> str:
    return f"part-{i:05d}.safetensors"


def done(path: Path, request: dict) -> bool:
    """Whether ``path`` is a complete part of this very request."""
    if not path.is_file():
        return False
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
    except Exception:  # a part cut short when the run stopped: written again
        return False
    return meta.get("request") == json.dumps(request, sort_keys=True)


def run(args) -> Path:
    shards, device = join(args.device)
    out = Path(args.out)
    ck = load_checkpoint(
        Path(args.root) / args.ckpt if not Path(args.ckpt).is_dir() else args.ckpt,
        shared_weights=True,
    )
    ck.model.to(device)
    texts, source = texts_of(args, ck)
    digest = hashlib.sha256(json.dumps(texts).encode()).hexdigest()
    request = {
        "checkpoint": ck.name,
        "source": source,
        "rows": len(texts),
        "texts_sha256": digest,
        "T": args.samples,
        "seed": args.seed,
        "shard_rows": args.shard_rows,
    }
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        (i, lo, min(lo + args.shard_rows, len(texts)))
        for i, lo in enumerate(range(0, len(texts), args.shard_rows))
    ]
    mine = [p for p in parts if p[0] % shards.world == shards.rank]
    todo = [p for p in mine if not done(out / part_name(p[0]), request)]
    if shards.main and len(todo) < len(mine):
        kept = sum(hi - lo for i, lo, hi in mine if (i, lo, hi) not in todo)
        print(
            f"{ck.name}: reusing {len(mine) - len(todo)} of {len(mine)} parts already written "
            f"for this request ({kept:,} rows); sampling {len(todo)}.",
            file=sys.stderr,
        )
    bar = tqdm(
        total=sum(hi - lo for _, lo, hi in todo),
        unit="text",
        desc=ck.name,
        disable=args.quiet or not shards.main,
    )
    for i, lo, hi in todo:
        probs = predict(
            ck.model, ck.vocab, texts[lo:hi], ck.read_len, args.samples, args.seed, bar=bar
        )  # [T, n, C]
        meta = {"request": json.dumps(request, sort_keys=True), "start": str(lo), "end": str(hi)}
        tmp = out / f".{part_name(i)}.tmp"
        save_file({"probs": probs.to(torch.float16).contiguous()}, str(tmp), metadata=meta)
        os.replace(tmp, out / part_name(i))
    bar.close()
    shards.barrier()
    if shards.main:
        doc = {
            **request,
            "parts": [part_name(i) for i, _, _ in parts],
            "format": "probs [T, rows, classes] float16 per part; rows [start, end)",
        }
        write_atomic(out / MANIFEST, json.dumps(doc, indent=1).encode())
    return out


def read(out: str | os.PathLike) -> torch.Tensor:
    """Every part of a finished ``out`` folder, in row order: ``probs [T, N, C]`` (float32)."""
    out = Path(out)
    doc = json.loads((out / MANIFEST).read_text())
    return torch.cat([_part(out / name) for name in doc["parts"]], dim=1).float()


def _part(path: Path) -> torch.Tensor:
    with safe_open(str(path), framework="pt") as f:
        return f.get_tensor("probs")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.predict", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--ckpt", required=True, help="checkpoint name or directory")
    p.add_argument("--root", default=str(checkpoint_dir()))
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--task-file", help="the checkpoint's task description, if its files moved; with --split"
    )
    which.add_argument("--file", help="a CSV, TSV, JSONL or Parquet file; with --text-column")
    p.add_argument("--split", default="test", choices=SPLITS, help="a split of the task")
    p.add_argument("--text-column", default="text")
    p.add_argument("--data-dir", help="the data folder ${data} stands for (default $UQ_DATA_DIR)")
    p.add_argument("--out", required=True, help="the folder of parts (resumed when it exists)")
    p.add_argument("--samples", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shard-rows", type=int, default=2000)
    p.add_argument("--device", default="cpu")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.shard_rows < 1 or args.samples < 1:
        p.error("--shard-rows and --samples must be at least 1")
    tune_cpu(max(1, 2 // int(os.environ.get("WORLD_SIZE", "1"))))
    started = time.perf_counter()
    try:
        out = run(args)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        leave()
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"{out}: done in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
