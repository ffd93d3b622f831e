"""Strict safetensors + JSON checkpoints (uqcore.checkpoint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import uqcore.checkpoint
from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, read_checkpoint_info, save_checkpoint
from uqcore.config import FAMILIES, ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.nets.noise import SampleNoise
from uqcore.text.vocab import Vocab

TEXTS = ["the film was great", "a dull plot and bad acting", "superb cast, great fun!"]


def tiny_cfg(family: str = "trans", **changes) -> ModelConfig:
    base = dict(vocab_size=50, n_layers=2, n_heads=2, d_model=16, d_ff=32, max_len=16)
    base["ensemble_size"] = 2 if family == "ensemble" else 1
    return ModelConfig(family=family, **{**base, **changes})


def trained_like(cfg: ModelConfig) -> torch.nn.Module:
    """A model whose every float tensor differs from a fresh init (so loading is really tested)."""
    torch.manual_seed(0)
    model = build_model(cfg)
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.add_(0.1 * torch.randn_like(t))
    return model


def _boom(*args, **kwargs):
    raise AssertionError("must not be called here")


@pytest.fixture(autouse=True, scope="module")
def _isolated():
    """One thread: for tiny models thread hand-off costs more than the maths (ms per op on a
    busy machine). ``torch.load`` fails: nothing here may unpickle."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch, "load", _boom)
        yield
    torch.set_num_threads(before)


@pytest.fixture
def vocab() -> Vocab:
    return Vocab.build(TEXTS, max_size=40)


@pytest.fixture
def saved(tmp_path, vocab) -> Path:
    cfg = tiny_cfg()
    return save_checkpoint(tmp_path / "imdb-trans", trained_like(cfg), cfg, vocab)


def close(a: torch.Tensor, b: torch.Tensor, tol: float) -> bool:
    """|a - b| <= tol * (1 + |b|) everywhere (torch.testing's first call costs 0.5 s)."""
    return a.shape == b.shape and bool(((a - b).abs() <= tol * (1 + b.abs())).all())


def logits(model: torch.nn.Module, batch, noise: bool = False) -> torch.Tensor:
    n = SampleNoise(seed=7, first=0, count=1, batch=batch.ids.shape[0]) if noise else None
    with torch.no_grad():
        return model(batch.ids, batch.mask, noise=n).logits


# ------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("family", FAMILIES)
def test_round_trip_every_family(tmp_path, vocab, family: str) -> None:
    cfg = tiny_cfg(family)
    model = trained_like(cfg)
    info, card = {"seed": 3, "task": "imdb", "labels": ["neg", "pos"]}, "# Card\nüñí 😀"
    kw = dict(training=info, metrics={"acc": 0.5}, card=card)
    path = save_checkpoint(tmp_path / f"imdb-{family}", model, cfg, vocab, **kw)
    ckpt = load_checkpoint(path)
    assert (ckpt.name, ckpt.config, ckpt.vocab, ckpt.training) == (path.name, cfg, vocab, info)
    assert (ckpt.metrics, ckpt.card, ckpt.model.training) == ({"acc": 0.5}, card, False)
    want, got = model.state_dict(), ckpt.model.state_dict()
    assert list(got) == list(want)
    for key in want:
        assert got[key].dtype == want[key].dtype and torch.equal(got[key], want[key]), key
    batch = vocab.encode_batch(["the film was great", "bad acting"], max_len=cfg.max_len)
    assert torch.equal(logits(ckpt.model, batch), logits(model, batch))
    assert torch.equal(logits(ckpt.model, batch, noise=True), logits(model, batch, noise=True))


