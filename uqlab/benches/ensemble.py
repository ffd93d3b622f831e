"""How a deep ensemble's members run: ``python -m uqlab.benches.ensemble [--ckpt NAME,...]``.

Without gradients :class:`uqcore.build.DeepEnsemble` runs its members either together in one
``vmap`` over their stacked weights (:meth:`~uqcore.build.DeepEnsemble.together`) or one after
another (:meth:`~uqcore.build.DeepEnsemble.one_by_one`), as
:meth:`~uqcore.build.DeepEnsemble.runs_together` decides. For each shipped ensemble and input
length this times both on the same random token ids (8 rows, best of ``--repeats``, the two
interleaved so that a change in the machine's load hits both alike) and prints their ratio, the
largest difference of their logits and the path the model takes. It ends with one JSON line.
All figures are measured in this run; nothing is hard-coded.
"""

from __future__ import annotations

import argparse
import json

import torch

from uqcore.registry import load
from uqcore.runtime import tune_cpu
from uqcore.settings import resolve
from uqlab.benches.sampler import _timed
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

DEFAULT = ",".join(
    ("cola-ensemble", "imdb-ensemble", "cola-minilm-ensemble", "imdb-minilm-ensemble")
    + ("cr-smollm2-ensemble",)  # members sharing blocks 0-15
)
LENGTHS = (16, 64, 128, 512)
ROWS = 8


def measure(name: str, repeats: int) -> list[dict]:
    """One row per length (up to the checkpoint's ``max_len``): seconds of each path, their
    ratio, max |Δ logit| and the path ``forward`` takes."""
    model = load(name, SHIPPED_CHECKPOINT_DIR).model.eval()
    s = resolve(model.cfg)
    gen = torch.Generator().manual_seed(0)
    rows = []
    for length in [n for n in LENGTHS if n <= model.cfg.max_len]:
        ids = torch.randint(5, model.cfg.vocab_size, (ROWS, length), generator=gen)  # [8, L]
        mask = torch.ones(ROWS, length, dtype=torch.bool)
        with torch.no_grad():
            together = model.together(ids, mask, s).logits  # [M, 8, C]
            alone = model.one_by_one(ids, mask, s).logits
            t_together, t_alone = [], []
            for _ in range(repeats):  # interleaved
                t_together.append(_timed(lambda a=ids, b=mask: model.together(a, b, s)))
                t_alone.append(_timed(lambda a=ids, b=mask: model.one_by_one(a, b, s)))
        rows.append(
            {
                "checkpoint": name,
                "tokens": length,
                "together_s": round(min(t_together), 4),
                "one_by_one_s": round(min(t_alone), 4),
                "ratio": round(min(t_together) / min(t_alone), 2),
                "max_abs_logit_diff": float((together - alone).abs().max()),
                "runs_together": model.runs_together(),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", default=DEFAULT, help=f"shipped ensembles (default {DEFAULT})")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = p.parse_args(argv)
    print(f"runtime: {tune_cpu(args.threads)}; {ROWS} rows of random token ids")
    print(
        f"{'checkpoint':<22} {'tokens':>6} {'vmap s':>8} {'loop s':>8} {'vmap/loop':>9} "
        f"{'max|Δlogit|':>11}  forward takes"
    )
    rows = []
    for name in args.ckpt.split(","):
        for r in measure(name, args.repeats):
            rows.append(r)
            print(
                f"{r['checkpoint']:<22} {r['tokens']:>6} {r['together_s']:>8.3f} "
                f"{r['one_by_one_s']:>8.3f} {r['ratio']:>9.2f} {r['max_abs_logit_diff']:>11.1e}"
                f"  {'vmap' if r['runs_together'] else 'loop'}"
            )
    print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
