"""The README's two screenshots: ``explorer.png`` and ``errors.png``.

    python -m tools.screenshots [--out docs/img]

Starts ``python -m streamlit run app.py`` on a free port of 127.0.0.1 (headless, no file
watcher) serving the shipped ``assets/checkpoints`` (``UQ_CHECKPOINT_DIR`` is unset for it),
opens it in Debian's Chromium (``/usr/bin/chromium``, driven by Playwright) at 1400 x 1000 and
saves, once each page has settled:

- ``explorer.png``: the first screen of a bare link (the default checkpoint's stories) with its
  "Unsure" story open: the stories, that sentence's numbers and the top of its histogram;
- ``errors.png``: Error analysis on the default checkpoint (its stored samples, read at once),
  its first figure in view.

With ``--every``, instead, the first screen of every page of the menu at a desktop's 1400 x 1000,
a projector's 1024 x 768 and a phone's 390 x 844 (``<page>-<width>x<height>.png``, 24 files), for
a person to look at before a release (not kept in the repository).

The server is stopped when it is done, also on failure. :func:`take` can instead photograph a
server that is already running (``url=``), as ``tests/browser/test_screenshots.py`` does.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

from tools.serve import free_port, healthy, streamlit_command

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1400, "height": 1000}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
BUSY = '[data-testid="stStatusWidget"], [data-testid="stSpinner"]'
NAMES = ("explorer.png", "errors.png")
SIZES = ((1400, 1000), (1024, 768), (390, 844))  # a desktop, a projector, a phone


@contextmanager
def served(timeout_s: float = 90):
    """A fresh ``streamlit run app.py`` on the shipped checkpoints; yields its URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "UQ_CHECKPOINT_DIR"}
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            streamlit_command(port),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout_s
            while not healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"streamlit did not start:\n{log.read()[-2000:]}")
                time.sleep(0.3)
            yield url
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def settle(page, quiet_ms: int = 1500, timeout_s: float = 180) -> None:
    """Wait until the script has finished and no status widget or spinner has shown for
    ``quiet_ms``: the page is what a visitor would look at."""
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        idle = page.locator(IDLE).count() > 0 and page.locator(BUSY).count() == 0
        now = time.monotonic()
        if not idle:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif (now - quiet_since) * 1000 >= quiet_ms:
            return
        page.wait_for_timeout(200)
    raise TimeoutError(f"the page did not settle in {timeout_s:.0f} s: {page.url}")


def errors_path() -> str:
    from uqlab.catalog.tasks import DEFAULT_CHECKPOINT

    return "/errors?" + urlencode({"ckpt": DEFAULT_CHECKPOINT})


def shoot(browser, url: str, out: Path) -> list[Path]:
    """Both screenshots of the server at ``url`` into the folder ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        page.goto(url + "/")  # a bare link: the first screen and its stories
        page.locator('[data-testid="stMetricValue"]').first.wait_for()
        settle(page)
        page.get_by_role("button", name="Unsure", exact=True).click()  # a visible spread
        page.mouse.move(0, 0)  # no tooltip over the picture
        page.locator(".js-plotly-plot").first.wait_for()
        settle(page, quiet_ms=800)
        page.screenshot(path=str(out / NAMES[0]))

        page.goto(url + errors_path())
        figure = page.locator(".js-plotly-plot").first
        figure.wait_for()
        settle(page)
        figure.scroll_into_view_if_needed()
        settle(page, quiet_ms=800)
        page.screenshot(path=str(out / NAMES[1]))
    finally:
        context.close()
    return [out / name for name in NAMES]


def every_page(browser, url: str, out: Path) -> list[Path]:
    """The first screen of every page of the menu at each of :data:`SIZES`, the default
    checkpoint chosen, into the folder ``out``."""
    from ui.routes import PAGES
    from uqlab.catalog.tasks import DEFAULT_CHECKPOINT

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for width, height in SIZES:
        context = browser.new_context(
            viewport={"width": width, "height": height}, device_scale_factor=1
        )
        page = context.new_page()
        page.set_default_timeout(180_000)
        try:
            for _, _, _, path in PAGES:
                page.goto(f"{url}/{path}?" + urlencode({"ckpt": DEFAULT_CHECKPOINT}))
                page.locator("h1").first.wait_for()
                settle(page)
                page.mouse.move(0, 0)
                paths.append(out / f"{path or 'explore'}-{width}x{height}.png")
                page.screenshot(path=str(paths[-1]))
        finally:
            context.close()
    return paths


def take(out: Path, url: str | None = None, browser=None) -> list[Path]:
    """Save ``explorer.png`` and ``errors.png`` in ``out``; of the server at ``url``, or of a
    fresh one on the shipped checkpoints, stopped afterwards. ``browser``: a Playwright browser
    already open (the browser tests' own; one process holds one sync Playwright at a time), else
    Chromium is started here and closed after. Returns the two paths."""
    if browser is not None:
        return _shoot_at(browser, Path(out), url)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        own = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            return _shoot_at(own, Path(out), url)
        finally:
            own.close()


def _shoot_at(browser, out: Path, url: str | None) -> list[Path]:
    if url is not None:
        return shoot(browser, url, out)
    with served() as fresh:
        return shoot(browser, fresh, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="the folder")
    parser.add_argument("--url", help="photograph this running server instead of a fresh one")
    parser.add_argument(
        "--every", action="store_true", help="every page at three sizes instead (into --out)"
    )
    args = parser.parse_args(argv)
    if args.every:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            own = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                if args.url:
                    shots = every_page(own, args.url, args.out)
                else:
                    with served() as fresh:
                        shots = every_page(own, fresh, args.out)
            finally:
                own.close()
        for path in shots:
            print(path)
        return
    for path in take(args.out, args.url):
        print(f"{path} ({path.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
