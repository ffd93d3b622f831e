"""Properties of the full models under the batched, seeded sampler, for every family."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch

from tests.helpers import ALL_FAMILIES, STOCHASTIC, batch, tiny_config, tiny_model
from uqcore.build import build_model
from uqcore.exceptions import ConfigError, InputError
from uqcore.inference.batch_predict import features_ids
from uqcore.inference.sampling import Capture, sample
from uqcore.nets.noise import SampleNoise
from uqcore.settings import SamplingSettings, resolve

ALL_LAYERS = Capture(layers=(0, 1), kl=True)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_attention_rows_sum_to_one_and_padding_is_zero(family):
    ids, mask = batch()
    r = sample(tiny_model(family), ids, mask, T=4, seed=0, capture=ALL_LAYERS)
    for layer in (0, 1):
        a = r.maps[layer].attention  # [T, B, H, L, L]
        assert a.shape == (4, 2, 2, 8, 8)
        assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
        assert a[:, 0, :, :, 5:].abs().max() == 0  # padded keys of row 0
    assert torch.isfinite(r.probs).all()
    assert torch.allclose(r.probs.sum(-1), torch.ones(4, 2), atol=1e-5)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_same_seed_is_bitwise_identical(family):
    ids, mask = batch()
    model = tiny_model(family)
    a = sample(model, ids, mask, T=6, seed=11, capture=ALL_LAYERS)
    b = sample(model, ids, mask, T=6, seed=11, capture=ALL_LAYERS)
    assert torch.equal(a.probs, b.probs)
    assert torch.equal(a.maps[1].attention, b.maps[1].attention)


@pytest.mark.parametrize("family", STOCHASTIC)
def test_different_seeds_differ_and_samples_vary(family):
    ids, mask = batch()
    model = tiny_model(family)
    a = sample(model, ids, mask, T=6, seed=1)
    b = sample(model, ids, mask, T=6, seed=2)
    assert a.stochastic and a.features is None  # each sample has a pass of its own
    assert not torch.equal(a.probs, b.probs)
    assert a.probs[:, :, 0].var(0).min() > 0


@pytest.mark.parametrize(
    ("family", "settings"),
    [
        ("trans", SamplingSettings()),
        ("probtrans", SamplingSettings()),
        ("mcdropout", SamplingSettings(mc_dropout=False)),
        ("bayesformer", SamplingSettings(mc_dropout=False)),
        ("sto", SamplingSettings(noise_scale=0.0)),
        ("hsto", SamplingSettings(noise_scale=0.0)),
        ("bam", SamplingSettings(bam_mode="mean")),
        ("bam", SamplingSettings(noise_scale=0.0)),
    ],
)
def test_deterministic_settings_give_zero_variance(family, settings):
    ids, mask = batch()
    model = tiny_model(family)
    settings = resolve(model.cfg, settings)
    r = sample(model, ids, mask, T=5, seed=3, settings=settings, capture=Capture(layers=(1,)))
    assert not r.stochastic
    assert r.probs.var(0).max() == 0
    assert r.maps[1].attention.var(0).max() == 0
    other = sample(model, ids, mask, T=5, seed=4, settings=settings)
    assert torch.equal(r.probs, other.probs)
    # the one pass's pooled features come along, as the model's own pass gives them
    with torch.inference_mode():
        assert torch.equal(r.features, model(ids, mask, settings).features)


@pytest.mark.parametrize("noise_from", [0, 1])
@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_features_asked_of_any_family_are_its_noiseless_pass(family, noise_from):
    """``Capture(features=True)``: the pooled features a pass of their own gives
    (``features_ids``: no noise, no dropout, the trained weights; an ensemble's members' mean),
    from the call's prefix when the noise starts above layer 0; the samples are unchanged."""
    torch.manual_seed(0)
    model = build_model(tiny_config(family).replace(stochastic_layers=tuple(range(noise_from, 2))))
    ids, mask = batch()
    plain = sample(model, ids, mask, T=3, seed=2)
    got = sample(model, ids, mask, T=3, seed=2, capture=Capture(features=True))
    assert torch.equal(got.probs, plain.probs) and torch.equal(got.logits, plain.logits)
    want = features_ids(model, [ids[i][mask[i]].tolist() for i in range(len(ids))])
    torch.testing.assert_close(got.features, want, rtol=1e-5, atol=1e-5)
    if family in STOCHASTIC:  # not asked: no second pass
        assert plain.features is None


