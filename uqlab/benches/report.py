"""Render a benchmark run (``python -m uqlab.benches.sampler --markdown PATH``) as
docs/performance.md.

Every number in the output comes from the run passed in; the prose only explains the method.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path

import torch


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def render_markdown(report: dict) -> str:
    """``report``: the dict that ``uqlab.benches.sampler.main`` builds from one run."""
    s, rows, rss, peak = report["summary"], report["rows"], report["rss"], report["peak"]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Performance",
        "",
        "Written by `python -m uqlab.benches.sampler --markdown docs/performance.md`; every figure "
        "below",
        "comes from that one run. Rerun it to measure your machine.",
        "",
        f"Machine: {_cpu_name()}, {os.cpu_count()} logical CPUs, torch {torch.__version__}, "
        f"{report['tuned']['threads']} threads, allocator tuned: "
        f"{report['tuned']['allocator_tuned']}. Run: {when}.",
        "",
        "## Batched T-sample call against T single-sample calls",
        "",
        "Model: the paper's CoLA architecture (8 layers, 8 heads, width 128, FFN 512), random",
        "weights, 10k-word vocabulary. Input: one 20-token sentence. `loop` = 100 calls of",
        "`sample(..., T=1, first_sample=t)`; `batched` = one `sample(..., T=100)`. Both are",
        "timed alternately, 5 times each, and the best of each is kept. `max|diff|` is the",
        "largest difference between a batched sample and the same sample drawn alone",
        "(same noise). FLOPs are counted by `torch.utils.flop_counter` on the matmul path.",
        f"Reference: a 2048^3 fp32 matmul ran at {peak / 1e9:.1f} GFLOP/s.",
        "",
        "| family | loop (s) | batched (s) | ratio | GFLOP/s | of matmul peak | max abs diff |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fam, r in rows.items():
        lines.append(
            f"| {fam} | {r['loop_s']:.3f} | {r['batched_s']:.4f} | {r['ratio']:.1f} | "
            f"{r['flops_per_s'] / 1e9:.1f} | {r['flops_per_s'] / peak:.1%} | "
            f"{r['max_abs_diff']:.1e} |"
        )
    lines += [
        "",
        "Deterministic settings (`trans`, `probtrans`) run the model once and repeat the result;",
        "a deep ensemble runs its 5 members once, together, and sample t is member t mod 5.",
        "",
        f"## Peak memory: {report['length']} tokens, T=100, layer 0 attention maps captured",
        "",
        "Each family runs in a fresh process; the peak is the process's `VmHWM`.",
        "",
        "| family | peak RSS (MB) | after loading the model (MB) | maps kept (MB) |",
        "|---|---:|---:|---:|",
    ]
    for fam, r in rss.items():
        lines.append(
            f"| {fam} | {r['peak_mb']:.0f} | {r['before_mb']:.0f} | {r['captured_mb']:.0f} |"
        )
    lines += [
        "",
        "Deterministic families keep one map and broadcast it, so their maps cost no memory.",
        "",
        "## Linear kernels: where oneDNN starts to pay",
        "",
        "Microseconds for the FFN-1 projection (128 -> 512, with ReLU). "
        "`uqcore.nets.linear.linear`",
        "uses oneDNN's fused kernel from `ONEDNN_MIN_ROWS` rows (without gradients).",
        "",
        "| rows | matmul + bias + ReLU (us) | oneDNN fused (us) |",
        "|---:|---:|---:|",
    ]
    for c in report["crossover"]:
        one = "n/a" if c["onednn_us"] is None else f"{c['onednn_us']:.0f}"
        lines.append(f"| {c['rows']} | {c['matmul_us']:.0f} | {one} |")
    if report.get("softmax"):
        lines += [
            "",
            "## Softmax rows: short rows padded to 16",
            "",
            "Microseconds for a softmax over the last dim of `[640, 8, 12, width]` (64 sentences",
            "x T = 10, 8 heads, 12 queries). PyTorch's CPU kernel vectorises rows of at least 16",
            "entries; `uqcore.kernels.common.softmax_last` pads shorter rows with -inf at",
            "inference (attention over a short sentence, H-STO's centroids).",
            "",
            "| width | torch.softmax (us) | softmax_last (us) | max abs diff |",
            "|---:|---:|---:|---:|",
        ]
        for c in report["softmax"]:
            lines.append(
                f"| {c['width']} | {c['torch_us']:.0f} | {c['padded_us']:.0f} | "
                f"{c['max_abs_diff']:.1e} |"
            )
    lines += ["", "## Summary line", "", "```json", json.dumps(s), "```", ""]
    return "\n".join(lines)


def write_section(path: str | Path, name: str, body: str) -> None:
    """Write ``body`` as the section of ``path`` that benchmark ``name`` owns, between the
    comments ``<!-- name -->`` and ``<!-- /name -->``: a rerun replaces its own section and
    keeps the others (docs/performance.md holds the library's and the app's)."""
    path = Path(path)
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1].lstrip("\n")
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block
    path.write_text(text, encoding="utf-8")
