"""uqcore.inference.prefix: the layers below the first stochastic one, computed once and kept by
bytes."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.families import get_family
from uqcore.inference.prefix import PrefixCache, prefix_for, usable
from uqcore.inference.sampling import Capture, sample
from uqcore.kernels.common import Shortcut
from uqcore.settings import SamplingSettings, resolve

IDS = torch.tensor([[2, 5, 6, 7, 3, 0, 0], [2, 9, 10, 11, 12, 3, 8], [2, 4, 0, 0, 0, 0, 0]])
MASK = IDS != 0


def _model(family: str, backbone: str, last_only: bool = True):
    layers = (2,) if last_only else None
    cfg = ModelConfig(
        family=family,
        backbone=backbone,
        vocab_size=60,
        max_len=16,
        n_layers=3,
        n_heads=2,
        d_model=16,
        d_ff=32,
        stochastic_layers=layers,
    )
    if backbone == "llama":  # grouped: one key / value head for the two query heads
        cfg = cfg.replace(backbone_params=dataclasses.replace(cfg.backbone_params, n_kv_heads=1))
    torch.manual_seed(0)
    return build_model(cfg)


def _one_layer(family: str, backbone: str):
    """The shipped word-level nets' shape: one layer, noise in it (layer 0 first and last)."""
    cfg = _model(family, backbone).cfg.replace(n_layers=1, stochastic_layers=None)
    torch.manual_seed(0)
    return build_model(cfg)


@pytest.mark.parametrize("depth", ["last", "every", "one"])
@pytest.mark.parametrize("backbone", ["word", "bert"])
@pytest.mark.parametrize("family", ["hsto", "bam"])
def test_cached_prefix_gives_the_numbers_of_a_full_pass(family, backbone, depth):
    """Noise in the last layer only, in every layer (the prefix is the embeddings) or in a
    one-layer net's only layer (the embeddings and that layer's projections)."""
    if depth == "one":
        model = _one_layer(family, backbone)
    else:
        model = _model(family, backbone, last_only=depth == "last")
    cache = PrefixCache(2**20)
    plain = sample(model, IDS, MASK, T=6, seed=4)  # no cache: the prefix once per call
    first = sample(model, IDS, MASK, T=6, seed=4, prefix_cache=cache, prefix_owner="m")
    assert (cache.hits, cache.misses) == (0, 3)
    again = sample(model, IDS, MASK, T=6, seed=4, prefix_cache=cache, prefix_owner="m")
    assert (cache.hits, cache.misses) == (3, 3)  # every row read back
    torch.testing.assert_close(first.probs, plain.probs, atol=1e-6, rtol=0)
    torch.testing.assert_close(again.probs, plain.probs, atol=1e-6, rtol=0)
    # a knob of the stochastic layer reuses the prefix and still equals a fresh pass
    knob = SamplingSettings(tau2=0.5) if family == "hsto" else SamplingSettings(noise_scale=0.5)
    knob = resolve(model.cfg, knob)
    changed = sample(
        model, IDS, MASK, T=6, seed=4, settings=knob, prefix_cache=cache, prefix_owner="m"
    )
    assert cache.misses == 3
    fresh = sample(model, IDS, MASK, T=6, seed=4, settings=knob)
    torch.testing.assert_close(changed.probs, fresh.probs, atol=1e-6, rtol=0)
    assert not torch.allclose(changed.probs, plain.probs)  # the knob does change the numbers


def test_rows_are_keyed_by_their_own_tokens_not_their_batch():
    model = _model("hsto", "bert")
    cache = PrefixCache(2**20)
    sample(model, IDS[:2], MASK[:2], T=3, seed=1, prefix_cache=cache, prefix_owner="m")
    alone = sample(
        model, IDS[1:2, :6], MASK[1:2, :6], T=3, seed=1, prefix_cache=cache, prefix_owner="m"
    )
    assert cache.hits == 0  # IDS[1] cut to 6 tokens is another input
    one = sample(
        model, IDS[2:3, :2], MASK[2:3, :2], T=3, seed=1, prefix_cache=cache, prefix_owner="m"
    )
    full = sample(model, IDS, MASK, T=3, seed=1)
    torch.testing.assert_close(one.probs[:, 0], full.probs[:, 2], atol=1e-6, rtol=0)
    assert alone.probs.shape == (3, 1, 2)
    sample(model, IDS, MASK, T=3, seed=1, prefix_cache=cache, prefix_owner="other")
    assert cache.hits == 0  # another owner (other weights) never reads these rows