def test_fp16_storage(tmp_path, vocab) -> None:
    cfg = tiny_cfg("hsto")
    model = trained_like(cfg)
    full = save_checkpoint(tmp_path / "full", model, cfg, vocab)
    half = save_checkpoint(tmp_path / "half", model, cfg, vocab, dtype=torch.float16)
    with safe_open(str(half / "model.safetensors"), framework="pt") as f:
        assert f.metadata() == {"format_version": "2"}
        assert all(f.get_tensor(k).dtype == torch.float16 for k in f.keys())
    size = (half / "model.safetensors").stat().st_size
    assert size < 0.6 * (full / "model.safetensors").stat().st_size
    loaded = load_checkpoint(half).model
    for key, want in model.state_dict().items():
        got = loaded.state_dict()[key]
        assert got.dtype == torch.float32
        assert close(got, want, 1e-3), key
    batch = vocab.encode_batch(["the film was great"], max_len=cfg.max_len)
    assert close(logits(loaded, batch), logits(model, batch), 1e-2)


def test_fp16_overflow_is_refused(tmp_path, vocab) -> None:
    cfg = tiny_cfg()
    model = build_model(cfg)
    with torch.no_grad():
        model.head.bias.fill_(1e6)
    with pytest.raises(CheckpointError, match="'head.bias' overflows torch.float16"):
        save_checkpoint(tmp_path / "x", model, cfg, vocab, dtype=torch.float16)


def test_views_and_shared_storage_are_saved(tmp_path, vocab) -> None:
    cfg = tiny_cfg()
    model = build_model(cfg)
    big = torch.randn(cfg.vocab_size + cfg.max_len, cfg.d_model)
    model.embed.weight.data = big[: cfg.vocab_size]  # two views of one storage
    model.pos.weight.data = big[cfg.vocab_size :]
    model.head.weight.data = torch.randn(cfg.d_model, cfg.num_classes).t()  # non-contiguous
    loaded = load_checkpoint(save_checkpoint(tmp_path / "v", model, cfg, vocab)).model
    for key, want in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], want), key


def test_resave_removes_stale_optional_files(tmp_path, vocab) -> None:
    cfg = tiny_cfg()
    model = build_model(cfg)
    path = save_checkpoint(tmp_path / "c", model, cfg, vocab, metrics={"acc": 1.0}, card="hi")
    assert (path / "metrics.json").is_file() and (path / "README.md").is_file()
    save_checkpoint(path, model, cfg, vocab)
    ckpt = load_checkpoint(path)
    assert (ckpt.metrics, ckpt.card, ckpt.training) == (None, None, {})
    assert not list(path.glob(".*"))  # no temp files left behind


def test_read_info_does_not_build_the_model(saved, monkeypatch) -> None:
    monkeypatch.setattr(uqcore.checkpoint, "build_model", _boom)
    info = read_checkpoint_info(saved)
    assert info["name"] == "imdb-trans" and info["config"] == tiny_cfg().to_dict()
    assert info["format_version"] == 2 and info["metrics"] is None and info["card"] is None


# ------------------------------------------------------------------------------- strictness
def edit_tensors(path: Path, edit) -> None:
    tensors = load_file(str(path / "model.safetensors"))
    edit(tensors)
    save_file(tensors, str(path / "model.safetensors"), metadata={"format_version": "1"})


def edit_config(path: Path, edit) -> None:
    doc = json.loads((path / "config.json").read_text())
    edit(doc)
    (path / "config.json").write_text(json.dumps(doc))


def test_missing_tensor(saved) -> None:
    edit_tensors(saved, lambda t: t.pop("head.bias"))
    with pytest.raises(CheckpointError, match=r"missing tensor\(s\): head\.bias"):
        load_checkpoint(saved)


def test_unexpected_tensor(saved) -> None:
    edit_tensors(saved, lambda t: t.update({"extra.weight": torch.zeros(2)}))
    with pytest.raises(CheckpointError, match=r"unexpected tensor\(s\): extra\.weight"):
        load_checkpoint(saved)


def test_misshaped_tensor(saved) -> None:
    edit_tensors(saved, lambda t: t.update({"head.weight": torch.zeros(3, 16)}))
    with pytest.raises(
        CheckpointError, match=r"'head\.weight' has shape \[3, 16\], expected \[2, 16\]"
    ):
        load_checkpoint(saved)


