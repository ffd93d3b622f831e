"""The Compare table (ui.logic.compare)."""

from __future__ import annotations


def test_compare_without_a_gold_label_fills_the_same_columns_for_every_checkpoint():
    """Defect: with an unknown gold label one checkpoint filled p(unacceptable), another
    p(acceptable), and each row printed "None" in the other's column."""
    from types import SimpleNamespace

    import numpy as np

    from ui.logic.compare import compare
    from ui.logic.compute import summary

    names = ("unacceptable", "acceptable")
    probs = {"a": np.array([[0.9, 0.1], [0.7, 0.3]]), "b": np.array([[0.2, 0.8], [0.4, 0.6]])}
    for label in (None, 1):
        results = {n: SimpleNamespace(probs=p, summary=summary(p, label)) for n, p in probs.items()}
        table = compare(results, {"a": "hsto", "b": "trans"}, names, label).table
        assert not table.isna().any().any(), table
        assert "None" not in table.to_csv() and "nan" not in table.to_csv()
        if label is None:
            assert list(table["predicts"]) == ["unacceptable", "acceptable"]
            assert list(table["p(predicted) mean ± var"]) == ["0.800 ± 0.01", "0.700 ± 0.01"]
            assert list(table["samples agreeing"]) == ["2/2", "2/2"]
        else:
            assert list(table["correct / T"]) == ["0/2", "2/2"]
