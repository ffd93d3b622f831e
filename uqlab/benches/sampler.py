"""Benchmark of the batched sampler: ``python -m uqlab.benches.sampler [--quick] [--json-only]``.

Prints, for every family, the time of T single-sample calls against one batched T-sample call
(T=100, a 20-token input, an 8-layer d=128 model), the FLOP/s of the batched call against a
large fp32 matmul measured in the same run, and the peak resident memory of a 500-token input at
T=100 that captures one layer's attention maps (measured in a fresh process per family). It ends
with one JSON line. All figures are ratios or measurements from this run; nothing is hard-coded.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig, family_fields
from uqcore.families import FAMILIES, get_family
from uqcore.inference.sampling import Capture, sample
from uqcore.kernels.common import softmax_last
from uqcore.nets.linear import _ONEDNN, matmul_linear_only
from uqcore.nets.noise import SampleNoise
from uqcore.nets.stream_noise import StreamNoise
from uqcore.runtime import pick_device, tune_cpu
from uqlab.benches.report import render_markdown, write_section

BENCH_T = 100


def bench_config(family: str, max_len: int = 512) -> ModelConfig:
    """The benchmark model: 8 layers, d=128, 8 heads, FFN 512, 10k words; 4 centroids, tau2 = 8
    and 2 EM iterations for the families that have them."""
    attention, inference = family_fields(
        family, {"n_centroids": 4, "tau2": 8.0, "em_iterations": 2}
    )
    return ModelConfig(
        family=family,
        vocab_size=10_000,
        max_len=max_len,
        n_layers=8,
        n_heads=8,
        d_model=128,
        d_ff=512,
        dropout=0.1,
        ensemble_size=5 if get_family(family).ensemble else 1,
        attention=attention,
        inference=inference,
    )


def make_input(length: int, vocab: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """One row of ``length`` tokens: [CLS] then random word ids. ``[1, length]`` each."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, vocab, (1, length), generator=g)
    ids[0, 0] = 2
    return ids, torch.ones_like(ids, dtype=torch.bool)


DEVICE = torch.device("cpu")  # set by --device; every model and input of the bench goes there


def _sync() -> None:
    if DEVICE.type == "cuda":  # GPU work is asynchronous: wait for it before reading the clock
        torch.cuda.synchronize(DEVICE)


def _timed(fn) -> float:
    _sync()
    start = time.perf_counter()
    fn()
    _sync()
    return time.perf_counter() - start


def _best(fn, repeats: int) -> float:
    return min(_timed(fn) for _ in range(repeats))


def matmul_flops(n: int = 2048, repeats: int = 5) -> float:
    """Achieved FLOP/s of an ``n x n`` fp32 matmul on the bench's device, best of ``repeats``."""
    a, b = torch.randn(n, n, device=DEVICE), torch.randn(n, n, device=DEVICE)
    a @ b
    return 2 * n**3 / _best(lambda: a @ b, repeats)


def loop_vs_batched(family: str, repeats: int) -> dict[str, float]:
    torch.manual_seed(0)
    model = build_model(bench_config(family)).to(DEVICE)
    ids, mask = (t.to(DEVICE) for t in make_input(20, 10_000))
    batched = sample(model, ids, mask, BENCH_T, seed=0)
    singles = [sample(model, ids, mask, 1, seed=0, first_sample=t) for t in range(BENCH_T)]
    max_diff = max(
        float((batched.probs[t] - s.probs[0]).abs().max()) for t, s in enumerate(singles)
    )
    # interleaved, so a change in the machine's load hits both sides alike; best of each
    batched_times, loop_times = [], []
    for _ in range(repeats):
        batched_times.append(_timed(lambda: sample(model, ids, mask, BENCH_T, seed=0)))
        loop_times.append(
            _timed(
                lambda: [
                    sample(model, ids, mask, 1, seed=0, first_sample=t) for t in range(BENCH_T)
                ]
            )
        )
    t_batch, t_loop = min(batched_times), min(loop_times)
    from torch.utils.flop_counter import FlopCounterMode  # heavy import: keep out of RSS runs

    # the same arithmetic on the matmul path, which the counter can see
    with FlopCounterMode(display=False) as counter, matmul_linear_only():
        sample(model, ids, mask, BENCH_T, seed=0)
    flops = counter.get_total_flops()
    return {
        "loop_s": t_loop,
        "batched_s": t_batch,
        "ratio": t_loop / t_batch,
        "flops": flops,
        "flops_per_s": flops / t_batch,
        "max_abs_diff": max_diff,
        "stochastic": batched.stochastic,
    }


