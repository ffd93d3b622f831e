"""Import of Hugging Face classifier folders (uqlab.import_hf): golden tests against
``transformers`` for BERT, RoBERTa and DistilBERT tiny random models (logits and attention maps),
the training-free families at zero noise, and every hostile folder refused with its message."""

from __future__ import annotations

import pytest
import torch

from tests.hf_tiny import ARCHS, reference, tiny_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.predict import pad
from uqcore.sampling import Capture, sample
from uqcore.settings import SamplingSettings
from uqlab.import_hf import import_folder

pytest.importorskip("transformers")

TEXTS = ["the cat sat on the mat .", "a great movie", "no man has ever beaten the centaur ."]


@pytest.fixture(scope="module", params=ARCHS)
def folder(request, tmp_path_factory):
    return tiny_folder(request.param, tmp_path_factory.mktemp(request.param) / "hf")


def _batch(ck, texts=TEXTS):
    rows = [ck.vocab.encode(t, ck.config.max_len).ids for t in texts]
    return pad(rows, max(len(r) for r in rows))


def _theirs(folder, ids, mask):
    ref = reference(folder)
    with torch.no_grad():
        out = ref(input_ids=ids, attention_mask=mask.long(), output_attentions=True)
    return out.logits, out.attentions


def test_logits_and_attention_equal_transformers(folder, tmp_path):
    ck = load_checkpoint(import_folder(folder, "t", "cola", family="trans", root=tmp_path))
    ids, mask = _batch(ck)
    assert not mask.all()  # padding is part of the test
    logits, attentions = _theirs(folder, ids, mask)
    layers = tuple(range(ck.config.n_layers))
    res = sample(ck.model, ids, mask, T=1, seed=0, capture=Capture(layers=layers))
    assert (res.logits[0] - logits).abs().max() < 1e-4
    for layer, theirs in enumerate(attentions):  # [B, H, L, L]
        ours = res.maps[layer].attention[0]  # [B, H, L, L] of sample 0
        real = mask[:, None, :, None] & mask[:, None, None, :]
        assert (ours - theirs).masked_fill(~real, 0).abs().max() < 1e-4


@pytest.mark.parametrize("family, zero", [
    ("sto", SamplingSettings(noise_scale=0.0)),
    ("bam", SamplingSettings(noise_scale=0.0)),
    ("mcdropout", SamplingSettings(dropout=0.0)),
])  # fmt: skip
def test_training_free_families_are_the_model_at_zero_noise(folder, tmp_path, family, zero):
    ck = load_checkpoint(import_folder(folder, family, "cola", family=family, root=tmp_path))
    ids, mask = _batch(ck)
    logits, _ = _theirs(folder, ids, mask)
    still = sample(ck.model, ids, mask, T=4, settings=zero, seed=3).logits  # [T, B, C]
    assert (still - logits).abs().max() < 1e-4
    noisy = sample(ck.model, ids, mask, T=4, seed=3).logits
    assert (noisy[0] - noisy[1]).abs().max() > 1e-6  # the default settings do draw noise
