"""The decoder backbones against ``transformers`` (golden, tiny random models built here, nothing
downloaded): Llama (grouped-query), Qwen2 (grouped-query, Q/K/V biases), Mistral and GPT-2
(fused Conv1D c_attn). Logits and every layer's attention within 1e-4 with right and left
padding (three rows of different lengths); the deterministic family equals the model, and the
training-free stochastic families at zero noise do too."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.hf_tiny import LLAMA_SHAPE
from uqcore.build import attach_base, build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.families import FAMILY_NAMES, get_family
from uqcore.nets.noise import SampleNoise, example_keys
from uqcore.readers.decoder_weights import read_hf_decoder_config
from uqcore.settings import SamplingSettings, resolve

tf = pytest.importorskip("transformers")

TOL = 1e-4
LENGTHS = (7, 4, 2)  # three rows of different lengths: padding on either side


def _hf(arch: str):
    common = dict(vocab_size=97, num_labels=2, pad_token_id=0)
    if arch == "gpt2":
        cfg = tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, **common)
        return tf.GPT2ForSequenceClassification, cfg
    shape = dict(**LLAMA_SHAPE, **common)
    kinds = {
        "llama": (tf.LlamaConfig, tf.LlamaForSequenceClassification),
        "qwen2": (tf.Qwen2Config, tf.Qwen2ForSequenceClassification),
        "mistral": (tf.MistralConfig, tf.MistralForSequenceClassification),
    }
    config, model = kinds[arch]
    return model, config(**shape)


ARCHS = ("llama", "qwen2", "mistral", "gpt2")


@pytest.fixture(scope="module", params=ARCHS)
def folder(request, tmp_path_factory):
    """A tiny random ``*ForSequenceClassification`` saved as safetensors; biases made non-zero
    (Qwen2's are zeros at initialisation, which would hide a missing one)."""
    model_cls, cfg = _hf(request.param)
    torch.manual_seed(0)
    model = model_cls(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name or name.startswith("score"):
                p.add_(torch.randn_like(p) * 0.2)
    out = tmp_path_factory.mktemp(request.param) / "hf"
    model.save_pretrained(out, safe_serialization=True)
    return out


def _batch(side: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    length = max(LENGTHS)
    ids = torch.zeros(len(LENGTHS), length, dtype=torch.long)  # pad id 0
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for i, n in enumerate(LENGTHS):
        cols = slice(0, n) if side == "right" else slice(length - n, length)
        ids[i, cols] = torch.randint(1, 97, (n,), generator=g)
        mask[i, cols] = True
    return ids, mask


def _theirs(folder, ids, mask):
    ref = tf.AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager")
    ref.eval()
    position_ids = (mask.long().cumsum(-1) - 1).clamp(min=0)  # what generate() passes
    with torch.no_grad():
        out = ref(
            input_ids=ids,
            attention_mask=mask.long(),
            position_ids=position_ids,
            output_attentions=True,
        )
    return out.logits, out.attentions


def _ours(folder, family="trans"):
    cfg = read_hf_decoder_config(folder, family)
    model = build_model(cfg)
    attach_base(model, folder)
    return model


def _attention_error(ours, theirs, mask) -> float:
    real = mask[:, None, :, None] & mask[:, None, None, :]  # [B, 1, L, L] real pairs
    return float((ours - theirs).masked_fill(~real, 0).abs().max())


@pytest.mark.parametrize("side", ["right", "left"])
def test_logits_and_attention_equal_transformers(folder, side):
    ids, mask = _batch(side)
    logits, attentions = _theirs(folder, ids, mask)
    model = _ours(folder)
    with torch.no_grad():
        out = model(ids, mask, capture=range(model.cfg.n_layers))
    err = float((out.logits - logits).abs().max())
    errs = [_attention_error(out.maps[i].attention, a, mask) for i, a in enumerate(attentions)]
    print(f"{folder.parent.name} {side}: logits {err:.2e}, attention {max(errs):.2e}")
    assert err < TOL
    assert max(errs) < TOL
    upper = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).triu(1)  # j > i
    assert float(out.maps[0].attention[..., upper].abs().max()) == 0.0  # causal


def test_left_and_right_padding_give_each_row_its_own_answer(folder):
    model = _ours(folder)
    with torch.no_grad():
        right = model(*_batch("right")).logits
        left = model(*_batch("left")).logits
        alone = torch.cat([model(*_row(i)).logits for i in range(len(LENGTHS))])
    assert (right - left).abs().max() < TOL
    assert (right - alone).abs().max() < TOL


def _row(i):
    ids, mask = _batch("right")
    n = LENGTHS[i]
    return ids[i : i + 1, :n], mask[i : i + 1, :n]


def test_rotary_attention_ignores_how_positions_are_counted(folder):
    """Rotary scores depend on position differences: Hugging Face's default positions (padding
    counted) give the same numbers on a left-padded batch. GPT-2's learned ones do not."""
    if folder.parent.name.startswith("gpt2"):
        pytest.skip("learned absolute positions")
    ids, mask = _batch("left")
    ref = tf.AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager")
    with torch.no_grad():
        theirs = ref.eval()(input_ids=ids, attention_mask=mask.long()).logits
        ours = _ours(folder)(ids, mask).logits
    assert (ours - theirs).abs().max() < TOL


@pytest.mark.parametrize(
    "family, zero",
    [
        ("sto", SamplingSettings(noise_scale=0.0)),
        ("bam", SamplingSettings(noise_scale=0.0)),
        ("mcdropout", SamplingSettings(dropout=0.0)),
    ],
)
def test_training_free_families_are_the_model_at_zero_noise(folder, family, zero):
    ids, mask = _batch("left")
    logits, attentions = _theirs(folder, ids, mask)
    model = _ours(folder, family)
    t, b = 3, ids.shape[0]
    rows, rows_mask = ids.repeat(t, 1), mask.repeat(t, 1)  # sample-major copies

    def run(settings):
        noise = SampleNoise(5, 0, t, b, keys=example_keys(ids, mask))
        with torch.no_grad():
            return model(rows, rows_mask, settings, noise, capture=(0,), repeats=t)

    still = run(resolve(model.cfg, zero))
    assert (still.logits - logits.repeat(t, 1)).abs().max() < TOL
    first = attentions[0].repeat(t, 1, 1, 1)
    assert _attention_error(still.maps[0].attention, first, rows_mask) < TOL
    if model.cfg.spec.noisy(resolve(model.cfg)):  # the default settings do draw noise
        noisy = run(resolve(model.cfg)).logits.view(t, b, -1)
        assert (noisy[0] - noisy[1]).abs().max() > 1e-6
        upper = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool).triu(1)
        assert float(run(resolve(model.cfg)).maps[0].attention[..., upper].abs().max()) == 0.0


def test_loading_is_strict(folder, tmp_path):
    """A missing tensor, an unexpected one and a wrong shape are each refused by name."""
    cfg = read_hf_decoder_config(folder)

    def broken(change) -> str:
        out = tmp_path / f"b{len(list(tmp_path.iterdir()))}"
        shutil.copytree(folder, out)
        tensors = load_file(str(out / "model.safetensors"))
        change(tensors)
        save_file(tensors, str(out / "model.safetensors"))
        with pytest.raises(CheckpointError) as err:
            attach_base(build_model(cfg), out)
        return str(err.value)

    assert "lacks" in broken(lambda t: t.pop("score.weight"))
    assert "does not" in broken(lambda t: t.update(extra=torch.zeros(2)))
    key = next(k for k in sorted(load_file(str(folder / "model.safetensors"))) if "mlp" in k)
    assert "does not fit" in broken(lambda t: t.update({key: t[key][..., :3].clone()}))


@pytest.mark.parametrize("backbone", ["llama", "gpt2"])
@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_every_family_runs_causally_in_a_decoder(family, backbone):
    """Each family's kernel on the causal scores: finite logits, no weight on a later key."""
    extra = {"backbone_params": {"n_kv_heads": 2}} if backbone == "llama" else {}
    cfg = ModelConfig.from_dict(
        {
            "family": family,
            "backbone": backbone,
            "vocab_size": 50,
            "max_len": 16,
            "n_layers": 2,
            "n_heads": 4,
            "d_model": 32,
            "d_ff": 64,
            "ensemble_size": 3 if get_family(family).ensemble else 1,
            **extra,
        }
    )
    model = build_model(cfg)
    ids, mask = torch.randint(1, 50, (2, 6)), torch.ones(2, 6, dtype=torch.bool)
    mask[1, :2] = False  # left padding
    s = dataclasses.replace(resolve(cfg), need_kl=cfg.spec.has_kl)
    with torch.no_grad():
        out = model(ids, mask, s, SampleNoise(0, 0, 1, 2), capture=(0, 1))
    assert bool(torch.isfinite(out.logits).all())
    assert out.kl is None or bool(torch.isfinite(out.kl).all())
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert float(out.maps[1].attention[..., upper].abs().max()) == 0.0


def test_models_on_one_base_share_its_tensors(folder):
    """Two models loaded for inference from one base file hold its tensors once (the same
    storage), give the same logits, and the shared bytes are what the app's cache leaves out."""
    from uqcore.readers.base_model import shared_bytes

    first, second = _ours(folder), _ours(folder, "sto")
    a, b = dict(first.named_parameters()), dict(second.named_parameters())
    name = "layers.1.ff1.weight"
    assert a[name].data_ptr() == b[name].data_ptr()
    assert a[name] is not b[name]  # own Parameter objects: moving one leaves the other alone
    total = sum(p.numel() * p.element_size() for p in second.parameters())
    assert 0 < shared_bytes(second) <= total
    ids, mask = _batch("right")
    with torch.no_grad():
        torch.testing.assert_close(first(ids, mask).logits, second(ids, mask).logits)


@pytest.mark.parametrize("side", ["right", "left"])
def test_a_classifier_reads_the_token_transformers_reads_when_texts_end_in_the_pad_id(folder, side):
    """Every architecture's ``*ForSequenceClassification`` reads the rightmost token that is
    not its ``pad_token_id``: rows that end in that id (a template appending it) are read one
    token early. ``pool_skip_id`` (what an import sets from the folder) reads the same token;
    without it the last real token is read (the classifiers trained here)."""
    from uqcore.readers.decoder_weights import decoder_pool_skip_id

    ids, mask = _batch(side)
    last = (torch.arange(ids.shape[1]) * mask.long()).argmax(-1)  # [B]
    ids[torch.arange(len(LENGTHS)), last] = 0  # every text ends in the pad id 0
    logits, _ = _theirs(folder, ids, mask)
    model = _ours(folder)
    bp = dataclasses.replace(model.cfg.backbone_params, pool_skip_id=decoder_pool_skip_id(folder))
    skipping = build_model(model.cfg.replace(backbone_params=bp))
    attach_base(skipping, folder)
    with torch.no_grad():
        read = skipping(ids, mask).logits
        plain = model(ids, mask).logits
    assert bp.pool_skip_id == 0
    assert float((read - logits).abs().max()) < TOL
    assert float((plain - logits).abs().max()) > 1e-3  # the last real token is another reading