def test_bam_computes_kl_and_prior_only_when_asked(monkeypatch):
    """Inference without capture must skip the KL and the prior network (they are not free)."""
    ids, mask = batch()
    model = tiny_model("bam")
    calls = []
    monkeypatch.setattr(
        "uqcore.kernels.bayesian.contextual_prior_logits", lambda k, w: calls.append(1)
    )
    plain = sample(model, ids, mask, T=3, seed=0)
    assert calls == [] and plain.kl is None and plain.maps == {}
    monkeypatch.undo()
    full = sample(model, ids, mask, T=3, seed=0, capture=ALL_LAYERS)
    assert full.kl is not None and full.maps[0].prior is not None
    assert torch.equal(plain.probs, full.probs)  # asking for more never changes the samples


def test_bam_noise_scale_zero_matches_mean_mode():
    ids, mask = batch()
    model = tiny_model("bam")
    zero, mean = SamplingSettings(noise_scale=0.0), SamplingSettings(bam_mode="mean")
    a = sample(model, ids, mask, T=2, seed=0, settings=resolve(model.cfg, zero))
    b = sample(model, ids, mask, T=2, seed=0, settings=resolve(model.cfg, mean))
    assert torch.allclose(a.probs, b.probs, atol=1e-6)


@pytest.mark.parametrize("family", ["sto", "hsto"])
def test_hard_mode_gives_one_hot_rows(family):
    ids, mask = batch()
    model = tiny_model(family)
    r = sample(
        model,
        ids,
        mask,
        T=3,
        seed=0,
        settings=resolve(model.cfg, SamplingSettings(hard=True)),
        capture=Capture(layers=(0,)),
    )
    assert set(r.maps[0].attention.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(r.maps[0].attention.sum(-1), torch.ones(r.maps[0].attention.shape[:-1]))
    if family == "hsto":
        assert set(r.maps[0].centroids.unique().tolist()) <= {0.0, 1.0}


@pytest.mark.parametrize("family", [*STOCHASTIC, "ensemble"])
def test_batched_call_matches_single_calls_with_same_noise(family):
    ids, mask = batch()
    model = tiny_model(family)
    cap = Capture(layers=(1,))
    together = sample(model, ids, mask, T=5, seed=9, capture=cap)
    for t in range(5):
        alone = sample(model, ids, mask, T=1, seed=9, capture=cap, first_sample=t)
        assert torch.allclose(together.probs[t], alone.probs[0], atol=1e-5)
        assert torch.allclose(together.maps[1].attention[t], alone.maps[1].attention[0], atol=1e-5)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_each_example_of_a_batch_gets_what_it_gets_alone(family):
    """Per-example noise: an example's samples do not depend on the batch around it, its row,
    or the padding (the dataset pages and the explorer show the same numbers)."""
    ids, mask = batch()  # examples of different lengths, padded
    model = tiny_model(family)
    on = SamplingSettings(mc_dropout=True)
    settings = resolve(model.cfg, on) if family == "mcdropout" else None
    together = sample(model, ids, mask, T=6, seed=4, settings=settings)
    flipped = sample(model, ids.flip(0), mask.flip(0), T=6, seed=4, settings=settings)
    for b in range(ids.shape[0]):
        n = int(mask[b].sum())
        alone = sample(
            model, ids[b : b + 1, :n], mask[b : b + 1, :n], T=6, seed=4, settings=settings
        )
        assert torch.allclose(together.probs[:, b], alone.probs[:, 0], atol=1e-6, rtol=0)
        assert torch.allclose(flipped.probs[:, -1 - b], alone.probs[:, 0], atol=1e-6, rtol=0)


@pytest.mark.parametrize("family", ["hsto", "bam", "bayesformer"])
def test_chunking_does_not_change_samples(family):
    ids, mask = batch()
    model = tiny_model(family)
    big = sample(model, ids, mask, T=7, seed=5, capture=Capture(layers=(0,), max_samples=3))
    small = sample(
        model, ids, mask, T=7, seed=5, capture=Capture(layers=(0,), max_samples=3), memory_budget=1
    )  # one sample per chunk
    assert torch.allclose(big.probs, small.probs, atol=1e-5)
    assert big.maps[0].attention.shape[0] == 3
    assert torch.allclose(big.maps[0].attention, small.maps[0].attention, atol=1e-5)


def test_capture_selects_heads_and_samples():
    ids, mask = batch()
    r = sample(
        tiny_model("hsto"),
        ids,
        mask,
        T=6,
        seed=0,
        capture=Capture(layers=(1,), heads=(1,), max_samples=2),
    )
    assert r.maps[1].attention.shape == (2, 2, 1, 8, 8)
    assert r.maps[1].centroids.shape == (2, 2, 1, 8, 3)
    assert 0 not in r.maps and r.probs.shape == (6, 2, 2)


def test_probtrans_records_attention_before_em():
    ids, mask = batch()
    model = tiny_model("probtrans")
    r = sample(model, ids, mask, T=1, seed=0, capture=Capture(layers=(0,)))
    assert not torch.allclose(r.maps[0].attention, r.maps[0].attention_before_em)
    r0 = sample(
        model,
        ids,
        mask,
        T=1,
        seed=0,
        capture=Capture(layers=(0,)),
        settings=resolve(model.cfg, SamplingSettings(em_iterations=0)),
    )
    assert torch.allclose(r0.maps[0].attention, r0.maps[0].attention_before_em, atol=1e-6)
    assert not torch.allclose(r.probs, r0.probs)


def test_bam_kl_is_nonnegative_and_its_gradient_reaches_the_prior_network():
    ids, mask = batch()
    model = tiny_model("bam")
    r = sample(model, ids, mask, T=3, seed=0, capture=ALL_LAYERS)
    assert (r.kl >= 0).all() and r.kl.shape == (3, 2)
    assert torch.allclose(
        r.kl, r.maps[0].kl_per_head.sum(-1) + r.maps[1].kl_per_head.sum(-1), rtol=1e-4
    )
    assert r.maps[0].prior.shape == (3, 2, 2, 8)
    out = model(ids, mask, resolve(model.cfg, training=True), SampleNoise(0, 0, 1, 2))
    out.kl.sum().backward()
    for layer in model.layers:
        grad = layer.attn.prior_w1.grad
        assert grad is not None and grad.abs().sum() > 0


def shared_first_block(model):
    """``model``'s members made to hold one copy of their first block's weights (member 0's),
    as a pretrained base without adapters below block 16 (SmolLM2) is shared at loading."""
    first = dict(model.members[0].layers[0].named_parameters())
    for member in model.members[1:]:
        for name, p in member.layers[0].named_parameters():
            p.data = first[name].data
    return model


@pytest.mark.parametrize("shared", [False, True])
def test_ensemble_samples_cycle_through_members_and_vmap_equals_loop(shared):
    ids, mask = batch()
    model = tiny_model("ensemble")
    model = shared_first_block(model) if shared else model
    r = sample(model, ids, mask, T=7, seed=0)
    assert r.members.tolist() == [0, 1, 2, 0, 1, 2, 0]
    with torch.no_grad():
        vm = model.together(ids, mask, resolve(model.cfg)).logits
    looped = torch.stack([m(ids, mask).logits for m in model.members]).detach()
    assert torch.allclose(vm, looped, atol=1e-5)
    assert torch.allclose(r.probs[3], torch.softmax(looped[0], -1), atol=1e-5)
    assert not torch.allclose(r.probs[0], r.probs[1])


def test_members_run_in_one_vmap_only_when_they_share_their_first_block(monkeypatch):
    """Issue 48: vmap took the manual attention path and plain matmuls for members that share
    nothing (MiniLM's adapters in all six blocks), 2.7x slower at 512 tokens than a loop."""
    ids, mask = batch()
    model = tiny_model("ensemble")
    assert not model.runs_together()
    monkeypatch.setattr(type(model), "together", lambda *a, **k: pytest.fail("vmap taken"))
    with torch.no_grad():
        model(ids, mask)  # one member after another
    monkeypatch.undo()
    shared = shared_first_block(tiny_model("ensemble"))
    assert shared.runs_together()
    monkeypatch.setattr(type(shared), "one_by_one", lambda *a, **k: pytest.fail("loop taken"))
    with torch.no_grad():
        shared(ids, mask)


def test_an_ensembles_members_share_their_stacked_weights_instead_of_a_second_copy():
    """Defect: the stacked weights vmap reads were a second copy of every member (a MiniLM
    ensemble held 520 MB instead of 260 MB in the app's checkpoint cache)."""
    ids, mask = batch()
    model = tiny_model("ensemble")
    before = sample(model, ids, mask, T=3, seed=0).probs
    params, _, _ = model._stacked()
    for i, member in enumerate(model.members):
        for name, p in member.named_parameters():
            assert p.untyped_storage().data_ptr() == params[name].untyped_storage().data_ptr()
            assert torch.equal(p, params[name][i])
    assert torch.equal(sample(model, ids, mask, T=3, seed=0).probs, before)
    loss = model(ids, mask).logits.sum()  # training still works on the members' weights
    loss.backward()
    assert all(p.grad is not None for p in model.members[0].parameters() if p.requires_grad)


def test_an_ensemble_runs_its_members_together_without_a_fallback_warning():
    """Over 128 rows the CPU linear would take oneDNN's op, which vmap cannot batch."""
    ids, mask = batch()
    model = shared_first_block(tiny_model("ensemble"))  # so that vmap runs them
    many, many_mask = ids.repeat(100, 1), mask.repeat(100, 1)  # 200 rows x 8 tokens
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = sample(model, many, many_mask, T=3, seed=0)
    assert r.probs.shape == (3, 200, 2)
    with torch.no_grad():  # a changed weight (as an optimizer step): the stacked copy follows
        model.members[0].head.bias[0] += 2.0
    moved = sample(model, many, many_mask, T=3, seed=0)
    assert not torch.allclose(moved.probs[0], r.probs[0])


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_sampling_does_not_mutate_the_model(family):
    ids, mask = batch()
    model = tiny_model(family)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    knobs = SamplingSettings(tau=0.5, tau1=3.0, tau2=9.0, noise_scale=0.5)
    sample(model, ids, mask, T=3, seed=0, capture=ALL_LAYERS, settings=resolve(model.cfg, knobs))
    assert not model.training
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"T": 0}, "T .number of samples"),
        ({"T": 10**9}, "T .number of samples"),
        ({"T": 2.5}, "T .number of samples"),
        ({"seed": -1}, "seed"),
        ({"settings": SamplingSettings(tau2=0.0)}, "tau2"),
        ({"settings": SamplingSettings(tau1=float("nan"))}, "tau1"),
        ({"settings": SamplingSettings(tau=-1.0)}, "tau"),
        ({"settings": SamplingSettings(noise_scale=float("inf"))}, "noise_scale"),
        ({"settings": SamplingSettings(em_iterations=-1)}, "em_iterations"),
        ({"settings": SamplingSettings(dropout=1.0)}, "dropout"),
        ({"capture": Capture(layers=(5,))}, "layer"),
        ({"capture": Capture(heads=(9,))}, "head"),
    ],
)
def test_bad_settings_raise_clear_errors(kwargs, message):
    """Bad knobs are refused where a request's settings are resolved, before any sampling."""
    ids, mask = batch()
    model = tiny_model("hsto")
    args = {"T": 2, "seed": 0, **kwargs}
    with pytest.raises(ConfigError, match=message):
        if "settings" in args:
            args["settings"] = resolve(model.cfg, args["settings"])
        sample(model, ids, mask, **args)


