"""Memory of H-STO's k-means start: ``python -m uqlab.benches.centroids [--ckpt NAME] [--texts N]``.

Training an H-STO checkpoint on a pretrained base starts its centroids from k-means of the keys
the base computes for the first ``texts`` training texts
(:func:`uqlab.training.centroids.init_centroids_from_keys`). This loads a shipped H-STO
checkpoint (default ``imdb-smollm2-hsto``: SmolLM2 read at 256 tokens), makes ``texts`` rows of
token ids at its reading length (seeded, random ids: the memory and time do not depend on the
words) and prints the process's peak resident memory before and after that start, its seconds,
and one JSON line. Run it alone: the figure is this process's peak, and other work on the
machine changes the seconds.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import torch

from uqcore.checkpoint import load_checkpoint
from uqlab.catalog.paths import checkpoint_dir
from uqlab.training.centroids import init_centroids_from_keys


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.benches.centroids", description=__doc__)
    p.add_argument("--ckpt", default="imdb-smollm2-hsto", help="a shipped H-STO checkpoint")
    p.add_argument("--texts", type=int, default=256, help="texts whose keys k-means reads")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    ck = load_checkpoint(checkpoint_dir() / args.ckpt)
    length = ck.read_len
    gen = torch.Generator().manual_seed(0)
    high = min(ck.config.vocab_size, 40_000)
    rows = [
        (1, *torch.randint(10, high, (length - 1,), generator=gen).tolist())
        for _ in range(args.texts)
    ]  # [texts] rows of ``length`` ids
    before = _peak_mb()
    started = time.perf_counter()
    layers = init_centroids_from_keys(ck.model, rows, seed=0, texts=args.texts)
    seconds = time.perf_counter() - started
    peak = _peak_mb()
    print(
        f"{args.ckpt}: k-means start of layer(s) {layers} from {args.texts} texts of {length} "
        f"tokens: peak RSS {before:.0f} MB before, {peak:.0f} MB after (+{peak - before:.0f} "
        f"MB), {seconds:.0f} s with {args.threads} thread(s)"
    )
    out = {"ckpt": args.ckpt, "texts": args.texts, "tokens": length, "layers": layers}
    out |= {"peak_before_mb": round(before), "peak_after_mb": round(peak)}
    print(json.dumps(out | {"seconds": round(seconds, 1), "threads": args.threads}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
