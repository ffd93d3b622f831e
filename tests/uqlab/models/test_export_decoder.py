"""Export of decoder checkpoints (uqlab.models.export_decoder through uqlab.export_hf): tiny random
Llama, Qwen2 (grouped-query) and GPT-2 classifiers imported, exported and read by transformers with
the checkpoint's deterministic logits, left and right padding; exported with a stochastic family and
imported back with the same samples at the same reading length; the shipped SmolLM2 adapters
merged into a LlamaForSequenceClassification that transformers reads (needs the converted base)."""

from __future__ import annotations

import json

import pytest
import torch

from tests.hf_tiny import DECODERS, tiny_decoder_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import sample
from uqcore.registry import load
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.export_hf import export
from uqlab.import_hf import import_folder
from uqlab.models.export_decoder import classifier_pad_id, decoder_hf_config, decoder_split_tensors

tf = pytest.importorskip("transformers")
TEXTS = ("the cat sat on the mat .", "what a terrible , boring film !", "fine")


def _batch(ck, left: bool = False):
    """The texts padded to one length (right padding; ``left``: the padding first)."""
    rows = [ck.vocab.encode(t, ck.read_len).ids for t in TEXTS]
    ids, mask = pad(rows, max(len(r) for r in rows))
    ids = ids.masked_fill(~mask, classifier_pad_id(ck))  # transformers finds the last real token
    if left:
        order = torch.argsort((~mask).long(), dim=1, descending=True, stable=True)  # pads first
        ids, mask = ids.gather(1, order), mask.gather(1, order)
    return ids, mask


def _theirs(folder, ids, mask):
    ref = tf.AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    with torch.no_grad():  # positions as the sampler counts them: real tokens before each one
        pos = (mask.long().cumsum(-1) - 1).clamp(min=0)
        return ref(input_ids=ids, attention_mask=mask.long(), position_ids=pos).logits


@pytest.fixture(scope="module", params=DECODERS)
def folder(request, tmp_path_factory):
    return tiny_decoder_folder(request.param, tmp_path_factory.mktemp(request.param) / "hf")


@pytest.mark.parametrize("left", [False, True], ids=["right", "left"])
def test_an_exported_decoder_gives_transformers_its_logits(folder, tmp_path, left):
    ck = load_checkpoint(import_folder(folder, "dec", "cola", family="trans", root=tmp_path))
    out = export("dec", tmp_path / "out", root=tmp_path)
    doc = json.loads((out / "config.json").read_text())
    assert doc["architectures"] == json.loads((folder / "config.json").read_text())["architectures"]
    assert doc["pad_token_id"] == ck.vocab.pad_id  # no template token: the folder's own
    ids, mask = _batch(ck, left)
    with torch.no_grad():  # the model itself reads either padding side (the sampler: right)
        mine = ck.model(ids, mask).logits  # [B, C]
    torch.testing.assert_close(_theirs(out, ids, mask), mine, atol=1e-4, rtol=0)


def test_the_split_tensors_are_the_folders_own(folder, tmp_path):
    """Importing then exporting gives back the file's tensors, Q/K/V of grouped heads cut at
    their own widths and GPT-2's Conv1D weights transposed back."""
    from safetensors.torch import load_file

    ck = load_checkpoint(import_folder(folder, "dec", "cola", family="trans", root=tmp_path))
    hf, own = decoder_split_tensors(ck)
    stored = load_file(str(folder / "model.safetensors"))
    theirs = {k: v for k, v in stored.items() if ".attn.bias" not in k}  # GPT-2's mask buffer
    assert own == {} and set(hf) == set(theirs)
    for key, value in theirs.items():
        torch.testing.assert_close(hf[key], value.float(), atol=0, rtol=0)


def test_a_stochastic_export_imports_back_with_its_samples_and_reading_length(folder, tmp_path):
    ck = load_checkpoint(import_folder(folder, "dec", "cola", family="bam", root=tmp_path))
    doc = json.loads((ck.path / "config.json").read_text())
    doc["training"]["config"] = {"max_len": 12}  # the length a trained checkpoint records
    (ck.path / "config.json").write_text(json.dumps(doc))
    out = export("dec", tmp_path / "out", root=tmp_path)
    back = load_checkpoint(import_folder(out, "back", "cola", root=tmp_path))
    assert back.config.family == "bam" and back.read_len == 12
    assert back.config.stochastic_layers == ck.config.stochastic_layers
    ids, mask = _batch(back)
    a = sample(load_checkpoint(ck.path).model, ids, mask, 8, seed=3)
    b = sample(back.model, ids, mask, 8, seed=3)
    assert float((a.probs - b.probs).abs().max()) < 1e-5


def test_a_base_of_another_shape_is_refused(folder, tmp_path):
    ck = load_checkpoint(import_folder(folder, "dec", "cola", family="trans", root=tmp_path))
    other = json.loads((folder / "config.json").read_text())
    key = "n_layer" if other["model_type"] == "gpt2" else "num_hidden_layers"
    other[key] += 1
    with pytest.raises(UQError, match="not the one this checkpoint was built on"):
        decoder_hf_config(ck, other, ["a", "b"])


@pytest.mark.parametrize("name", ["cr-smollm2-trans", "cr-smollm2-hsto"])
def test_a_shipped_smollm2_checkpoint_exports_and_imports_back(name, tmp_path):
    shipped = load(name, SHIPPED_CHECKPOINT_DIR)
    out = export(name, tmp_path / "hf")
    ids, mask = _batch(shipped)
    if shipped.config.family == "trans":  # H-STO's attention is not Llama's: no reference
        mine = sample(shipped.model, ids, mask, 1, seed=0).logits[0]
        torch.testing.assert_close(_theirs(out, ids, mask), mine, atol=1e-4, rtol=0)
    assert json.loads((out / "config.json").read_text())["pad_token_id"] == 0  # <|endoftext|>
    back = load_checkpoint(import_folder(out, "back", "cr", root=tmp_path))
    assert back.config.family == shipped.config.family and back.read_len == shipped.read_len
    a = sample(shipped.model, ids, mask, 6, seed=5)
    b = sample(back.model, ids, mask, 6, seed=5)
    assert float((a.probs - b.probs).abs().max()) < 1e-4