def test_unresolved_settings_are_refused():
    """The sampler takes settings in one form: resolved (:func:`uqcore.settings.resolve`)."""
    ids, mask = batch()
    with pytest.raises(ConfigError, match="must be ForwardSettings.*resolve"):
        sample(tiny_model("sto"), ids, mask, T=2, seed=0, settings=SamplingSettings(tau2=2.0))


def test_mc_dropout_on_an_ensemble_is_refused():
    ids, mask = batch()
    model = tiny_model("ensemble")
    with pytest.raises(ConfigError, match="ensemble"):
        sample(
            model,
            ids,
            mask,
            T=2,
            seed=0,
            settings=resolve(model.cfg, SamplingSettings(mc_dropout=True)),
        )


def test_bad_batches_raise_input_errors():
    model = tiny_model("trans")
    ids, mask = batch()
    with pytest.raises(InputError, match="vocabulary"):
        sample(model, ids + 100, mask, T=1, seed=0)
    long_ids = torch.full((1, 40), 5)
    with pytest.raises(InputError, match="at most 16"):
        sample(model, long_ids, long_ids != 0, T=1, seed=0)
    with pytest.raises(InputError, match="CLS"):
        sample(model, ids, torch.zeros_like(mask), T=1, seed=0)


def test_extreme_temperatures_never_give_nan():
    ids, mask = batch()
    for family in ("sto", "hsto", "trans"):
        for tau in (1e-4, 1e4):
            model = tiny_model(family)
            s = resolve(model.cfg, SamplingSettings(tau=tau, tau1=tau, tau2=tau))
            r = sample(model, ids, mask, T=3, seed=0, settings=s, capture=ALL_LAYERS)
            assert torch.isfinite(r.probs).all() and torch.isfinite(r.maps[0].attention).all()


