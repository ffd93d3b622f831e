"""ExploreResult and spec sizes (ui.logic.compute): what the figure cache keys and counts."""

from __future__ import annotations

import numpy as np

from ui.logic.compute import ExploreResult, spec_bytes


def _result(key) -> ExploreResult:
    return ExploreResult(
        probs=np.full((4, 2), 0.5),
        tokens=["a"],
        unknown=[False],
        n_used=1,
        n_dropped=0,
        captured=4,
        maps={},
        members=None,
        probs_before_em=None,
        stochastic=True,
        settings=None,
        seconds=0.0,
        key=key,
    )


def test_temperature_scaling_drops_the_key():
    """A temperature-scaled result has other probabilities: it must not reuse the unscaled
    result's figures under its key (ui.cached.explore sets the key with the
    temperature in it)."""
    res = _result(("k",))
    res = ExploreResult(**{**res.__dict__, "logits": np.zeros((4, 2))})
    assert res.with_temperature(2.0).key is None
    assert res.for_label(1).key == ("k",)


def test_spec_bytes_counts_arrays_once_and_grows_with_the_figure():
    z = np.zeros((64, 64))
    one = spec_bytes({"data": [{"z": z}]})
    assert one >= z.nbytes
    views = spec_bytes({"data": [{"z": z[:10]}, {"z": z[10:]}]})  # two views of one array
    assert views < one + 2000
    assert spec_bytes({"data": [{"z": np.zeros((128, 128))}]}) > 3 * one
    assert spec_bytes((["x"] * 1000, True)) > spec_bytes((["x"], True))
