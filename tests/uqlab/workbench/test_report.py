"""The HTML report (uqlab.workbench.report): every section, the figures offline, visitor text
escaped, the same bytes for the same inputs, and a paired verdict whose intervals are a plain
paired bootstrap's."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from uqcore.stats import ece
from uqlab.workbench import dataset, report
from uqlab.workbench.notebook import analyze, compare

HOSTILE = '<script>alert("x")</script> <img src=x onerror=alert(1)> and a fine sentence'


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """cola-trans and cola-hsto on 80 CoLA examples and a hostile row, as a visitor's file,
    with 40 CR reviews as its out-of-domain file."""
    folder = tmp_path_factory.mktemp("report")
    rows = dataset.examples("cola")[:80]
    texts = [r[0] for r in rows] + [HOSTILE]
    labels = [r[1] for r in rows] + [1]
    pd.DataFrame({"text": texts, "label": labels}).to_csv(folder / "mine.csv", index=False)
    ood = [r for r in dataset.examples("cola") if r[2] == dataset.OUT][:40]
    pd.DataFrame({"text": [r[0] for r in ood], "label": [r[1] for r in ood]}).to_csv(
        folder / "other.csv", index=False
    )
    kw = {"ood_file": folder / "other.csv", "T": 4, "progress": False}
    a = analyze("cola-trans", folder / "mine.csv", **kw)
    b = analyze("cola-hsto", folder / "mine.csv", **kw)
    return a, b


def test_every_section_is_there_with_its_figures_and_nothing_from_the_network(pair):
    a, b = pair
    html = report.build([a, b], compare(a, b))
    for anchor, heading in report.SECTIONS:
        assert f'<section id="{anchor}"><h2>{heading}</h2>' in html
    assert html.count("<script") == 1 + 7  # plotly.js once, then one call per figure
    assert not re.search(r"<script[^>]+src=", html)  # plotly.js inside the file
    figures = ("reliability", "risk-coverage", "confusion-0", "confusion-1", "roc", "histogram-0")
    for div in (*figures, "histogram-1"):
        assert f'id="{div}"' in html
    assert "cola-hsto is better" in html or "no difference" in html
    assert html == report.build([a, b], compare(a, b))  # the same bytes


def test_visitor_text_is_escaped_everywhere(pair, monkeypatch):
    a, _ = pair
    monkeypatch.setattr(report, "ROWS", 1000)  # every row listed: the hostile one too
    html = report.build([a])
    assert "<img src=x" not in html and 'alert("x")</script>' not in html
    assert '&lt;script&gt;alert("x")&lt;/script&gt;' in html
    assert "One checkpoint" in html  # no verdict without a second checkpoint


def test_without_out_of_domain_rows_the_report_says_so(pair):
    a, _ = pair
    alone = dataclasses.replace(a, frame=dataset.in_domain(a.frame))
    html = report.build([alone])
    assert "No out-of-domain rows" in html and 'id="roc"' not in html


def _said(d: float, lo: float, hi: float) -> str:
    return f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]".replace("-", "−")


def test_the_verdicts_intervals_are_a_plain_paired_bootstrap(pair):
    a, b = pair
    html = report.build([a, b], compare(a, b, seed=7))
    fa, fb = (dataset.in_domain(f.sort_values(["domain", "index"])) for f in (a.frame, b.frame))
    pa, pb, y = dataset.mean_probs(fa), dataset.mean_probs(fb), fa["gold"].to_numpy()
    rng = np.random.default_rng(7)
    acc, cal = [], []
    for _ in range(1000):  # one draw of the rows, both models
        r = rng.integers(0, len(y), len(y))
        acc.append((pb[r].argmax(1) == y[r]).mean() - (pa[r].argmax(1) == y[r]).mean())
        cal.append(ece(pb[r], y[r]) - ece(pa[r], y[r]))
    d_acc = (pb.argmax(1) == y).mean() - (pa.argmax(1) == y).mean()
    d_ece = ece(pb, y) - ece(pa, y)
    for d, draws in ((d_acc, acc), (d_ece, cal)):
        lo, hi = np.percentile(draws, [2.5, 97.5])
        assert _said(d, lo, hi) in html
