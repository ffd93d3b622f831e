"""A real Streamlit server and Debian's Chromium for the browser tests (docs/development.md, Tests).

The server serves a temporary checkpoint folder holding copies of the shipped CoLA
checkpoints plus tiny untrained ``tiny-<family>`` ones for every family. Screenshots go to
``$UQ_SCREENSHOTS`` (default: a temporary folder) so a person can look at them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from tools.serve import free_port, healthy, streamlit_command

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not Path(CHROMIUM).exists():
    pytest.skip(
        f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install -y chromium)",
        allow_module_level=True,
    )


@pytest.fixture(scope="session")
def served_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("served")
    for ck in (ROOT / "assets" / "checkpoints").glob("cola-*"):
        shutil.copytree(ck, folder / ck.name, ignore=shutil.ignore_patterns(".train"))
    make_checkpoints(folder, prefix="tiny")
    return folder


def start_server(folder: Path, log_path: Path):
    """A fresh ``streamlit run app.py`` serving ``folder``; returns (url, stop function)."""
    port = free_port()
    log = log_path.open("w")
    env = {**os.environ, "UQ_CHECKPOINT_DIR": str(folder)}
    proc = subprocess.Popen(
        streamlit_command(port),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"

    def stop() -> None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
        log.close()

    stop.pid = proc.pid  # the server's process (its CPU time: /proc/<pid>/stat)

    deadline = time.time() + 60
    while time.time() < deadline:
        if healthy(url):
            return url, stop
        time.sleep(0.3)
    stop()
    pytest.fail(f"streamlit did not start; see {log_path}")


@pytest.fixture(scope="session")
def server(tmp_path_factory, served_folder):
    url, stop = start_server(served_folder, tmp_path_factory.mktemp("log") / "streamlit.log")
    yield url
    stop()


@pytest.fixture(scope="session")
def chrome():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def tab(chrome):
    context = chrome.new_context(viewport={"width": 1400, "height": 1800}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory) -> Path:
    folder = os.environ.get("UQ_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
