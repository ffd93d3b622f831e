"""The Compare table (ui.logic.compare)."""

from __future__ import annotations


def test_compare_without_a_gold_label_fills_the_same_columns_for_every_checkpoint():
    """Defect: with an unknown gold label one checkpoint filled p(unacceptable), another
    p(acceptable), and each row printed "None" in the other's column."""
    from types import SimpleNamespace

    import numpy as np

    from ui.logic.compare import compare
    from uqlab.workbench.compute import summary

    names = ("unacceptable", "acceptable")
    probs = {"a": np.array([[0.9, 0.1], [0.7, 0.3]]), "b": np.array([[0.2, 0.8], [0.4, 0.6]])}
    for label in (None, 1):
        results = {
            n: SimpleNamespace(probs=p, summary=summary(p, label), maps={})
            for n, p in probs.items()
        }
        table = compare(results, {"a": "hsto", "b": "trans"}, names, label).table
        assert not table.isna().any().any(), table
        assert "None" not in table.to_csv() and "nan" not in table.to_csv()
        if label is None:
            assert list(table["predicts"]) == ["unacceptable", "acceptable"]
            assert list(table["p(predicted) mean ± var"]) == ["0.800 ± 0.01", "0.700 ± 0.01"]
            assert list(table["samples agreeing"]) == ["2/2", "2/2"]
        else:
            assert list(table["correct / T"]) == ["0/2", "2/2"]


def test_the_spread_of_attention_is_the_std_across_samples_of_the_last_layer():
    """Issue 47: where the uncertainty lives, side by side: how much the attention moves."""
    from types import SimpleNamespace

    import numpy as np

    from ui.logic.compare import attention_spread
    from uqcore.nets.maps import LayerMaps

    still = np.full((3, 2, 4, 4), 0.25, np.float16)  # [Tc, H, L, L]: every sample the same
    moving = still.copy()
    moving[1, :, :, 0], moving[1, :, :, 1] = 0.5, 0.0  # one sample moves two columns
    res = SimpleNamespace(maps={0: LayerMaps(attention=moving), 1: LayerMaps(attention=still)})
    assert attention_spread(res) == 0.0  # the last layer's, not the first's
    res = SimpleNamespace(maps={0: LayerMaps(attention=still), 1: LayerMaps(attention=moving)})
    want = np.asarray(moving, np.float64).std(axis=0).mean()
    assert attention_spread(res) == want and want > 0
    assert attention_spread(SimpleNamespace(maps={})) == 0.0
