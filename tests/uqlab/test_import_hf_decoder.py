"""Importing a decoder classifier (Llama, Qwen2, GPT-2 folders, tiny and random, made here):
the checkpoint reads each text as the folder's own tokenizer does (Llama's template adds <s>,
Qwen2's and GPT-2's nothing), and its deterministic form gives transformers' logits; a
stochastic form at its trained settings samples with causal maps; a decoder with a head of the
wrong size or another architecture is refused."""

from __future__ import annotations

import json

import pytest
import torch

from tests.hf_tiny import DECODERS, tiny_decoder_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import CheckpointError
from uqcore.inference.sampling import Capture, sample
from uqlab.import_hf import import_folder, inspect

tf = pytest.importorskip("transformers")
TEXTS = ("the cat sat on the mat .", "what a terrible , boring film !")


@pytest.fixture(scope="module", params=DECODERS)
def folder(request, tmp_path_factory):
    return tiny_decoder_folder(request.param, tmp_path_factory.mktemp(request.param) / "hf")


def test_the_deterministic_import_gives_transformers_logits_on_its_own_tokens(folder, tmp_path):
    from tokenizers import Tokenizer

    out = import_folder(folder, "dec", "cola", family="trans", root=tmp_path)
    ck = load_checkpoint(out)
    assert ck.config.backbone in ("llama", "qwen2", "gpt2")
    theirs_tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ref = tf.AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    for text in TEXTS:
        enc = ck.vocab.encode(text, ck.config.max_len)
        assert enc.ids == theirs_tok.encode(text).ids, text  # the folder's template, no more
        ids = torch.tensor([enc.ids])
        mask = torch.ones_like(ids, dtype=torch.bool)
        ours = sample(ck.model, ids, mask, 1, seed=0).logits[0]
        with torch.no_grad():
            want = ref(input_ids=ids).logits
        torch.testing.assert_close(ours, want, atol=1e-4, rtol=0)
    held = ck.vocab.held
    assert held == ((1, 0) if ck.config.backbone == "llama" else (0, 0))


def test_a_stochastic_import_samples_causal_maps(folder, tmp_path):
    out = import_folder(folder, "dec-sto", "cola", family="sto", root=tmp_path)
    ck = load_checkpoint(out)
    enc = ck.vocab.encode(TEXTS[0], ck.config.max_len)
    ids = torch.tensor([enc.ids])
    mask = torch.ones_like(ids, dtype=torch.bool)
    got = sample(ck.model, ids, mask, 4, seed=1, capture=Capture(layers=(1,)))
    att = got.maps[1].attention  # [T, 1, H, L, L]
    n = ids.shape[1]
    upper = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert float(att[..., upper].abs().max()) == 0.0
    assert json.loads((out / "config.json").read_text())["training"]["imported"]["architecture"]


def test_a_head_of_the_wrong_size_is_refused(tmp_path):
    folder = tiny_decoder_folder("llama", tmp_path / "hf")
    doc = json.loads((folder / "config.json").read_text())
    doc["id2label"] = {"0": "a", "1": "b", "2": "c"}
    doc["label2id"] = {"a": 0, "b": 1, "c": 2}
    (folder / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="score.weight"):
        inspect(folder)
    doc["model_type"] = "t5"
    (folder / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="LlamaForSequenceClassification"):
        inspect(folder)


def test_without_a_family_a_model_without_dropout_gets_sto(folder, tmp_path):
    """MC dropout at Llama's and Qwen2's attention_dropout of 0 would add no noise."""
    out = import_folder(folder, "dec-default", "cola", root=tmp_path)
    ck = load_checkpoint(out)
    want = "mcdropout" if ck.config.backbone == "gpt2" else "sto"  # GPT-2: resid_pdrop 0.1
    assert ck.config.family == want


def test_a_pad_id_the_template_appends_is_skipped_as_transformers_skips_it(tmp_path):
    """The SmolLM2 base pads with ``<|im_end|>``, which its template closes every text with: a
    classifier fine-tuned on those defaults reads the token before it (transformers' rule, the
    rightmost token that is not the pad id). The import reads the same token, in a right-padded
    batch too, and its export keeps that pad id; reading the last real token would differ."""
    from uqcore.nets.decoder import last_real
    from uqlab.models.export_decoder import classifier_pad_id

    folder = tiny_decoder_folder("llama", tmp_path / "hf", pad_closes=True)
    out = import_folder(folder, "dec-closed", "cola", family="trans", root=tmp_path)
    ck = load_checkpoint(out)
    end = ck.vocab.template()[2]
    pad = json.loads((folder / "config.json").read_text())["pad_token_id"]
    assert end == [pad] and ck.vocab.pad_id == pad  # the template appends the pad id
    assert ck.config.backbone_params.pool_skip_id == pad
    encs = [ck.vocab.encode(t, ck.config.max_len).ids for t in (*TEXTS, "a", "the dog .")]
    length = max(map(len, encs))
    ids = torch.full((len(encs), length), pad, dtype=torch.long)  # right padding, pad id
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for i, row in enumerate(encs):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = True
    ours = sample(ck.model, ids, mask, 1, seed=0).logits[0]
    ref = tf.AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        want = ref(input_ids=ids, attention_mask=mask.long()).logits
        x = ref.model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        at_last = ref.score(x[torch.arange(len(encs)), last_real(mask)])  # the old reading
    torch.testing.assert_close(ours, want, atol=1e-4, rtol=0)
    assert float((at_last - want).abs().max()) > 1e-3  # the rule matters on this folder
    assert classifier_pad_id(ck) == pad  # an export reads back the same way