def test_tau_changes_the_stochastic_samples():
    ids, mask = batch()
    model = tiny_model("sto")
    a = sample(
        model, ids, mask, T=20, seed=0, settings=resolve(model.cfg, SamplingSettings(tau2=0.5))
    )
    b = sample(
        model, ids, mask, T=20, seed=0, settings=resolve(model.cfg, SamplingSettings(tau2=50.0))
    )
    assert not torch.allclose(a.probs, b.probs)


VARIANTS = [
    ("hsto", {"centroid_side": "query"}),
    ("hsto", {"centroids_per_head": True}),
    ("hsto", {"centroid_side": "query", "centroids_per_head": True, "hard": True}),
    ("bam", {"dist": "lognormal"}),
    ("bam", {"prior": "fixed"}),
    ("bam", {"dist": "lognormal", "prior": "fixed"}),
]


@pytest.mark.parametrize(("family", "attention"), VARIANTS)
def test_family_variants_keep_every_property(family, attention):
    ids, mask = batch()
    model = tiny_model(family, **attention)
    cap = Capture(layers=(0, 1), kl=True)
    together = sample(model, ids, mask, T=4, seed=2, capture=cap)
    a = together.maps[1].attention
    assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
    assert a[:, 0, :, :, 5:].abs().max() == 0
    alone = sample(model, ids, mask, T=1, seed=2, capture=cap, first_sample=3)
    assert torch.allclose(together.probs[3], alone.probs[0], atol=1e-5)
    assert not torch.equal(together.probs, sample(model, ids, mask, T=4, seed=3).probs)
    if family == "bam":
        assert (together.kl >= 0).all()
        model.train()
        out = model(ids, mask, resolve(model.cfg, training=True), SampleNoise(0, 0, 1, 2))
        out.kl.sum().backward()  # the KL stays in the graph for every variant
        assert model.layers[0].attn.qkv.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_capturing_the_last_layer_never_changes_the_prediction(family):
    """The last layer attends from [CLS] only unless its other rows are asked for; those come
    from a side noise stream, so the prediction is bitwise the same either way."""
    ids, mask = batch()
    model = tiny_model(family)
    plain = sample(model, ids, mask, T=4, seed=5)
    full = sample(model, ids, mask, T=4, seed=5, capture=ALL_LAYERS)
    assert torch.equal(plain.probs, full.probs)
    a = full.maps[1].attention  # [T, B, H, L, L]: every row of the last layer is a distribution
    assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)