def noise_rates(repeats: int = 5) -> dict[str, float]:
    """Million Gumbel draws per second of the inference noise (counter-based, per example) and
    of training's per-sample streams, on a draw shaped like H-STO's centroid noise."""
    shape, count, batch = (8, 256, 8), 10, 64  # [H, L, c] for 10 samples of 64 texts
    out = {}
    for name, make in (
        ("counter", lambda: SampleNoise(0, 0, count, batch, DEVICE)),
        ("stream", lambda: StreamNoise(0, 0, count, batch, DEVICE)),
    ):
        noise = make()
        seconds = _best(lambda noise=noise: noise.neg_gumbel(*shape), repeats)
        out[name] = count * batch * math.prod(shape) / seconds / 1e6
    return out


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB: ``VmHWM`` (reset by exec, unlike
    ``ru_maxrss``, which a child keeps from the parent it was forked from)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_child(family: str, length: int) -> None:
    """Run in a fresh process: one 500-token T=100 call capturing layer 0; print peak RSS (MB)."""
    torch.manual_seed(0)
    model = build_model(bench_config(family))
    ids, mask = make_input(length, 10_000)
    base = peak_rss_mb()
    r = sample(model, ids, mask, BENCH_T, seed=0, capture=Capture(layers=(0,), maps=("attention",)))
    peak = peak_rss_mb()
    storages = {
        m.attention.untyped_storage().data_ptr(): m.attention.untyped_storage().nbytes()
        for m in r.maps.values()
    }
    kept = sum(storages.values()) / 2**20  # real bytes: a broadcast map is stored once
    print(json.dumps({"peak_mb": peak, "before_mb": base, "captured_mb": kept}))


def peak_rss(family: str, length: int) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "uqlab.benches.sampler",
            "--rss-child",
            family,
            "--length",
            str(length),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def linear_crossover(rows_list=(20, 60, 120, 240, 500, 2000), repeats: int = 50) -> list[dict]:
    """Microseconds per FFN-1 projection (128 -> 512, + ReLU) on the matmul path and, where
    available, the oneDNN path, for several row counts (the basis of ``ONEDNN_MIN_ROWS``)."""
    layer = torch.nn.Linear(128, 512)
    w, b = layer.weight.detach(), layer.bias.detach()
    out = []
    with torch.inference_mode():
        for rows in rows_list:
            x = torch.randn(rows, 128)
            mm = _best(lambda x=x: torch.relu_(torch.matmul(x, w.t()).add_(b)), repeats)
            one = None
            if _ONEDNN is not None:
                one = _best(lambda x=x: _ONEDNN(x, w, b, "relu", [], ""), repeats) * 1e6
            out.append({"rows": rows, "matmul_us": mm * 1e6, "onednn_us": one})
    return out


