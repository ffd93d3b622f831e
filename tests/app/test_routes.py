"""Every shipped checkpoint opens in the explorer and on every page (ui.routes.PAGES), with only
what requirements.txt installs (CI installs requirements-dev.txt, which is ``-r requirements.txt``
plus test tools; tests/test_requirements.py keeps run-time needs out of
the dev file, so what passes here passes on the README's install)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.routes import PAGES
from uqcore.registry import list_checkpoints
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SHIPPED = [i.name for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR) if not i.error]


@pytest.fixture(autouse=True)
def _shipped(monkeypatch):
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))


def _problems(at: AppTest) -> list[str]:
    """Exceptions and error boxes on the page (a checkpoint that cannot load shows one)."""
    return [str(e) for e in at.exception] + [e.value for e in at.error]


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_page_opens_on_every_shipped_checkpoint(name):
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"ckpt": name, "T": "10"})
    at.run()  # the explorer: the first visit's landing and its first example, sampled
    assert not _problems(at), _problems(at)
    assert at.metric, "the explorer shows no statistics"
    for script, title, _, _ in PAGES[1:]:
        at.switch_page(script).run()
        assert not _problems(at), f"{title}: {_problems(at)}"
