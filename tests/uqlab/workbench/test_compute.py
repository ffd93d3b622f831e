"""ExploreResult and spec sizes (uqlab.workbench.compute): what the figure cache keys and counts;
the explorer's checks of its maps (identical samples, a uniform BAM prior); a grid of settings
sampled together gives what each setting gives alone."""

from __future__ import annotations

import numpy as np
import pytest

from uqlab.workbench import compute
from uqlab.workbench.compute import ExploreResult, identical, spec_bytes, uniform_prior


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


def test_identical_tells_samples_that_differ_from_copies():
    same = np.broadcast_to(np.arange(6.0).reshape(2, 3), (5, 2, 3))  # [T, ...]
    assert identical(same) and identical(same[:1])
    differ = same.copy()
    differ[3, 1, 2] += 1e-3
    assert not identical(differ)


def test_uniform_prior_is_relative_to_an_equal_share():
    """Issue 34: cola-bam's prior is flat (about 1/7 on each key), so its KL bars are the same
    for every head; the explorer says so when the prior is within 20 % of 1/n on every key."""
    rng = np.random.default_rng(0)
    for n in (7, 60):
        flat = np.full((4, n), 1 / n)  # [H, n]
        assert uniform_prior(flat)
        nearly = flat * (1 + rng.uniform(-0.1, 0.1, (4, n)))  # every key within 10 %
        assert uniform_prior(nearly / nearly.sum(-1, keepdims=True))
        learned = rng.dirichlet(np.ones(n), 4)  # a prior that prefers some keys
        assert not uniform_prior(learned)
    # a long text: every share is small (1/60), yet one key gets twice its share: not uniform
    # (an absolute tolerance of 0.02 would call it uniform)
    long = np.full((4, 60), 1 / 61)
    long[:, 0] = 2 / 61
    assert np.abs(long - 1 / 60).max() < 0.02 and not uniform_prior(long)


def test_a_decoders_later_keys_are_hidden_not_zero():
    from uqlab.workbench.compute import hide_future

    maps = np.full((2, 3, 3), 0.25, dtype=np.float16)  # [Tc, W, W]
    hidden = hide_future(maps, causal=True)
    later = np.triu(np.ones((3, 3), dtype=bool), 1)
    assert hidden.dtype == np.float32 and np.isnan(hidden[:, later]).all()
    assert (hidden[:, ~later] == 0.25).all()
    assert not np.isnan(hide_future(maps, causal=False)).any()  # an encoder's: unchanged


def test_every_page_path_reads_at_the_training_length_unless_asked_further(
    monkeypatch, minilm_base
):
    """Issue 36: the pages' one-text path (explorer, why views) and many-texts path (Error
    analysis, Results, Table 3, Compare) encode at the length the checkpoint was trained; only
    the explorer's ``whole`` reads further, up to the position table."""
    from tests.helpers import encode_lengths
    from uqcore.registry import load
    from uqcore.settings import SamplingSettings
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

    if not (SHIPPED_CHECKPOINT_DIR / "cr-minilm-trans" / "config.json").is_file():
        pytest.skip("the shipped MiniLM checkpoints are not here")
    ck = load("cr-minilm-trans", SHIPPED_CHECKPOINT_DIR)
    seen = encode_lengths(monkeypatch)
    long = "the battery lasts and lasts " * 40
    got = compute.many_probs(ck, (long, "fine"), 2, 0, SamplingSettings())
    res = compute.explore(ck, long, 2, 0, SamplingSettings())
    assert set(seen) == {64} and len(res.tokens) == 64 and res.read_len == res.trained_len == 64
    assert all(not isinstance(g, str) for g in got)
    seen.clear()
    far = compute.explore(ck, long, 2, 0, SamplingSettings(), whole=True)
    assert set(seen) == {512} and (far.read_len, far.trained_len) == (512, 64)
    assert len(far.tokens) > 64


def test_a_grid_of_settings_gives_each_what_many_probs_gives(tmp_path):
    """A one-layer H-STO net (the grid folds into one pass) and the two-layer test nets (it
    does not): per setting the samples of :func:`compute.many_probs`, messages kept in place."""
    import torch

    from tests.app_fixtures import make_checkpoints
    from uqcore.checkpoint import load_checkpoint, save_checkpoint
    from uqcore.settings import SamplingSettings

    folder = make_checkpoints(tmp_path, families=("hsto",))
    two = load_checkpoint(folder / "cola-hsto")
    torch.manual_seed(0)
    one_cfg = two.config.replace(n_layers=1)
    from uqcore.build import build_model

    save_checkpoint(
        tmp_path / "one", build_model(one_cfg), one_cfg, two.vocab, training=two.training
    )
    texts = ("the cat sat on the mat", "", "colourless green ideas sleep", "zzqx")
    grid = tuple(SamplingSettings(tau1=t) for t in (0.5, 5.0)) + (SamplingSettings(tau2=9.0),)
    for ck in (two, load_checkpoint(tmp_path / "one")):
        got = compute.many_probs_grid(ck, texts, 3, 1, grid)
        assert len(got) == len(grid)
        for s, part in zip(grid, got, strict=True):
            alone = compute.many_probs(ck, texts, 3, 1, s)
            for a, b in zip(alone, part, strict=True):
                if isinstance(a, str):
                    assert a == b and a  # why the text cannot be read
                else:
                    np.testing.assert_allclose(b.probs, a.probs, atol=1e-6)
                    np.testing.assert_allclose(b.logits, a.logits, atol=1e-5)
