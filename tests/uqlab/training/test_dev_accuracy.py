"""A checkpoint's dev metric at chosen reading lengths (python -m uqlab.training.dev_accuracy):
at its own length it is the figure its trainer recorded; a bad command gets one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from uqcore.checkpoint import load_checkpoint
from uqlab.train import main as train
from uqlab.training.dev_accuracy import dev_metric, main

ROOT = Path(__file__).resolve().parents[3]
# small, but past CR's majority class on dev (0.670): 0.718 at its third epoch here
SMALL = ["model.n_layers=1", "model.n_heads=2", "model.d_model=32", "model.d_ff=32"]


@pytest.fixture(autouse=True)
def _data(data_dir, monkeypatch):
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, data_dir):
    """A task-file task (CR): the command finds it through the checkpoint's kept description."""
    out = tmp_path_factory.mktemp("dev") / "cr-trans"
    sets = [a for item in [*SMALL, "max_len=32", "vocab_size=2000"] for a in ("--set", item)]
    task = str(ROOT / "configs" / "tasks" / "cr.json")
    args = ["--task-file", task, "--family", "trans", "--out", str(out), "--epochs", "3", *sets]
    args += ["--patience", "5", "--lr", "0.003"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UQ_DATA_DIR", str(data_dir))
        assert train([*args, "--batch-size", "32", "--quiet"]) == 0
    return out


def test_at_its_own_length_it_is_what_the_trainer_recorded(checkpoint, capsys, monkeypatch):
    import uqlab.training.dev_accuracy as module

    recorded = load_checkpoint(checkpoint).training["members"][0]["dev_accuracy"]
    read = []
    encode = module.encode_split
    monkeypatch.setattr(module, "encode_split", lambda s, v, n: read.append(n) or encode(s, v, n))
    metric, texts, rows = dev_metric(str(checkpoint), [32, 6, 4096])
    assert metric == "accuracy" and texts == 500
    assert recorded > 0.68  # past the majority class: the equality below says something
    assert rows[0][1] == pytest.approx(recorded, abs=1e-9)  # the trainer's split and model
    assert read == [32, 6, 32]  # each length applied, capped by the position table
    assert main(["--ckpt", str(checkpoint)]) == 0  # default: the length it reads (32)
    line = capsys.readouterr().out
    assert f"dev accuracy {recorded:.4f} read at 32 tokens, T = 1, 500 texts" in line


def test_a_bad_command_gets_one_line(checkpoint, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--ckpt", str(checkpoint), "--read", "256,x"])
    assert exc.value.code == 2 and "lengths like 256,512" in capsys.readouterr().err
    assert main(["--ckpt", "no-such-checkpoint"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No checkpoint 'no-such-checkpoint'") and "Traceback" not in err
