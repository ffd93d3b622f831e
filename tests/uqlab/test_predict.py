"""python -m uqlab.predict: a large file's samples in parts, resumable, and the same over two
gloo processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from tests.app_fixtures import make_checkpoints
from uqcore.inference.batch_predict import predict as library_predict
from uqcore.registry import load
from uqlab import evaluate, predict, train
from uqlab.predict import main, read

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    f"the film was {w} and long {'very ' * (i % 4)}"
    for i, w in enumerate(["dull", "great", "fine", "bad", "good"] * 5)
]


@pytest.fixture()
def setup(tmp_path):
    root = make_checkpoints(tmp_path / "ck", families=("hsto",))
    data = tmp_path / "big.csv"
    pd.DataFrame({"review body": TEXTS}).to_csv(data, index=False)
    return root, data


def _args(root, data, out, *extra):
    return [
        "--ckpt",
        "cola-hsto",
        "--root",
        str(root),
        "--file",
        str(data),
        "--text-column",
        "review body",
        "--out",
        str(out),
        "--samples",
        "4",
        "--shard-rows",
        "10",
        "--quiet",
        *extra,
    ]


def test_parts_are_the_librarys_samples_and_a_cut_run_resumes(setup, tmp_path, capsys):
    root, data = setup
    out = tmp_path / "out"
    assert main(_args(root, data, out)) == 0
    parts = sorted(p.name for p in out.glob("part-*.safetensors"))
    assert parts == ["part-00000.safetensors", "part-00001.safetensors", "part-00002.safetensors"]
    ck = load("cola-hsto", root)
    want = library_predict(ck.model, ck.vocab, TEXTS, ck.read_len, 4, 0)  # [T, N, C]
    assert (read(out) - want).abs().max() < 1e-3  # float16 storage
    stamps = {p: (out / p).stat().st_mtime_ns for p in parts}
    (out / parts[1]).write_bytes(b"cut short")  # a run stopped while writing it
    capsys.readouterr()
    assert main(_args(root, data, out)) == 0
    assert "reusing 2 of 3 parts" in capsys.readouterr().err  # a rerun says what it kept
    again = {p: (out / p).stat().st_mtime_ns for p in parts}
    assert again[parts[0]] == stamps[parts[0]] and again[parts[2]] == stamps[parts[2]]
    assert again[parts[1]] != stamps[parts[1]]  # only the broken part was sampled again
    assert (read(out) - want).abs().max() < 1e-3
    assert main(_args(root, data, out, "--seed", "1")) == 0  # another request: nothing reused
    assert all((out / p).stat().st_mtime_ns != again[p] for p in parts)


def test_a_missing_column_is_said(setup, tmp_path, capsys):
    root, data = setup
    args = _args(root, data, tmp_path / "out")
    args[args.index("review body")] = "body"
    assert main(args) == 2
    assert "has no column 'body'" in capsys.readouterr().err


@pytest.mark.slow
def test_two_gloo_processes_write_the_same_parts(setup, tmp_path):
    root, data = setup
    one, two = tmp_path / "one", tmp_path / "two"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    assert main(_args(root, data, one, "--device", "cpu")) == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node=2",
            f"--master_port={port}",
            "-m",
            "uqlab.predict",
            *_args(root, data, two),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert torch.equal(read(one), read(two))


DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it


def _cli(capsys, main, argv: list[str], *words: str) -> str:
    """``main(argv)`` exits 2 with one line ``error: ...`` naming ``words``, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture(scope="module")
def ckpt_root(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("ck"), families=("trans",))


def test_predict_evaluate_and_train_clis_with_hostile_files(capsys, ckpt_root, tmp_path):
    task = tmp_path / "task.json"
    task.write_bytes(DEEP)
    data = tmp_path / "texts.jsonl"
    data.write_bytes(b'{"text": "fine"}\n' + DEEP)
    common = ["--ckpt", "cola-trans", "--root", str(ckpt_root), "--quiet"]
    out = ["--out", str(tmp_path / "out")]
    _cli(capsys, predict.main, [*common, *out, "--task-file", str(task)], "task.json", "deeply")
    _cli(capsys, predict.main, [*common, *out, "--file", str(data)], "texts.jsonl", "deeply")
    _cli(capsys, evaluate.main, [*common, "--task-file", str(task)], "task.json", "deeply")
    _cli(capsys, train.main, ["--task-file", str(task), "--family", "trans"], "task.json")
    config = tmp_path / "run.json"
    config.write_bytes(DEEP)
    _cli(capsys, train.main, ["--config", str(config)], "run.json", "nested too deeply")
    config.write_bytes(b"\xff\xfe{}")
    _cli(capsys, train.main, ["--config", str(config)], "run.json is not UTF-8 text")
