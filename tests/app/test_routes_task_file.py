"""A checkpoint of a three-class task described by a file opens on every page (ui.routes)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from uqlab.tasks import TASKS

WORDS = {"red": 0, "green": 1, "blue": 2}


FILL = "the a big small old new shiny dull car house ball hat box".split()


def _rows(n=150, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = rng.choice(list(WORDS))
        text = " ".join(rng.sample(FILL, 4) + [w] + rng.sample(FILL, 2))
        label = ["RED", "Green", "blue"][WORDS[w]] if i % 2 else WORDS[w]  # names or ids
        out.append({"Review Text": text, "Colour": label})
    return out


def _csv(path, rows, sep=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(rows[0]), delimiter=sep)
        w.writeheader()
        w.writerows(rows)
    return path


def _task(tmp_path, name="colours", **changes):
    _csv(tmp_path / "colours.csv", _rows())
    doc = {
        "name": name,
        "title": "Colour words",
        "text_column": "Review Text",
        "label_column": "Colour",
        "label_names": ["red", "green", "blue"],
        "data": {"file": "colours.csv", "split": {"dev": 0.2, "test": 0.2}, "seed": 1},
        "train_defaults": {
            "max_len": 16,
            "batch_size": 16,
            "lr": 3e-3,
            "vocab_size": 100,
            "min_freq": 1,
            "model": {"n_layers": 1, "n_heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1},
        },
    } | changes
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(autouse=True)
def _forget_described_tasks():
    before = dict(TASKS)
    yield
    TASKS.clear()
    TASKS.update(before)


def test_a_three_class_checkpoint_opens_on_every_page(tmp_path, monkeypatch):
    """A task with three labels, described by a file with its example files, trained for one
    epoch: the explorer and every dataset page open on it with no exception or error box."""
    from streamlit.testing.v1 import AppTest

    from ui.routes import PAGES
    from uqlab import train

    _csv(tmp_path / "examples.csv", _rows(24, seed=5))
    task = _task(tmp_path, examples={"id": "examples.csv"})
    root = tmp_path / "ck"
    out = str(root / "colours-mc")
    args = ["--task-file", str(task), "--family", "mcdropout", "--out", out, "--epochs", "1"]
    assert train.main([*args, "--quiet"]) == 0
    del TASKS["colours"]  # the app registers it from the checkpoint
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    app = Path(__file__).resolve().parents[2] / "app.py"
    at = AppTest.from_file(str(app), default_timeout=300)
    at.query_params.update({"ckpt": "colours-mc", "T": "5", "text": "the big red car"})
    at.run()
    problems = [str(e) for e in at.exception] + [e.value for e in at.error]
    assert not problems, problems
    assert at.metric
    for script, title, _, _ in PAGES[1:]:
        at.switch_page(script).run()
        for button in at.button:  # dataset pages compute on a click
            if button.label == "Compute":
                button.click().run()
                break
        problems = [str(e) for e in at.exception] + [e.value for e in at.error]
        assert not problems, f"{title}: {problems}"