def test_the_cache_stays_within_its_bytes():
    model = _model("hsto", "word")
    row_bytes = 4 * (16 + 2 + 7 * 2 * 3 + 7 * 16)  # [CLS] state, Q C, K C and V of 7 tokens
    cache = PrefixCache(2 * row_bytes)
    sample(model, IDS, MASK, T=2, seed=0, prefix_cache=cache, prefix_owner="m")
    assert 0 < cache.bytes <= 2 * row_bytes


@pytest.mark.parametrize("backbone", ["word", "bert", "llama"])
@pytest.mark.parametrize("family", ["hsto", "sto", "bam"])
def test_maps_captured_below_the_noise_come_from_one_pass(family, backbone, monkeypatch):
    """Every layer's maps wanted (the explorer): the layers below the noise run once for the
    call, not once per chunk of samples, and give the numbers of a full pass of every chunk."""
    import uqcore.inference.sampling as sampling

    model = _model(family, backbone)
    every = Capture(layers=(0, 1, 2))
    calls = []
    real = sampling.prefix_with_maps
    monkeypatch.setattr(
        sampling, "prefix_with_maps", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    small = 4 * 2**10  # bytes: several chunks of samples
    fast = sample(model, IDS, MASK, T=5, seed=2, capture=every, memory_budget=small)
    assert calls == [1]  # one pass for the layers below, whatever the chunks
    monkeypatch.setattr(sampling, "usable", lambda *a, **k: False)  # the full pass per chunk
    full = sample(model, IDS, MASK, T=5, seed=2, capture=every, memory_budget=small)
    torch.testing.assert_close(fast.probs, full.probs, atol=1e-6, rtol=0)
    assert sorted(fast.maps) == sorted(full.maps) == [0, 1, 2]
    for layer, maps in full.maps.items():
        for name, value in maps.items():
            got = getattr(fast.maps[layer], name)
            torch.testing.assert_close(got, value, atol=1e-6, rtol=0, msg=f"{layer} {name}")


def test_no_prefix_where_something_below_draws_noise_or_is_captured():
    s = resolve(_model("hsto", "bert").cfg)
    assert usable(_model("hsto", "bert"), s)
    assert usable(_model("hsto", "bert", last_only=False), s)  # noise from layer 0: embeddings
    assert not usable(_model("hsto", "bert"), s, capture=(0,))  # layer 0's maps wanted
    word_laplace = _model("laplace", "word", last_only=False)  # every weight drawn
    assert not usable(word_laplace, resolve(word_laplace.cfg))
    mc = _model("mcdropout", "bert")
    assert not usable(mc, dataclasses.replace(resolve(mc.cfg), dropout_on=True))
    ens = ModelConfig(
        family="ensemble",
        vocab_size=60,
        max_len=16,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
        ensemble_size=2,
        stochastic_layers=(1,),
    )
    assert not usable(build_model(ens), resolve(ens))


@pytest.mark.parametrize("backbone", ["word", "bert"])
@pytest.mark.parametrize(
    ("family", "values", "knob"),
    [
        ("hsto", {}, SamplingSettings()),
        ("hsto", {}, SamplingSettings(hard=True)),
        ("hsto", {"centroids_per_head": True}, SamplingSettings(tau1=0.3)),
        ("hsto", {"centroid_side": "query"}, SamplingSettings()),
        ("bam", {}, SamplingSettings()),
        ("bam", {"dist": "lognormal"}, SamplingSettings(noise_scale=2.0)),
        ("sto", {}, SamplingSettings(tau2=3.0)),
    ],
)
def test_the_noisy_layers_shortcut_equals_copying_the_rows(family, values, knob, backbone):
    """Without maps the last layer runs its kernel's ``repeated`` form on the cached [CLS]
    projections (keys and values never copied per sample); capturing that layer runs the kernel
    on T copies of the rows, whose numbers never depend on capturing: the two agree."""
    params = get_family(family).params(**values, **({"n_centroids": 3} if family == "hsto" else {}))
    cfg = ModelConfig(
        family=family,
        backbone=backbone,
        vocab_size=60,
        max_len=16,
        n_layers=3,
        n_heads=2,
        d_model=16,
        d_ff=32,
        stochastic_layers=(2,),
        attention=params,
    )
    torch.manual_seed(0)
    model = build_model(cfg)
    knob = resolve(model.cfg, knob)
    kernel = model.layers[2].attn.kernel
    original = getattr(kernel, "shortcut", None)
    calls = []
    if original is not None:  # count the calls of the shortcut
        kernel.shortcut = Shortcut(
            original.prepare,
            lambda *a: calls.append(1) or original.noisy(*a),
            original.finish,
            original.finish_reads,
        )
    try:
        cache = PrefixCache(2**20)
        fast = sample(
            model, IDS, MASK, T=5, seed=2, settings=knob, prefix_cache=cache, prefix_owner="m"
        )
        again = sample(
            model, IDS, MASK, T=5, seed=2, settings=knob, prefix_cache=cache, prefix_owner="m"
        )
        copied = sample(model, IDS, MASK, T=5, seed=2, settings=knob, capture=Capture(layers=(2,)))
    finally:
        if original is not None:
            kernel.shortcut = original
    assert (len(calls) == 2) == (values.get("centroid_side") != "query")
    assert cache.hits == 3  # the second call read every row's projections back
    torch.testing.assert_close(fast.probs, copied.probs, atol=2e-6, rtol=0)
    torch.testing.assert_close(again.probs, fast.probs, atol=0, rtol=0)
    assert copied.maps[2].attention.shape == (5, 3, 2, 7, 7)
    assert not torch.allclose(fast.probs[0], fast.probs[1])  # the samples differ


def test_prefix_states_pad_with_zeros_and_match_the_batch():
    model = _model("bam", "bert")
    s = resolve(model.cfg)
    got = prefix_for(model, IDS, MASK, s, PrefixCache(2**20), "m")
    (scores,), v = got.prepared, got.v  # BAM keeps K Q^T / tau of the [CLS] query
    assert got.x.shape == (3, 1, 16) and scores.shape == (3, 2, 7, 1) and v.shape == (3, 2, 7, 8)
    assert v[2, :, 2:].abs().max() == 0  # the third row has 2 tokens: the rest is padding
    full = model.prefix_states(IDS, MASK, s, projections=True)
    for a, b in zip(got.parts(), full.parts(), strict=True):
        torch.testing.assert_close(a[1], b[1], atol=1e-6, rtol=0)  # the row without padding
    plain = prefix_for(model, IDS, MASK, s, PrefixCache(2**20), "m", capture=(2,))
    assert plain.prepared is None and plain.x.shape == (3, 7, 16)  # maps wanted: x only


def _hsto_model(backbone: str = "word", n_layers: int = 3):
    """H-STO with noise in its last layer (of ``n_layers``; one layer: the word-level nets)."""
    params = get_family("hsto").params(n_centroids=3)
    cfg = ModelConfig(
        family="hsto",
        backbone=backbone,
        vocab_size=60,
        max_len=16,
        n_layers=n_layers,
        n_heads=2,
        d_model=16,
        d_ff=32,
        stochastic_layers=(n_layers - 1,),
        attention=params,
    )
    torch.manual_seed(0)
    return build_model(cfg)


@pytest.mark.parametrize("n_layers", [3, 1])
@pytest.mark.parametrize("backbone", ["word", "bert"])
def test_a_tau2_change_reuses_the_kept_noisy_scores_and_gives_a_fresh_runs_numbers(
    backbone, n_layers
):
    """The noisy scores (every draw, no tau2) are kept per example: a second tau2 draws
    nothing and equals a run without any cache; a tau1, seed or T change is never served from
    them (each gives a fresh run's numbers). One layer: the shipped word-level nets (a tau2
    sweep of imdb-hsto redrew every value's noise before)."""
    model = _hsto_model(backbone, n_layers)
    kernel = model.layers[n_layers - 1].attn.kernel
    original, calls = kernel.shortcut, []
    kernel.shortcut = Shortcut(
        original.prepare,
        lambda *a: calls.append(1) or original.noisy(*a),
        original.finish,
        original.finish_reads,
    )
    cache = PrefixCache(2**20, scores_budget=2**20)
    try:
        sample(
            model,
            IDS,
            MASK,
            T=4,
            seed=2,
            settings=resolve(model.cfg, SamplingSettings(tau2=3.0)),
            prefix_cache=cache,
            prefix_owner="m",
        )
        assert len(calls) == 1 and cache.scores_bytes > 0
        got = sample(
            model,
            IDS,
            MASK,
            T=4,
            seed=2,
            settings=resolve(model.cfg, SamplingSettings(tau2=8.0)),
            prefix_cache=cache,
            prefix_owner="m",
        )
        assert len(calls) == 1 and cache.score_hits == 3  # nothing drawn: every row served
        others = [
            (resolve(model.cfg, SamplingSettings(tau1=0.5, tau2=8.0)), 4, 2),
            (resolve(model.cfg, SamplingSettings(tau2=8.0)), 4, 3),
            (resolve(model.cfg, SamplingSettings(tau2=8.0)), 6, 2),
        ]
        served = [
            sample(
                model, IDS, MASK, T=t, seed=sd, settings=ov, prefix_cache=cache, prefix_owner="m"
            )
            for ov, t, sd in others
        ]
        assert len(calls) == 4 and cache.score_hits == 3
    finally:
        kernel.shortcut = original
    fresh = sample(
        model, IDS, MASK, T=4, seed=2, settings=resolve(model.cfg, SamplingSettings(tau2=8.0))
    )
    torch.testing.assert_close(got.probs, fresh.probs, atol=1e-7, rtol=0)
    assert not torch.allclose(got.probs[0], got.probs[1])  # the samples differ
    for (ov, t, sd), one in zip(others, served, strict=True):
        alone = sample(model, IDS, MASK, T=t, seed=sd, settings=ov)
        torch.testing.assert_close(one.probs, alone.probs, atol=1e-7, rtol=0)


def test_kept_scores_serve_an_example_in_another_batch():
    """Scores are kept per example: the same rows in another batch (another width, another
    order) are served and give the numbers of a run without a cache."""
    model = _hsto_model()
    cache = PrefixCache(2**20, scores_budget=2**20)
    sample(
        model,
        IDS,
        MASK,
        T=3,
        seed=0,
        settings=resolve(model.cfg, SamplingSettings(tau2=2.0)),
        prefix_cache=cache,
        prefix_owner="m",
    )
    order = torch.tensor([2, 0])
    ids, mask = IDS[order], MASK[order]
    width = int(mask.sum(1).max())
    ids, mask = ids[:, :width], mask[:, :width]
    got = sample(
        model,
        ids,
        mask,
        T=3,
        seed=0,
        settings=resolve(model.cfg, SamplingSettings(tau2=9.0)),
        prefix_cache=cache,
        prefix_owner="m",
    )
    assert cache.score_hits == 2
    fresh = sample(
        model, ids, mask, T=3, seed=0, settings=resolve(model.cfg, SamplingSettings(tau2=9.0))
    )
    torch.testing.assert_close(got.probs, fresh.probs, atol=1e-6, rtol=0)


def test_skipping_draws_gives_the_later_draws_their_numbers():
    from uqcore.nets.noise import SampleNoise

    made = SampleNoise(1, 0, 2, 3)
    made.uniform(4)
    made.uniform(5, 2)
    skipped = SampleNoise(1, 0, 2, 3)
    skipped.skip(2)
    assert made.draws == skipped.draws == 2
    torch.testing.assert_close(made.uniform(6), skipped.uniform(6), atol=0, rtol=0)


@pytest.mark.parametrize("backbone", ["word", "bert", "llama"])
@pytest.mark.parametrize("family", ["hsto", "bam", "laplace"])
def test_noiseless_features_from_the_prefix_equal_a_full_pass(family, backbone):
    """``Capture(features=True)`` with noise in the last layer only: the layers above the prefix
    run once more without noise, giving the features a full pass of their own gives."""
    from uqcore.inference.batch_predict import features_ids

    model = _model(family, backbone)
    assert usable(model, resolve(model.cfg))
    got = sample(model, IDS, MASK, T=3, seed=1, capture=Capture(features=True)).features
    want = features_ids(model, [IDS[i][MASK[i]].tolist() for i in range(len(IDS))])
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backbone", ["word", "bert", "llama"])
def test_a_posterior_from_the_last_block_samples_through_the_prefix(backbone, monkeypatch):
    """A Laplace posterior over block 2 and the head (``from_block``; the blocks below as
    :func:`uqcore.nets.posterior.drawn_blocks` says): the layers below run once for all the
    draws and give the numbers of a full pass per draw, and the draws do differ."""
    import uqcore.inference.sampling as sampling
    from uqcore.nets.posterior import drawn_blocks, posterior_of

    model = _model("laplace", backbone)
    adapters = None if backbone == "word" else {"rank": 2}  # a base's blocks: adapters drawn
    cfg = model.cfg.replace(attention={"from_block": 2, "prior_precision": 0.5}, adapters=adapters)
    torch.manual_seed(0)
    model = build_model(cfg)
    post = posterior_of(model)
    assert drawn_blocks(post.names, cfg.n_layers) == cfg.stochastic_layers == (2,)
    post.set_curvature({n: torch.rand(post.curvature(n).shape) for n in post.names})
    assert usable(model, resolve(cfg))
    fast = sample(model, IDS, MASK, T=4, seed=3, capture=Capture(features=True))
    monkeypatch.setattr(sampling, "usable", lambda *a, **k: False)  # every draw a full pass
    full = sample(model, IDS, MASK, T=4, seed=3, capture=Capture(features=True))
    torch.testing.assert_close(fast.probs, full.probs, atol=1e-6, rtol=0)
    torch.testing.assert_close(fast.features, full.features, atol=1e-5, rtol=1e-5)
    assert float((fast.probs[0] - fast.probs[1]).abs().max()) > 1e-4  # the draws differ
