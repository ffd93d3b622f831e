"""A checkpoint of a three-class task described by a file opens on every page (ui.routes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.task_files import colour_rows, colour_task, write_csv
from uqlab.catalog.tasks import TASKS

pytestmark = pytest.mark.usefixtures("tasks_restored")


def test_a_three_class_checkpoint_opens_on_every_page(tmp_path, monkeypatch):
    """A task with three labels, described by a file with its example files, trained for one
    epoch: the explorer and every dataset page open on it with no exception or error box."""
    from streamlit.testing.v1 import AppTest

    from ui.routes import PAGES
    from uqlab import train

    write_csv(tmp_path / "examples.csv", colour_rows(24, seed=5))
    task = colour_task(tmp_path, examples={"id": "examples.csv"})
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
