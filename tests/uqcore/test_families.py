"""The family table (uqcore.families): consistent entries, and a new family is one entry."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from tests.helpers import STOCHASTIC, batch
from uqcore import families
from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.inference.sampling import Capture, sample
from uqcore.kernels.common import KernelOut, KernelRequest, attend
from uqcore.nets.maps import MAP_NAMES, LayerMaps
from uqcore.settings import KNOB_NAMES, SamplingSettings, resolve


@pytest.mark.parametrize("name", families.FAMILY_NAMES)
def test_every_entry_is_consistent(name):
    spec = families.get_family(name)
    assert spec.name == name and spec.title
    assert dataclasses.is_dataclass(spec.params) and spec.params.__dataclass_params__.frozen
    assert set(spec.knobs) <= set(KNOB_NAMES)
    assert set(spec.maps) <= set(MAP_NAMES) - {"attention"}  # every kernel fills attention
    assert spec.member_family is None or not families.get_family(spec.member_family).ensemble
    assert set(spec.controls()) <= set(families.KNOBS)
    for knob in families.KNOBS:
        if not spec.reads(knob):
            assert families.disabled_reason(spec, knob).startswith("Disabled: ")


@pytest.mark.parametrize("name", families.FAMILY_NAMES)
def test_every_entry_says_what_one_sample_is(name):
    """Issue 34: the histogram said "fresh attention noise" for every family, a deterministic
    one, MC dropout and an ensemble's members included."""
    spec = families.get_family(name)
    assert spec.sample_is.strip() and spec.sample_is.endswith("."), name
    assert spec.can_vary == (name in STOCHASTIC or spec.ensemble)
    if not spec.can_vary:  # deterministic whatever the settings: it says so
        assert "identical" in spec.sample_is
    assert len({f.sample_is for f in families.FAMILIES.values()}) == len(families.FAMILIES)


def test_unknown_family_names_the_known_ones():
    with pytest.raises(ConfigError, match="hsto"):
        families.get_family("gpt")
    assert families.title("gpt") == "gpt"  # a broken folder's family is shown as it is


def test_a_checkpoint_config_carries_only_its_family_fields():
    """H-STO stores its centroids and temperatures; nothing of BAM or EM."""
    hsto = ModelConfig(family="hsto").to_dict()
    assert set(hsto["attention"]) == {"n_centroids", "centroid_side", "centroids_per_head"}
    bam = ModelConfig(family="bam", inference=SamplingSettings(bam_mode="mean")).to_dict()
    assert "n_centroids" not in bam["attention"] and bam["inference"] == {"bam_mode": "mean"}
    with pytest.raises(ConfigError, match="not read by a 'hsto' model"):
        ModelConfig(family="hsto", inference=SamplingSettings(em_iterations=2)).validate()


# --- a new family: one kernel and one entry, nothing else -----------------------------------
@dataclasses.dataclass(frozen=True)
class UniformParams:
    """A toy family: every query attends uniformly to the real keys, times a learned scale."""

    init: float = 1.0


def bind_uniform(params: UniformParams):
    def kernel(q, k, v, mask, s, noise, weights, req: KernelRequest) -> KernelOut:
        w = mask[:, None, None, :].to(q.dtype).expand(q.shape[0], q.shape[1], q.shape[2], -1)
        w = w / w.sum(-1, keepdim=True)  # [N, H, Lq, L]: rows sum to 1 over real keys
        return KernelOut(attend(w, v), LayerMaps(attention=w))

    return kernel


def test_a_new_family_is_one_entry(monkeypatch):
    spec = families.FamilySpec(
        "uniform",
        "Uniform attention",
        UniformParams,
        bind_uniform,
        weights=lambda p, h, d: {"scale": torch.nn.Parameter(torch.full((h, 1, 1), p.init))},
        knobs=(),
    )
    monkeypatch.setitem(families.FAMILIES, "uniform", spec)
    cfg = ModelConfig(
        family="uniform",
        vocab_size=60,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
        max_len=16,
        attention=UniformParams(init=2.0),
    )
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg  # serialises like any family
    model = build_model(cfg)
    assert "layers.0.attn.scale" in model.state_dict()
    ids, mask = batch()
    r = sample(model, ids, mask, T=3, seed=0, capture=Capture(layers=(0, 1)))
    a = r.maps[0].attention  # [T, B, H, L, L]
    assert torch.allclose(a[0, 0, 0, 0, :5], torch.full((5,), 0.2))
    assert not r.stochastic and not resolve(cfg).dropout_on
    assert spec.controls() == ("tau1", "tau2", "noise_scale")  # shown, all disabled
    assert all(not spec.reads(k) for k in spec.controls())