def softmax_rows(widths=(4, 8, 12, 15, 16, 24, 48), repeats: int = 20) -> list[dict]:
    """Microseconds per softmax over the last dim of ``[640, 8, 12, width]`` (64 sentences x
    T = 10, 8 heads, 12 queries): PyTorch's kernel and ``uqcore.kernels.common.softmax_last``
    (rows narrower than ``SOFTMAX_MIN_ROW`` as whole-tensor max, exp and sum; the key
    ``padded_us`` keeps its old name), and their largest difference."""
    out = []
    with torch.inference_mode():
        for width in widths:
            x = torch.randn(640, 8, 12, width)
            plain = _best(lambda x=x: torch.softmax(x, -1), repeats)
            padded = _best(lambda x=x: softmax_last(x), repeats)
            diff = (softmax_last(x) - torch.softmax(x, -1)).abs().max().item()
            out.append(
                {
                    "width": width,
                    "torch_us": plain * 1e6,
                    "padded_us": padded * 1e6,
                    "max_abs_diff": diff,
                }
            )
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats and families (smoke run)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    p.add_argument("--markdown", metavar="PATH", help="also write the report as Markdown")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda: where the models run")
    p.add_argument("--rss-child", help=argparse.SUPPRESS)
    p.add_argument("--length", type=int, default=500, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    tuned = tune_cpu(args.threads)
    global DEVICE
    DEVICE = pick_device(args.device)
    if args.rss_child:
        rss_child(args.rss_child, args.length)
        return {}
    families = ("trans", "hsto") if args.quick else FAMILIES
    repeats = 2 if args.quick else 5
    peak = matmul_flops()
    print(f"fp32 matmul 2048^3: {peak / 1e9:.1f} GFLOP/s; runtime: {tuned}")
    print(
        f"{'family':<12} {'loop T=100 s':>13} {'batched s':>10} {'ratio':>7} "
        f"{'GFLOP/s':>8} {'of peak':>8} {'max|diff|':>10}"
    )
    rows = {}
    for fam in families:
        r = loop_vs_batched(fam, repeats)
        rows[fam] = r
        print(
            f"{fam:<12} {r['loop_s']:>13.3f} {r['batched_s']:>10.4f} {r['ratio']:>7.1f} "
            f"{r['flops_per_s'] / 1e9:>8.1f} {r['flops_per_s'] / peak:>8.1%} "
            f"{r['max_abs_diff']:>10.1e}"
        )
    stochastic = [f for f in families if rows[f]["stochastic"] and not get_family(f).ensemble]
    rates = noise_rates()
    print(
        f"noise, million Gumbel draws/s: counter (inference) {rates['counter']:.0f}, "
        f"stream (training) {rates['stream']:.0f}"
    )
    if DEVICE.type != "cpu":  # resident memory and the oneDNN crossover are CPU measures
        summary = {
            "device": str(DEVICE),
            "gpu": torch.cuda.get_device_name(DEVICE),
            "batched_vs_loop_min_ratio": round(min(r["ratio"] for r in rows.values()), 2),
            "batched_T100_s": {f: round(r["batched_s"], 5) for f, r in rows.items()},
            "matmul_tflops": round(peak / 1e12, 1),
            "noise_counter_mdraws_per_s": round(rates["counter"], 1),
        }
        print(json.dumps(summary))
        return summary
    rss = {fam: peak_rss(fam, args.length) for fam in families}
    print(f"\npeak RSS, {args.length} tokens, T={BENCH_T}, layer 0 attention captured:")
    for fam, r in rss.items():
        print(
            f"{fam:<12} peak {r['peak_mb']:7.0f} MB (model loaded {r['before_mb']:.0f} MB, "
            f"maps kept {r['captured_mb']:.0f} MB)"
        )
    crossover = linear_crossover()
    print("\nFFN-1 projection (128 -> 512 + ReLU), microseconds: rows matmul oneDNN")
    for c in crossover:
        print(f"{c['rows']:>6} {c['matmul_us']:>8.0f} {c['onednn_us'] or float('nan'):>8.0f}")
    softmax = softmax_rows()
    print("\nsoftmax over [640, 8, 12, width], microseconds: width torch softmax_last max|diff|")
    for c in softmax:
        print(
            f"{c['width']:>6} {c['torch_us']:>8.0f} {c['padded_us']:>8.0f} "
            f"{c['max_abs_diff']:>9.1e}"
        )
    summary = {
        "batched_vs_loop_min_ratio": round(min(r["ratio"] for r in rows.values()), 2),
        "batched_vs_loop_min_ratio_stochastic": round(min(rows[f]["ratio"] for f in stochastic), 2),
        "matmul_peak_fraction": round(rows["hsto"]["flops_per_s"] / peak, 4),
        "matmul_peak_fraction_max": round(max(r["flops_per_s"] for r in rows.values()) / peak, 4),
        "matmul_gflops": round(peak / 1e9, 1),
        "peak_rss_mb_500tok_T100": round(max(r["peak_mb"] for r in rss.values()), 1),
        "threads": args.threads,
        "noise_counter_mdraws_per_s": round(rates["counter"], 1),
        "noise_stream_mdraws_per_s": round(rates["stream"], 1),
    }
    if args.markdown:
        report = {
            "tuned": tuned,
            "peak": peak,
            "rows": rows,
            "rss": rss,
            "length": args.length,
            "crossover": crossover,
            "softmax": softmax,
            "summary": summary,
        }
        write_section(args.markdown, "uqlab.benches.sampler", render_markdown(report))
        print(f"wrote {args.markdown}")
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
