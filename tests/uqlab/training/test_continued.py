"""Continuing a checkpoint's training (``init_from``, uqlab.training.continued): the run starts
from the source's trained tensors (each member from its own), may read longer texts, records
where it started, and refuses a source it cannot continue with a one-line message."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from uqcore.build import frozen_names
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import ConfigError
from uqlab.train import main
from uqlab.training.continued import load_start


@pytest.fixture(autouse=True)
def _data(data_dir, monkeypatch):
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))


@pytest.fixture
def minilm():
    from uqlab.training.pretrained import minilm_dir

    try:
        minilm_dir()
    except ConfigError as exc:
        pytest.skip(str(exc))


def _args(out: Path, family: str, *extra: str) -> list[str]:
    return [
        "--task",
        "cola",
        "--family",
        family,
        "--out",
        str(out),
        "--epochs",
        "1",
        "--limit",
        "32",
        "--batch-size",
        "16",
        "--quiet",
        "--set",
        'base="minilm"',
        "--set",
        'model.adapters={"rank": 2}',
        "--set",
        "max_len=16",
        *extra,
    ]


def _trained(path: Path) -> dict[str, torch.Tensor]:
    """What training made (adapters kept apart), per tensor name."""
    ck = load_checkpoint(path, merge=False)
    frozen = frozen_names(ck.config)  # unprefixed: as in one member

    def own(key: str) -> bool:
        parts = key.split(".", 2)
        return (parts[2] if parts[0] == "members" else key) not in frozen

    return {k: v for k, v in ck.model.state_dict().items() if own(k)}


def test_a_continued_run_starts_from_the_source_and_reads_longer(tmp_path, minilm):
    """H-STO on MiniLM trained at 16 tokens, continued at 24 with a learning rate too small to
    move anything: the adapters, head and centroids come out as the source's (not a fresh
    start's: lora_b starts at zero, the centroids from k-means), the checkpoint reads 24
    tokens and records the run it went on from."""
    hsto = ("--set", "model.stochastic_layers=[5]")
    source = tmp_path / "src"
    assert main(_args(source, "hsto", *hsto)) == 0
    longer = ("--set", "max_len=24", "--set", f"init_from={source}", "--lr", "1e-9")
    went_on = tmp_path / "went-on"
    assert main(_args(went_on, "hsto", *hsto, *longer)) == 0
    fresh = tmp_path / "fresh"
    assert main(_args(fresh, "hsto", *hsto, "--set", "max_len=24", "--lr", "1e-9")) == 0
    a, b, c = _trained(source), _trained(went_on), _trained(fresh)
    assert a.keys() == b.keys() and "layers.5.attn.centroids" in a
    assert any(k.endswith("lora_b") for k in a)
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-6), key
    assert not all(torch.allclose(a[k], c[k], atol=1e-3) for k in a)  # the start mattered
    ck = load_checkpoint(went_on)
    assert ck.read_len == 24 and ck.training["config"]["init_from"] == "src"
    record = ck.training["init_from"]
    assert record["checkpoint"] == "src" and record["max_len"] == 16
    assert record["command"].startswith("python -m uqlab.train")


def test_each_member_of_an_ensemble_goes_on_from_its_own(tmp_path, minilm):
    """A two-member ensemble continued: member i starts from the source's member i (they
    differ from each other, so a mix-up would show)."""
    size = ("--set", "ensemble_size=2")
    source = tmp_path / "src"
    assert main(_args(source, "ensemble", *size)) == 0
    went_on = tmp_path / "went-on"
    extra = ("--set", f"init_from={source}", "--lr", "1e-9")
    assert main(_args(went_on, "ensemble", *size, *extra)) == 0
    a, b = _trained(source), _trained(went_on)
    head0, head1 = a["members.0.head.weight"], a["members.1.head.weight"]
    assert not torch.allclose(head0, head1, atol=1e-3)
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-6), key


def test_a_source_that_reads_a_siblings_weights_is_followed(tmp_path, minilm):
    """imdb-minilm-mcdropout holds no weights of its own: it reads imdb-minilm-trans's identical
    file (uqlab.share_weights). Continuing it refused with "names another checkpoint's
    model.safetensors" until the source was loaded as the app loads it."""
    import shutil

    from uqlab.share_weights import share

    root = tmp_path / "checkpoints"
    assert main(_args(root / "owner", "trans")) == 0
    shutil.copytree(root / "owner", root / "reader")
    share("reader", "owner", root)
    assert not (root / "reader" / "model.safetensors").exists()
    went_on = tmp_path / "went-on"
    extra = ("--set", f"init_from={root / 'reader'}", "--lr", "1e-9")
    assert main(_args(went_on, "trans", *extra)) == 0
    a, b = _trained(root / "owner"), _trained(went_on)
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_a_source_that_cannot_be_continued_is_refused_before_training(tmp_path, minilm, capsys):
    """Another adapter rank, no base, a missing checkpoint: a one-line error naming what to
    change, exit status 2, nothing written."""
    source = tmp_path / "src"
    assert main(_args(source, "trans")) == 0
    cfg = load_checkpoint(source).config
    with pytest.raises(ConfigError, match="no base|set base"):
        load_start(str(source), cfg, None)
    out = tmp_path / "out"
    other_rank = ("--set", 'model.adapters={"rank": 4}', "--set", f"init_from={source}")
    assert main(_args(out, "trans", *other_rank)) == 2
    err = capsys.readouterr().err
    assert "adapters" in err and "only the reading length" in err and not out.exists()
    assert main(_args(out, "trans", "--set", "init_from=no-such-checkpoint")) == 2
    assert "no checkpoint 'no-such-checkpoint'" in capsys.readouterr().err
    assert main(_args(out, "hsto", "--set", f"init_from={source}")) == 2
    assert "family" in capsys.readouterr().err and not out.exists()
    assert main(_args(out, "trans", "--set", "init_from=3")) == 2
    assert "init_from must be a checkpoint's name or folder" in capsys.readouterr().err
