"""What 8-bit embedding tables would cost a checkpoint's predictions:
``python -m tools.bench_int8_embeddings [--ckpt NAME ...] [--texts 100] [--T 10]``.

The word-level checkpoints hold most of the assets' bytes in their embedding tables (2.56 MB of
each 2.89 MB weights file, already float16). Storing a table as int8 with one float16 scale per
row (absmax: ``scale = max |w_row| / 127``, ``q = round(w / scale)``) would halve it. This bench
measures, before any such format exists, how far that moves what the app shows: the first
``--texts`` texts of the checkpoint's in-domain evaluation subset are sampled T times (seed 0, the
checkpoint's own settings) with the stored weights and again with every ``*embed.weight`` table
rounded that way; it prints the largest change of any class probability and how many argmaxes
flip. The stored samples are held to 1e-3 in p (issue 48), so a table that moves p by more
cannot be stored so. Figures only; nothing passes or fails.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from uqcore.exceptions import UQError

DEFAULT = ("cola-trans", "imdb-hsto")  # the smallest and the largest word-level family


def int8_rows(w: torch.Tensor) -> torch.Tensor:
    """``w [V, D]`` as int8 with one float16 absmax scale per row, read back as float32: what an
    8-bit table with per-row scales stores of it. Each entry moves by at most half a step."""
    scale = (w.abs().amax(1, keepdim=True) / 127).half().float()  # [V, 1] as stored
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # a zero row (PAD) stays 0
    return torch.round(w / scale).clamp_(-127, 127) * scale  # [V, D]


def probe(name: str, n_texts: int, T: int) -> dict:
    """``{"max_abs_dp", "flips", "samples", "tables"}`` of checkpoint ``name`` (module doc)."""
    from uqcore.settings import SamplingSettings
    from uqlab.catalog.tasks import TASKS
    from uqlab.data import load_eval_subset
    from uqlab.workbench.compute import many_probs
    from uqlab.workbench.notebook import checkpoint

    ck, info = checkpoint(name)
    subset = TASKS[info.task].eval_subsets.get("id") if info.task in TASKS else None
    if subset is None:
        raise UQError(f"{name}: its task has no bundled in-domain subset to sample")
    texts = tuple(load_eval_subset(subset).texts[:n_texts])

    def probs() -> torch.Tensor:  # [N, T, C]
        got = many_probs(ck, texts, T, 0, SamplingSettings())
        return torch.stack([torch.as_tensor(g.probs) for g in got if not isinstance(g, str)])

    before = probs()
    tables = [p for k, p in ck.model.named_parameters() if k.endswith("embed.weight")]
    with torch.no_grad():
        for p in tables:
            p.copy_(int8_rows(p))
    after = probs()
    return {
        "max_abs_dp": round(float((after - before).abs().max()), 5),
        "flips": int((after.argmax(-1) != before.argmax(-1)).sum()),
        "samples": int(before.shape[0] * before.shape[1]),
        "tables": len(tables),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ckpt", nargs="*", default=list(DEFAULT), help="word-level checkpoints")
    p.add_argument("--texts", type=int, default=100, help="in-domain test texts sampled")
    p.add_argument("--T", type=int, default=10, help="samples a text")
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    out = {}
    for name in args.ckpt:
        try:
            out[name] = probe(name, args.texts, args.T)
        except UQError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        r = out[name]
        print(
            f"{name}: {r['tables']} table(s) as int8 with a scale a row: max |Δp| "
            f"{r['max_abs_dp']:.5f} over {r['samples']} samples, {r['flips']} argmax flips",
            flush=True,
        )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
