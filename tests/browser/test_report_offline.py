"""A researcher writes a report of their file (python -m uqlab.report) and opens it in Chromium
with no network, at 1400x1000, 1024x768 and on a phone: every section is there, every figure
is drawn by the plotly.js inside the file, and the page raises no error."""

from __future__ import annotations

import pandas as pd
import pytest

from uqlab import report
from uqlab.workbench import dataset
from uqlab.workbench.report import SECTIONS

pytestmark = pytest.mark.browser
SIZES = [(1400, 1000), (1024, 768), (390, 844)]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    rows = dataset.examples("cola")
    inside = [r for r in rows if r[2] != dataset.OUT][:80]
    outside = [r for r in rows if r[2] == dataset.OUT][:40]
    for name, part in (("mine.csv", inside), ("other.csv", outside)):
        frame = pd.DataFrame({"text": [r[0] for r in part], "label": [r[1] for r in part]})
        frame.to_csv(folder / name, index=False)
    out = folder / "report.html"
    args = ["--ckpt", "cola-trans", "--ckpt", "cola-hsto", "--file", str(folder / "mine.csv")]
    args += ["--ood-file", str(folder / "other.csv"), "--samples", "4", "--out", str(out)]
    assert report.main([*args, "--quiet"]) == 0
    return out


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_report_opens_offline_with_every_section(chrome, written, shots, size):
    context = chrome.new_context(viewport={"width": size[0], "height": size[1]}, offline=True)
    page = context.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(written.as_uri())
    page.wait_for_selector("#histogram-1 .main-svg")
    for anchor, heading in SECTIONS:
        section = page.locator(f"section#{anchor}")
        assert section.locator("h2").inner_text() == heading
    for div in ("reliability", "risk-coverage", "confusion-0", "roc", "histogram-1"):
        assert page.locator(f"#{div} .main-svg").count() >= 1, div
    page.locator("section#paired").scroll_into_view_if_needed()
    assert "B − A" in page.locator("section#paired").inner_text()
    page.screenshot(path=str(shots / f"report-{size[0]}x{size[1]}.png"))
    page.locator("section#calibration").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"report-figures-{size[0]}x{size[1]}.png"))
    assert not errors, errors
    assert all(u.startswith("file:") or u.startswith("data:") for u in requests), requests
    context.close()
