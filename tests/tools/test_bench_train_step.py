"""tools.bench_train_step: both precisions time real steps of a shipped recipe's model."""

from __future__ import annotations

import json
from pathlib import Path

from tools.bench_train_step import main

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "cr-smollm2-trans.json"


def test_both_precisions_are_timed_in_two_rounds_on_the_configs_model(capsys):
    assert main(["--config", str(CONFIG), "--rows", "1", "--repeats", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["max_len"] == 64 and out["rows"] == 1
    for key in ("float32 round 1", "bfloat16 round 1", "float32 round 2", "bfloat16 round 2"):
        assert len(out[key]) == 1 and out[key][0] > 0