def test_non_finite_tensor(saved) -> None:
    edit_tensors(saved, lambda t: t["head.bias"].fill_(float("nan")))
    with pytest.raises(CheckpointError, match=r"head\.bias .*NaN"):
        load_checkpoint(saved)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.update(format_version=99), "format_version 99; .*reads format_version 1"),
        (lambda d: d.pop("format_version"), "no format_version; .*reads format_version 1"),
        (lambda d: d["model"].update(family="nope"), "invalid model config: Unknown model family"),
        (lambda d: d["model"].update(n_layerz=2), "Unknown field.*n_layerz"),
        (lambda d: d.pop("model"), "no 'model' entry"),
        (lambda d: d.update(extra=1), "unknown top-level key.*extra"),
        (lambda d: d["model"].update(vocab_size=10), "vocab.json has .* ids .*vocab_size=10"),
    ],
)
def test_bad_config(saved, edit, match: str) -> None:
    edit_config(saved, edit)
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(saved)
    if "vocab_size" not in match:
        with pytest.raises(CheckpointError, match=match):
            read_checkpoint_info(saved)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("config.json", "{oops", r"config\.json is not valid JSON \(line 1"),
        ("metrics.json", "[1,", r"metrics\.json is not valid JSON"),
        ("metrics.json", "[1]", r"metrics\.json must hold a JSON object"),
        ("vocab.json", "{}", r"vocab\.json has format_version None"),
        ("model.safetensors", "not a tensor file", "not a readable safetensors file"),
        ("model.pt", "pickle bytes", "model.pt: pickle checkpoints are not loaded .* safetensors"),
        ("weights.PKL", "x", "weights.PKL: pickle checkpoints"),
    ],
)
def test_bad_files(saved, name: str, content: str, match: str) -> None:
    (saved / name).write_text(content)
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(saved)


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "vocab.json"])
def test_missing_file(saved, name: str) -> None:
    (saved / name).unlink()
    with pytest.raises(CheckpointError, match=f"is missing {name}"):
        load_checkpoint(saved)


def test_missing_directory(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="No checkpoint directory at"):
        load_checkpoint(tmp_path / "nowhere")


def test_save_refuses_a_model_that_does_not_match(tmp_path, vocab) -> None:
    cfg = tiny_cfg()  # each failure below happens before anything is written
    with pytest.raises(CheckpointError, match="shape"):
        save_checkpoint(tmp_path / "x", build_model(tiny_cfg(d_model=32)), cfg, vocab)
    with pytest.raises(CheckpointError, match="vocab_size=4"):
        save_checkpoint(tmp_path / "x", build_model(cfg), cfg.replace(vocab_size=4), vocab)
    with pytest.raises(CheckpointError, match="JSON-serialisable"):
        save_checkpoint(tmp_path / "x", build_model(cfg), cfg, vocab, training={"f": object()})
    assert not (tmp_path / "x" / "config.json").exists()


def test_a_huge_config_or_tensor_index_is_refused_before_anything_is_read(saved) -> None:
    """A config describing a huge model is refused from its numbers: nothing is built."""
    doc = json.loads((saved / "config.json").read_text())
    doc["model"].update(n_layers=4000, d_model=4096, d_ff=16384)
    (saved / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match=r"describes [\d,]+M parameters"):
        load_checkpoint(saved)


def test_a_weights_file_with_a_huge_index_is_refused(saved) -> None:
    """A tensor index claiming a terabyte is refused from the file's first 8 bytes."""
    blob = (saved / "model.safetensors").read_bytes()
    (saved / "model.safetensors").write_bytes((2**40).to_bytes(8, "little") + blob[8:])
    with pytest.raises(CheckpointError, match="tensor index is missing or over"):
        load_checkpoint(saved)


def test_a_weights_file_with_more_tensors_than_the_model_is_refused_unread(saved) -> None:
    from safetensors.torch import save_file

    many = {f"extra.{i}": torch.zeros(1) for i in range(5000)}
    save_file(many, str(saved / "model.safetensors"))
    with pytest.raises(CheckpointError, match="holds 5,000 tensors"):
        load_checkpoint(saved)