@pytest.mark.parametrize("side", ["key", "query"])
def test_hsto_last_layer_capture_keeps_one_centroid_sample(side):
    ids, mask = batch()
    r = sample(tiny_model("hsto", centroid_side=side), ids, mask, T=3, seed=2, capture=ALL_LAYERS)
    p = r.maps[1].centroids  # [T, B, H, L, c]: per key (key side) or per query (query side)
    assert p.shape == (3, 2, 2, 8, 3)
    assert torch.allclose(p.sum(-1), torch.ones(p.shape[:-1]), atol=1e-5)


def test_bam_kl_covers_the_attention_rows_the_prediction_uses():
    """All rows of earlier layers, only [CLS] in the last one (its other rows are not latent
    variables of the classifier), whether or not the maps are captured."""
    from uqcore.kernels import bam_attention
    from uqcore.kernels.bayesian import contextual_prior_logits

    ids, mask = batch()
    model = tiny_model("bam")
    s = dataclasses.replace(resolve(model.cfg), need_kl=True)
    out = model(ids, mask, s, None)
    layer = model.layers[1].attn
    # rebuild layer 1's input exactly as the model does
    x = model._embed(ids, s, None)
    x, _, kl0 = model.layers[0](x, mask, s, None)
    q, k, v = layer._project(model.layers[1].norm1(x), s, None)
    a = layer.cfg.attention
    weights = {"prior_w1": layer.prior_w1, "prior_b1": layer.prior_b1, "prior_w2": layer.prior_w2}
    ko = bam_attention(
        q[:, :, :1],
        k,
        v,
        mask,
        query_mask=mask[:, :1],
        dist=a.dist,
        prior_logits=contextual_prior_logits(k, weights),
        shape_k=a.weibull_k,
        sigma=a.lognormal_sigma,
        beta=a.prior_beta,
        prior_sigma=a.prior_sigma,
        sample=False,
        noise_scale=0.0,
        noise=None,
        need_kl=True,
        need_extras=True,
    )
    expected = kl0 + ko.maps.kl_per_head.sum(-1)  # [N]
    assert torch.allclose(out.kl, expected, rtol=1e-5, atol=1e-5)
    captured = model(ids, mask, s, None, capture=(0, 1))
    assert torch.equal(captured.kl, out.kl)


