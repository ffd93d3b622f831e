"""Sharded evaluation: ``torchrun --nproc_per_node=2 -m uqlab.evaluate`` (gloo on this CPU)
writes the metrics.json of a one-process run; :class:`uqlab.evaluation.shards.Shards` splits and
gathers in order."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.app_fixtures import make_checkpoints
from uqlab.evaluation.shards import Shards

ROOT = Path(__file__).resolve().parents[3]


def test_spans_cover_every_example_once_in_order():
    for n in (0, 1, 5, 17):
        for world in (1, 2, 3, 4):
            spans = [Shards(r, world).span(n) for r in range(world)]
            assert [i for s in spans for i in s] == list(range(n))


def _close(a, b, path="") -> list[str]:
    """Where two metrics documents differ (numbers within 1e-6 relative count as equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in _close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: lengths {len(a)} vs {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _close(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, float) or isinstance(b, float):
        return [] if np.isclose(a, b, rtol=1e-6, atol=1e-9) else [f"{path}: {a} vs {b}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


@pytest.mark.slow
def test_two_gloo_processes_write_the_metrics_of_one(tmp_path, data_dir):
    """H-STO (with the plain model as its comparison's baseline) and the plain model, whose
    features come with its samples: every rank must skip the same features batches."""
    one = make_checkpoints(tmp_path / "one", families=("hsto", "trans"))
    two = tmp_path / "two"
    shutil.copytree(one, two)
    args = [
        "--ckpt",
        "cola-hsto",
        "--ckpt",
        "cola-trans",
        "--limit",
        "60",
        "--table3",
        "3",
        "--samples",
        "4",
        "--quiet",
        "--data-dir",
        str(data_dir),
        "--threads",
        "1",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, "-m", "uqlab.evaluate", "--root", str(one), *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
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
            "uqlab.evaluate",
            "--root",
            str(two),
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # ranks that disagree on their collective calls would wait for ever
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "2 process(es)" in run.stdout
    for name in ("cola-hsto", "cola-trans"):
        a, b = (json.loads((r / name / "metrics.json").read_text()) for r in (one, two))
        assert "mahalanobis" in a["ood_detection"], name
        assert not _close(a, b), _close(a, b)[:10]
        assert a == b  # each batch is computed as one process computes it: the same numbers
