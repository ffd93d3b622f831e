"""Bench of the decoder checkpoints: ``python -m tools.bench_decoder [--ckpt NAME] [--T 50]``.

Each measurement runs in a fresh process (so its peak RSS is its own) and prints one JSON line:

- the explorer's computation (:func:`uqlab.workbench.compute.explore`: every layer's maps captured,
as the page asks) on a shipped SmolLM2 checkpoint at ``T`` samples, for a short sentence and a
  300-word review (cut at the checkpoint's ``max_len`` tokens, as the page cuts it): load time,
  the first call and a second call of the same text, peak RSS;
- the sampler on a 300-token input at ``T`` samples, H-STO in the last layer, every layer's
  maps kept for the first two samples (what the explorer keeps of a long text), for SmolLM2-135M's
  shape and for Qwen2-0.5B's (24 layers, width 896, 14 heads with 2 key / value heads,
  feed-forward 4864, a 151,936-token vocabulary), random weights (no 0.5B base is installed;
  memory and time do not depend on the values): both calls' seconds and peak RSS.

The device is the CPU unless ``--device cuda``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REVIEW = " ".join(
    (
        "I went in expecting very little from this film and came out genuinely moved, although "
        "the middle hour drags and the script leans on clichés that a sharper editor would cut."
    ).split()
    * 12
)[:1700]  # about 300 words
SENTENCE = "Bill and Mary washed himself."

EXPLORE = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from uqcore.registry import load
from uqcore.settings import SamplingSettings
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.workbench.compute import explore
ck = load(sys.argv[1], SHIPPED_CHECKPOINT_DIR)
loaded = time.perf_counter() - t0
out = {"checkpoint": sys.argv[1], "load_s": round(loaded, 2)}
text, T = sys.argv[2], int(sys.argv[3])
for run in ("first", "again"):
    t = time.perf_counter()
    res = explore(ck, text, T, 0, SamplingSettings())
    out[run + "_s"] = round(time.perf_counter() - t, 2)
out["tokens"] = len(res.tokens)
out["captured"] = res.captured
hwm = next(int(x.split()[1]) for x in Path("/proc/self/status").read_text().splitlines()
           if x.startswith("VmHWM:"))
out["peak_rss_mb"] = round(hwm / 1024)
print(json.dumps(out))
"""

SHAPES = {  # random weights: memory and time do not depend on the values
    "smollm2-135m": {
        "backbone": "llama",
        "vocab_size": 49152,
        "n_layers": 30,
        "n_heads": 9,
        "d_model": 576,
        "d_ff": 1536,
        "backbone_params": {"n_kv_heads": 3, "rope_theta": 100000.0},
    },
    "qwen2-0.5b": {
        "backbone": "qwen2",
        "vocab_size": 151936,
        "n_layers": 24,
        "n_heads": 14,
        "d_model": 896,
        "d_ff": 4864,
        "backbone_params": {"n_kv_heads": 2, "rope_theta": 1000000.0, "norm_eps": 1e-6},
    },
}

SHAPE = """
import json, sys, time
from pathlib import Path
import torch
from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.inference.sampling import Capture, sample
shape, T, device = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
last = shape["n_layers"] - 1
cfg = ModelConfig.from_dict({**shape, "family": "hsto", "max_len": 512,
    "stochastic_layers": [last], "attention": {"n_centroids": 4},
    "inference": {"tau1": 1.0, "tau2": 8.0}})
torch.manual_seed(0)
model = build_model(cfg).to(device)
params = sum(p.numel() for p in model.parameters())
ids = torch.randint(3, shape["vocab_size"], (1, 300), device=device)
mask = torch.ones_like(ids, dtype=torch.bool)
out = {"parameters_m": round(params / 1e6, 1), "tokens": 300, "T": T, "device": device}
# as the explorer asks: every layer's maps for the first samples, probabilities for all T
capture = Capture(layers=tuple(range(cfg.n_layers)), max_samples=2)
for run in ("first", "again"):
    t = time.perf_counter()
    r = sample(model, ids, mask, T, seed=0, capture=capture)
    if device == "cuda":
        torch.cuda.synchronize()
    out[run + "_s"] = round(time.perf_counter() - t, 2)
hwm = next(int(x.split()[1]) for x in Path("/proc/self/status").read_text().splitlines()
           if x.startswith("VmHWM:"))
out["peak_rss_mb"] = round(hwm / 1024)
if device == "cuda":
    out["peak_gpu_mb"] = round(torch.cuda.max_memory_allocated() / 2**20)
print(json.dumps(out))
"""


def _fresh(code: str, *args: str) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.bench_decoder", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--ckpt", default="cr-smollm2-hsto", help="a shipped decoder checkpoint")
    p.add_argument("--T", type=int, default=50)
    p.add_argument("--device", default="cpu")
    p.add_argument("--skip-shapes", action="store_true", help="no random-weight measurements")
    args = p.parse_args(argv)
    for name, text in (("sentence", SENTENCE), ("300-word review", REVIEW)):
        out = _fresh(EXPLORE, args.ckpt, text, str(args.T))
        print(json.dumps({"input": name, "T": args.T, **out}))
    if not args.skip_shapes:
        for name, shape in SHAPES.items():
            out = _fresh(SHAPE, json.dumps(shape), str(args.T), args.device)
            print(json.dumps({"model": f"{name} shape (random weights)", **out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
