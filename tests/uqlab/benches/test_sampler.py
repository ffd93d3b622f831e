"""The sampler benchmark's plumbing (uqlab.benches.sampler, uqlab.benches.report), not its speed:
timings belong in the benchmark's own output."""

from __future__ import annotations

import json

from uqlab.benches import sampler
from uqlab.benches.report import render_markdown


def test_benchmark_report_comes_from_a_real_run():
    row = sampler.loop_vs_batched("sto", repeats=1)
    assert row["max_abs_diff"] < 1e-5  # batched samples equal the same samples drawn alone
    assert row["loop_s"] > 0 and row["batched_s"] > 0 and row["flops"] > 1e9
    rss = sampler.peak_rss("hsto", 40)
    assert 0 < rss["before_mb"] <= rss["peak_mb"]
    crossover = sampler.linear_crossover(rows_list=(20, 200), repeats=2)
    summary = {"batched_vs_loop_min_ratio": round(row["ratio"], 2)}
    text = render_markdown(
        {
            "tuned": {"threads": 2, "allocator_tuned": True},
            "peak": 1e11,
            "rows": {"sto": row},
            "rss": {"hsto": rss},
            "length": 40,
            "crossover": crossover,
            "summary": summary,
        }
    )
    assert f"| sto | {row['loop_s']:.3f} |" in text
    assert "| 200 |" in text
    assert json.loads(text.split("```json\n")[1].split("\n```")[0]) == summary
