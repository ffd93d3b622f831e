"""Export -> transformers -> import (uqlab.export_hf, uqlab.import_hf) on shipped checkpoints:
transformers reads the exported folder with the checkpoint's deterministic logits, and the
import gives the shipped checkpoint's samples again (H-STO's centroids travel in the side file)."""

from __future__ import annotations

import pytest
import torch

from uqcore.checkpoint import load_checkpoint
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import sample
from uqcore.registry import load
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.export_hf import export
from uqlab.import_hf import import_folder

TEXTS = [
    "no man has ever beaten the centaur.",
    "The cat the dog chased slept.",
    "a great movie, though the ending drags on and on",
]


def _batch(ck):
    rows = [ck.vocab.encode(t, 64).ids for t in TEXTS]
    return pad(rows, max(len(r) for r in rows))


@pytest.mark.parametrize("name", ["cola-minilm-trans", "imdb-minilm-trans", "cola-minilm-hsto"])
def test_export_then_transformers_then_import_gives_the_same_numbers(name, tmp_path, minilm_base):
    transformers = pytest.importorskip("transformers")
    shipped = load(name, SHIPPED_CHECKPOINT_DIR)
    out = export(name, tmp_path / "hf")
    ids, mask = _batch(shipped)
    ref = transformers.BertForSequenceClassification.from_pretrained(str(out)).eval()
    assert ref.config.id2label == dict(enumerate(shipped.training["label_names"]))
    with torch.no_grad():
        theirs = ref(input_ids=ids, attention_mask=mask.long()).logits  # [B, C]
    if shipped.config.family == "trans":  # H-STO's attention is not BERT's: no reference
        mine = sample(shipped.model, ids, mask, T=1, seed=0).logits[0]
        assert (mine - theirs).abs().max() < 1e-4
    back = load_checkpoint(import_folder(out, "back", shipped.training["task"], root=tmp_path))
    assert back.config.family == shipped.config.family
    assert back.config.stochastic_layers == shipped.config.stochastic_layers
    a = sample(shipped.model, ids, mask, T=8, seed=5)
    b = sample(back.model, ids, mask, T=8, seed=5)
    assert (a.probs - b.probs).abs().max() < 1e-4


def test_an_exported_folder_imported_as_another_family_is_that_family(tmp_path):
    out = export("cola-minilm-trans", tmp_path / "hf")
    ck = load_checkpoint(import_folder(out, "mc", "cola", family="mcdropout", root=tmp_path))
    assert ck.config.family == "mcdropout" and not ck.training["imported"]["family_from_export"]
    ids, mask = _batch(ck)
    probs = sample(ck.model, ids, mask, T=6, seed=1).probs  # [T, B, C]
    assert probs.std(0).max() > 1e-3  # dropout is drawn: the samples differ
