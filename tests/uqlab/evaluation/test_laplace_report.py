"""The Laplace fits section of docs/results.md (uqlab.evaluation.laplace_report)."""

from __future__ import annotations

from uqlab.evaluation.laplace_report import laplace_markdown

RECORD = {
    "source": "cr-minilm-trans",
    "parameters": 453506,
    "fit_rows": 2775,
    "fit_seconds": 114.2,
    "peak_rss_mb": 743.4,
    "prior_precision": 1000.0,
    "dev": [
        {"prior_precision": None, "dev_nll": 0.27108, "dev_accuracy": 0.896, "dev_ece": 0.04345},
        {"prior_precision": 10.0, "dev_nll": 0.74, "dev_accuracy": 0.38, "dev_ece": 0.19},
        {"prior_precision": 1000.0, "dev_nll": 0.26233, "dev_accuracy": 0.896, "dev_ece": 0.04022},
    ],
}


def test_one_row_a_fit_with_its_cost_and_its_chosen_prior():
    lines = laplace_markdown({"cr-minilm-laplace": RECORD})
    row = lines[-1]
    assert row.startswith(
        "| cr-minilm-laplace | cr-minilm-trans | all it stores | 453,506 | 2,775 | 114 | 743 |"
    )
    assert "| 1000 | 0.2711 → 0.2623 | 0.8960 → 0.8960 | 0.0435 → 0.0402 |" in row
    assert laplace_markdown({}) == []
    top = laplace_markdown({"x-laplace": {**RECORD, "from_block": 29, "parameters": 7296}})[-1]
    assert top.startswith("| x-laplace | cr-minilm-trans | block 29 up, head | 7,296 |")
    assert top.count("|") == row.count("|")  # the same columns
