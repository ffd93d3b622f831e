"""``python -m tools.serve``: two Streamlit processes behind Caddy, as a class of visitors meets
them: health through the proxy, new visitors spread over both backends, a session kept on its
backend (websocket and download), the same numbers from either backend, nothing left running
after a stop. The tests run in file order on one launch; the last one stops it."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.browser.test_browser import csv_rows, goto, metric_values, open_view, settle
from tools.loadtest import alive, tree_pids
from tools.serve import CADDY, COOKIE, backend_cookie, free_port, healthy
from ui.logic.runlog import read

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
LINK = "/?ckpt=tiny-hsto&text=John%20is%20tall%20on%20several%20occasions.&label=0&T=50&seed=1"
BACKEND = re.compile(r"^backend \d+/\d+: http://(\S+) \(pid (\d+)\)$", re.M)

if not Path(CADDY).exists():
    pytest.skip(
        f"tools.serve needs Debian's Caddy at {CADDY} (apt-get install -y caddy)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, served_folder):
    folder = tmp_path_factory.mktemp("serve")
    port = free_port()
    out = (folder / "serve.out").open("w")
    env = {
        **os.environ,
        "UQ_CHECKPOINT_DIR": str(served_folder),
        "UQ_RUN_LOG": str(folder / "runs.jsonl"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.serve", "--processes", "2", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    deadline = time.time() + 150
    text = ""
    while "Serving" not in text:
        text = (folder / "serve.out").read_text()
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"tools.serve did not start:\n{text}")
        time.sleep(0.3)
    info = {
        "url": f"http://127.0.0.1:{port}",
        "proc": proc,
        "out": text,
        "dials": [m.group(1) for m in BACKEND.finditer(text)],
        "runlog": str(folder / "runs.jsonl"),
    }
    yield info
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    out.close()


def _lb(url: str) -> str | None:
    """The ``lb`` cookie Caddy sets on a visitor without one."""
    with urllib.request.urlopen(url, timeout=10) as r:
        for header in r.headers.get_all("Set-Cookie") or []:
            if header.startswith(f"{COOKIE}="):
                return header.split(";")[0].split("=", 1)[1]
    return None


def test_the_proxy_answers_health_and_spreads_new_visitors(cluster):
    assert len(cluster["dials"]) == 2, cluster["out"]
    assert healthy(cluster["url"])
    pinned = {backend_cookie(d) for d in cluster["dials"]}
    seen = {_lb(cluster["url"] + "/_stcore/health") for _ in range(40)}
    # each new visitor goes to a backend at random: after 40, both were picked (all 40 on one
    # backend: probability 2 x 2^-40)
    assert seen == pinned


def test_two_visitors_on_two_backends_see_the_same_numbers_and_download(cluster, chrome):
    url, shown = cluster["url"], []
    for dial in cluster["dials"]:  # one visitor pinned to each backend
        context = chrome.new_context(
            viewport={"width": 1400, "height": 1800}, accept_downloads=True
        )
        context.add_cookies([{"name": COOKIE, "value": backend_cookie(dial), "url": url}])
        page = context.new_page()
        page.set_default_timeout(90_000)
        try:
            open_view(page, url, LINK)
            values = metric_values(page)
            assert values and values[1].endswith("/ 50"), values
            # a download is fetched from the process that made it: it arrives only when the
            # session stays on its backend
            with page.expect_download() as info:
                page.get_by_role("button", name="Samples (CSV)").click()
            assert len(csv_rows(info.value.path())) == 50
            cookies = {c["name"]: c["value"] for c in context.cookies(url)}
            assert cookies[COOKIE] == backend_cookie(dial)  # Caddy kept the visitor there
            shown.append(values)
        finally:
            context.close()
    assert shown[0] == shown[1]
    runs = read(cluster["runlog"])  # both backends append to the launch's run log
    assert len({r["session"] for r in runs}) >= 2, runs


def test_a_fresh_visitor_gets_a_backend_and_its_upload_arrives_there(
    cluster, chrome, served_folder
):
    context = chrome.new_context(viewport={"width": 1400, "height": 1800})
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        open_view(page, cluster["url"], "/?ckpt=tiny-trans")
        cookies = {c["name"]: c["value"] for c in context.cookies(cluster["url"])}
        assert cookies[COOKIE] in {backend_cookie(d) for d in cluster["dials"]}
        # an upload is kept by the process that received it: the session's own
        goto(page, "Your checkpoint")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for f in (served_folder / "tiny-hsto").iterdir():
                if f.is_file():
                    z.write(f, f"tiny-hsto/{f.name}")
        upload = {"name": "tiny-hsto.zip", "mimeType": "application/zip", "buffer": buf.getvalue()}
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(upload)
        settle(page)
        page.get_by_role("button", name="Validate and add").first.click()
        page.get_by_text("Added upload-tiny-hsto", exact=False).wait_for()
    finally:
        context.close()


def test_a_page_whose_backend_is_killed_comes_back_by_itself(cluster, chrome, shots):
    """Issue 45 item 5: a backend killed while a visitor's page is open is restarted in 2 s, but
    the page stayed as it was, idle, until a reload. Now the page reconnects and a fresh session
    rebuilds the link's view by itself: a run after the kill, the same numbers, no reload."""
    dial, pid = next((m.group(1), int(m.group(2))) for m in BACKEND.finditer(cluster["out"]))
    url = cluster["url"]
    context = chrome.new_context(viewport={"width": 1400, "height": 1000})
    context.add_cookies([{"name": COOKIE, "value": backend_cookie(dial), "url": url}])
    page = context.new_page()
    page.set_default_timeout(90_000)
    try:
        open_view(page, url, LINK)
        before = metric_values(page)
        page.evaluate("window.__not_reloaded = true")  # gone if the page were reloaded
        killed = time.time()
        os.killpg(pid, signal.SIGKILL)
        deadline = time.time() + 90
        while not any(r["start"] > killed for r in read(cluster["runlog"])):
            assert time.time() < deadline, "no run after the kill: the page stayed idle"
            page.wait_for_timeout(500)
        settle(page)
        assert page.evaluate("window.__not_reloaded === true")
        assert metric_values(page) == before
        page.screenshot(path=str(shots / "serve-after-backend-killed-1400.png"))
    finally:
        context.close()


def test_stopping_the_launcher_leaves_none_of_its_processes(cluster):
    proc = cluster["proc"]
    started = tree_pids(proc.pid)
    assert len(started) >= 4, started  # the launcher, two backends, caddy
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    left = [p for p in started if alive(p)]
    assert not left, left
    assert not healthy(cluster["url"])
