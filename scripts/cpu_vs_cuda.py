"""The same checkpoints, texts, T and seed on the CPU and on CUDA: the largest difference of
the sampled probabilities and how often the samples' argmax agree (docs/gpu.md).

``python scripts/cpu_vs_cuda.py [--root assets/checkpoints] NAME...`` on a machine with CUDA.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uqcore.inference.batch_predict import predict_ids
from uqcore.registry import load

TEXTS = [
    "the movie was great fun",
    "a dull, lifeless film that never ends .",
    "john seems to be happy .",
    "the more you eat the fatter gets you .",
    "I would not recommend this to anyone , although the actors try hard .",
] * 4


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="+")
    p.add_argument("--root", default="assets/checkpoints")
    args = p.parse_args()
    for name in args.names:
        ck = load(name, args.root)
        enc = [ck.vocab.encode(t, 64, allow_all_unknown=True).ids for t in TEXTS]
        cpu = predict_ids(ck.model, enc, 50, 7)  # [T, N, C]
        gpu_model = copy.deepcopy(ck.model).cuda()
        started = time.perf_counter()
        gpu = predict_ids(gpu_model, enc, 50, 7)
        torch.cuda.synchronize()
        diff = (cpu - gpu).abs().max().item()
        agree = (cpu.argmax(-1) == gpu.argmax(-1)).float().mean().item()
        print(
            f"{name}: T=50 x {len(TEXTS)} texts, max |dp| {diff:.2e}, argmax agreement "
            f"{agree:.4f}, cuda {time.perf_counter() - started:.3f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
