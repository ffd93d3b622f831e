"""The notebook's calls (uqlab.workbench.notebook) and the tour notebook (docs/tour.ipynb) on the
shipped checkpoints: the tour runs with its outputs stripped, and its explorer histogram is the
explorer page's figure for the same link; each call returns what the page's functions give."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbclient import NotebookClient

from tests.helpers import chart_titled, open_link
from uqcore.exceptions import InputError
from uqcore.settings import SamplingSettings
from uqlab.workbench import compute, dataset, worth
from uqlab.workbench.notebook import analyze, checkpoint, compare, explore, read_file

ROOT = Path(__file__).resolve().parents[3]
TOUR = ROOT / "docs" / "tour.ipynb"
TEXT = "The book was written by John."
LABELS = {"bad": 0, "good": 1}  # the file's label values -> CoLA's ids


def test_the_tour_is_kept_without_outputs():
    nb = nbformat.read(TOUR, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.fixture(scope="module")
def tour() -> nbformat.NotebookNode:
    """The tour executed in a kernel from the repository's root (every cell, errors fail)."""
    nb = nbformat.read(TOUR, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    return nb


def _tagged(nb, tag: str):
    return next(c for c in nb.cells if tag in c.metadata.get("tags", []))


def _no_template(fig: dict) -> dict:
    """A figure without the template its renderer adds (Streamlit's theme, plotly's default)."""
    return {
        "data": fig["data"],
        "layout": {k: v for k, v in fig["layout"].items() if k != "template"},
    }


def test_the_tour_runs_and_its_histogram_is_the_explorer_pages(tour):
    shown = _tagged(tour, "histogram").outputs[0]["data"]["application/vnd.plotly.v1+json"]
    at = open_link(ckpt="cola-hsto", text=TEXT, label="1", T="50", seed="0")
    page = chart_titled(at, "p(acceptable) per sample")
    assert _no_template(shown) == _no_template(page)
    assert len(_tagged(tour, "attention").outputs) == 1
    assert "accuracy" in _tagged(tour, "summary").outputs[0]["data"]["text/html"]
    verdict = _tagged(tour, "compare").outputs[0]["data"]["text/html"]
    assert "B − A" in verdict and "cola-hsto" in verdict
    assert "MB" in _tagged(tour, "report").outputs[0]["text"]


def test_explore_returns_the_pages_record_for_the_same_settings():
    ck, _ = checkpoint("cola-hsto")
    got = explore((ck, _), TEXT, label=1, T=12, seed=3, tau2=20.0)
    again = compute.explore(ck, TEXT, 12, 3, SamplingSettings(tau2=20.0)).for_label(1)
    np.testing.assert_array_equal(got.result.probs, again.probs)
    assert got.result.summary == again.summary
    assert got.summary["correct"] == f"{again.summary.correct}/12"
    assert set(got.figures) == {"histogram", "running_mean", "attention"}
    assert len(got.attention(layer=0, head=1)) in (1, 3)
    with pytest.raises(InputError, match="Layer 99"):
        got.attention(layer=99)
    with pytest.raises(Exception, match="text"):
        explore((ck, _), "   ", T=2)


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    """120 CoLA examples as a visitor's CSV with its own column and label names."""
    rows = dataset.examples("cola")[:120]
    path = tmp_path_factory.mktemp("file") / "mine.csv"
    pd.DataFrame(
        {
            "sentence": [r[0] for r in rows],
            "verdict": [("bad", "good")[r[1]] for r in rows],
            "id": range(120),
        }
    ).to_csv(path, index=False)
    return path


def test_analyze_reads_a_file_as_the_pages_do_and_compare_is_results_verdict(mine):
    ck, info = checkpoint("cola-trans")
    with pytest.raises(InputError, match="map at least one value"):  # bad/good: not guessed
        analyze((ck, info), mine, T=4, progress=False)
    a = analyze((ck, info), mine, T=4, progress=False, labels=LABELS)
    b = analyze("cola-hsto", mine, T=4, progress=False, labels=LABELS)
    rows = read_file(mine, a.names, dataset.YOURS, labels=LABELS)
    assert len(rows) == 120 and rows[0][2] == dataset.YOURS  # the guessed text and label columns
    sampler = lambda texts: compute.many_probs(ck, texts, 4, 0, SamplingSettings())  # noqa: E731
    frame, _ = dataset.frame(rows, sampler, temperature=dataset.fitted_temperature(info.metrics))
    pd.testing.assert_frame_equal(a.frame, frame)
    assert a.mine and a.settings["T"] == 4 and a.settings["examples"] == "your file mine.csv"
    assert list(a.summary["domain"]) == [dataset.YOURS]
    assert set(a.figures()) == {"reliability", "risk_coverage", "confusion", "histogram"}  # no OOD
    assert len(a.worst_errors(5)) <= 5 and (a.most_uncertain(3)["mi"].diff().dropna() <= 0).all()
    block, n = worth.pair(
        {"cola-trans": a.frame, "cola-hsto": b.frame}, "cola-trans", "cola-hsto", "max_prob", 0
    )
    assert compare(a, b).block == block and n == 120
    with pytest.raises(InputError, match="different"):
        compare(a, a)


def test_a_bad_file_or_a_too_small_one_says_what_to_do(tmp_path, mine):
    with pytest.raises(InputError, match="no such file"):
        analyze("cola-trans", tmp_path / "missing.csv", progress=False)
    bad = tmp_path / "data.exe"
    bad.write_bytes(b"MZ")
    with pytest.raises(InputError, match="csv"):
        analyze("cola-trans", bad, progress=False)
    small = tmp_path / "small.csv"
    pd.read_csv(mine).head(10).to_csv(small, index=False)
    a = analyze("cola-trans", small, T=2, progress=False, labels=LABELS)
    b = analyze("cola-hsto", small, T=2, progress=False, labels=LABELS)
    with pytest.raises(InputError, match="at least"):
        compare(a, b)
    assert json.dumps(a.settings)  # the record is plain values