def test_probtrans_without_em_attends_from_cls_only_and_captures_every_row():
    """Without EM (training, or em_iterations=0) the Probabilistic Transformer is plain attention,
    so its last layer needs only the [CLS] row; captured maps still hold every row."""
    from uqcore.nets.layers import widest_query_rows

    ids, mask = batch()
    model = tiny_model("probtrans")
    no_em = resolve(model.cfg, SamplingSettings(em_iterations=0))
    plain = sample(model, ids, mask, T=2, seed=0, settings=no_em)
    full = sample(model, ids, mask, T=2, seed=0, settings=no_em, capture=ALL_LAYERS)
    assert torch.equal(plain.probs, full.probs)
    before, after = full.maps[1].attention_before_em, full.maps[1].attention  # [T, B, H, L, L]
    assert before.shape == after.shape == (2, 2, 2, 8, 8)
    assert torch.allclose(before, after, atol=1e-6)
    one_layer = dataclasses.replace(model.cfg, n_layers=1)
    without = resolve(one_layer, SamplingSettings(em_iterations=0))
    with_em = resolve(one_layer, SamplingSettings(em_iterations=3))
    assert widest_query_rows(one_layer, 512, False, without) == 1
    assert widest_query_rows(one_layer, 512, False, with_em) == 512
