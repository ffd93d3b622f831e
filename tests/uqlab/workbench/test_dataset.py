"""The dataset pages' per-domain numbers (uqlab.workbench.dataset): the visitor's file as a domain
of its own, and each domain's summary line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from uqcore import stats
from uqlab.workbench import dataset


def _frame(domains: list[str], c: int = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(c), size=len(domains))  # [N, C]
    out = pd.DataFrame(
        {"domain": domains, "gold": rng.integers(0, c, len(domains)), "p1": p[:, -1]}
    )
    for k in range(c):
        out[f"{dataset.CLASS_P}{k}"] = p[:, k]
    out["mi"] = rng.random(len(domains))
    return out


def test_a_visitors_file_is_in_domain_and_its_second_file_out_of_domain():
    df = _frame([dataset.OUT, dataset.YOURS] * 20)
    assert dataset.domains_of(df) == [dataset.YOURS, dataset.OUT]
    assert set(dataset.in_domain(df)["domain"]) == {dataset.YOURS}
    got = dataset.roc(df, "mutual_information")
    ind = df.loc[df["domain"] == dataset.YOURS, "mi"]
    ood = df.loc[df["domain"] == dataset.OUT, "mi"]
    assert got["auroc"] == pytest.approx(stats.ood_detection(ind, ood).auroc)


@pytest.mark.parametrize("c", [2, 4])
def test_each_domains_headline_is_uqcores_numbers_on_its_rows(c):
    df = _frame([dataset.YOURS] * 60 + [dataset.OUT] * 30, c=c)
    lines = dataset.headlines(df, seed=5)
    assert [h.domain for h in lines] == [dataset.YOURS, dataset.OUT]
    for h in lines:
        part = df[df["domain"] == h.domain]
        p, y = dataset.mean_probs(part), part["gold"].to_numpy()
        assert h.rows == len(part)
        assert h.accuracy == stats.bootstrap_interval(stats.accuracy, p, y, seed=5)
        assert h.ece == stats.bootstrap_interval(stats.ece, p, y, seed=5)
        if c == 2:
            assert h.macro_f1 is None and "macro-F1" not in h.text()
        else:
            assert h.macro_f1 == stats.bootstrap_interval(stats.macro_f1, p, y, seed=5)
            assert f"macro-F1 {h.macro_f1.value:.3f}" in h.text()
        assert h.text().startswith(f"{h.domain}: {len(part)} rows · accuracy ")


def test_a_headlines_cells_carry_each_metric_with_its_interval():
    h = dataset.headlines(_frame([dataset.YOURS] * 40, c=3), seed=0)[0]
    cells = h.cells()
    assert list(cells) == ["rows", "accuracy", "ECE", "macro-F1"]
    a = h.accuracy
    assert cells["rows"] == 40 and cells["accuracy"] == f"{a.value:.3f} [{a.low:.3f}, {a.high:.3f}]"
