"""Load test: ``python -m ui.loadtest [--clients 20] [--soak 300]``.

Starts the app (``streamlit run app.py``) on a free local port and drives it with Chromium
(Playwright, Debian's ``chromium``), as visitors would:

1. **Alone**: each of ``--clients`` explorer links (different seeds) opened by itself, one after
   another: the numbers each shows and the time a visitor waits for them.
2. **Burst**: the same links opened at once, one browser context each. Every page must show the
   numbers it showed alone; printed: how many did (and how many showed other numbers, which
   must be none), the clients' wait (p50 / p95), the server's
   own compute time per request (the explorer's "Computed in" line) against alone, and the
   slowest and 95th-percentile answers of the health check, polled every 0.2 s during the
   burst from a separate process.
3. **Soak**: ``--soak`` varied explorer requests (texts, T, seeds, checkpoints) in sequence, then
   the server's resident memory (its process tree's RSS) against at start.

The last line is one JSON object with every figure. Figures only; nothing passes or fails. The
clients' wait includes the browsers' own rendering on the same cores: the "alone" row measures
that part (one browser, no contention) and the "Computed in" line the server's part.

The browsers stand for visitors' own machines, which in a deployment do not share the server's
cores. Here they do, so by default they run at the lowest CPU priority (``--browser-nice 19``:
``nice`` and the SCHED_IDLE policy): when both want the CPU the server goes first, as it would
with remote visitors, and the clients' wait then includes rendering that waited for the server.
``--browser-nice 0`` runs them at the server's priority (the harsher, unrealistic case).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from uqcore.registry import list_checkpoints
from uqlab.paths import checkpoint_dir
from uqlab.tasks import DEFAULT_CHECKPOINT

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TEXTS = (
    "John is tall on several occasions.",
    "Nora sent the book to London.",
    "The more you eat, the more you want.",
    "Which book did each author recommend?",
    "Kim is eager to recommend.",
    "a great movie with a weak ending",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children (MB), from /proc."""
    total = 0
    pids = [pid]
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
        pids += [int(p) for p in children.stdout.split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


class Server:
    """``streamlit run app.py`` on a free port, stopped with :meth:`stop`."""

    def __init__(self, log: Path):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--server.fileWatcherType", "none"],  # edits during a run must not reload modules
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.health() is not None:
                return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not start; see {log}")

    def health(self, timeout: float = 5.0) -> float | None:
        """Seconds the health check took to answer (None if it did not)."""
        started = time.perf_counter()
        try:
            ok = urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=timeout).read()
        except OSError:
            return None
        return time.perf_counter() - started if ok == b"ok" else None

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=30)
        self._log.close()


_PROBE = """
import sys, time, urllib.request
while True:
    started = time.perf_counter()
    try:
        ok = urllib.request.urlopen(sys.argv[1] + "/_stcore/health", timeout=30).read() == b"ok"
    except OSError:
        ok = False
    print(time.perf_counter() - started if ok else 30.0, flush=True)
    time.sleep(0.2)
"""


class Prober:
    """The server's health check polled every 0.2 s from a separate small process (a thread of
    this one would share its GIL with the Playwright driver and measure that instead)."""

    def __init__(self, url: str):
        self._proc = subprocess.Popen([sys.executable, "-c", _PROBE, url],
                                      stdout=subprocess.PIPE, text=True)  # fmt: skip
        self._seconds: list[float] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._proc.stdout:
            self._seconds.append(float(line))

    def stop(self) -> list[float]:
        """Stop polling; the seconds each answer took (30 = no answer)."""
        self._proc.terminate()
        self._proc.wait(timeout=30)
        self._reader.join(timeout=5)
        return list(self._seconds)


def _same_task(ckpt: str) -> list[str]:
    """Every readable shipped checkpoint of ``ckpt``'s task."""
    infos = [i for i in list_checkpoints(checkpoint_dir()) if not i.error]
    task = next(i.task for i in infos if i.name == ckpt)
    return [i.name for i in infos if i.task == task]


def link(ckpt: str, text: str, T: int, seed: int) -> str:  # noqa: N803
    return "/?" + urlencode({"ckpt": ckpt, "text": text, "label": 0, "T": T, "seed": seed})


def _open(browser, url: str, timeout_ms: int = 600_000) -> dict:
    """Open ``url`` in a fresh context; the numbers shown, the wait and the server's compute."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    started = time.perf_counter()
    try:
        page.goto(url, wait_until="commit")
        values, line = _shown(page)
        return {"values": values, "wait_s": time.perf_counter() - started,
                "compute_s": float(line.split()[2])}  # fmt: skip
    finally:
        context.close()


METRICS = '[data-testid="stMetricValue"]'


def _shown(page) -> tuple[list[str], str]:
    """The explorer's metric values and its "Computed in" line, once both are on the page (the
    caption can arrive a moment before the metrics: reading then gave an empty list)."""
    page.get_by_text("Computed in", exact=False).first.wait_for()
    page.locator(METRICS).first.wait_for()
    values = page.locator(METRICS).all_inner_texts()
    for _ in range(50):  # until two reads 0.1 s apart agree (the last metrics rendered)
        page.wait_for_timeout(100)
        again = page.locator(METRICS).all_inner_texts()
        if again == values:
            break
        values = again
    return values, page.get_by_text("Computed in", exact=False).first.inner_text()


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _niced_chromium(folder: Path, nice: int) -> str:
    """A launcher that starts Chromium at CPU priority ``nice`` (its processes inherit it). At
    19, also under the SCHED_IDLE policy where ``chrt`` exists: Chromium raises the nice value
    of its browser and GPU processes by itself (ps showed them at high priority under plain
    ``nice``), but a nice value does not lift a process out of SCHED_IDLE."""
    if nice == 0:
        return CHROMIUM
    idle = "chrt --idle 0 " if nice == 19 and shutil.which("chrt") else ""
    script = folder / "uq-loadtest-chromium"
    script.write_text(f'#!/bin/sh\nexec {idle}nice -n {int(nice)} {CHROMIUM} "$@"\n')
    script.chmod(0o755)
    return str(script)


def run(clients: int, soak: int, ckpt: str, soak_ckpts: list[str], T: int,  # noqa: N803
        browser_nice: int = 19) -> dict:  # fmt: skip
    from playwright.sync_api import sync_playwright

    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    server = Server(logs / "uq-loadtest-streamlit.log")
    report: dict = {"clients": clients, "soak": soak, "T": T, "ckpt": ckpt,
                    "browser_nice": browser_nice}  # fmt: skip
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_niced_chromium(logs, browser_nice),
                                        args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
            links = [link(ckpt, TEXTS[i % len(TEXTS)], T, 100 + i) for i in range(clients)]
            _open(browser, server.url + links[0])  # warm-up: imports, checkpoint load
            report["rss_start_mb"] = round(_rss_mb(server.proc.pid))
            alone = [_open(browser, server.url + u) for u in links]
            print(f"alone: wait p50 {_pct([a['wait_s'] for a in alone], .5):.2f} s, compute "
                  f"p50 {_pct([a['compute_s'] for a in alone], .5):.2f} s")  # fmt: skip
            # the burst: every link at once, a health probe polling beside it
            watcher = Prober(server.url)  # its own process: not slowed by Playwright's GIL
            burst: list[dict | None] = [None] * clients
            pages = []
            started = time.perf_counter()
            for u in links:  # one browser, one context per visitor, all opened now
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                page.set_default_timeout(900_000)
                page.goto(server.url + u, wait_until="commit")
                pages.append((context, page))
            for i, (context, page) in enumerate(pages):
                values, line = _shown(page)
                burst[i] = {
                    "values": values,
                    "wait_s": time.perf_counter() - started,  # upper bound: pages polled in order
                    "compute_s": float(line.split()[2]),
                }
                context.close()
            probes = watcher.stop()
            same = sum(b["values"] == a["values"] for a, b in zip(alone, burst, strict=True))
            for i, (a, b) in enumerate(zip(alone, burst, strict=True)):
                if a["values"] != b["values"]:  # say what differed: the figures must be equal
                    print(f"  client {i}: alone {a['values']} / burst {b['values']}")
            report["burst"] = {
                "identical_to_alone": same,
                "differing": sum(1 for a, b in zip(alone, burst, strict=True)
                                 if a["values"] and b["values"] and a["values"] != b["values"]),
                "wait_p50_s": round(_pct([b["wait_s"] for b in burst], 0.5), 2),
                "wait_p95_s": round(_pct([b["wait_s"] for b in burst], 0.95), 2),
                "compute_p50_s": round(_pct([b["compute_s"] for b in burst], 0.5), 3),
                "compute_alone_p50_s": round(_pct([a["compute_s"] for a in alone], 0.5), 3),
                "alone_wait_p50_s": round(_pct([a["wait_s"] for a in alone], 0.5), 2),
                "health_max_s": round(max(probes), 3) if probes else None,
                "health_p95_s": round(_pct(probes, 0.95), 3) if probes else None,
                "health_probes": len(probes),
            }
            print(f"burst of {clients}: {same}/{clients} identical to alone; " + ", ".join(
                f"{k} {v}" for k, v in report["burst"].items() if k != "identical_to_alone"))
            # the soak: varied requests one after another
            times = []
            for n in range(soak):
                name = soak_ckpts[n % len(soak_ckpts)]
                u = link(name, TEXTS[n % len(TEXTS)] + f" ({n})", (10, 50, 100, 300)[n % 4], n)
                times.append(_open(browser, server.url + u)["compute_s"])
                if (n + 1) % 50 == 0:
                    print(f"soak {n + 1}/{soak}: server RSS {_rss_mb(server.proc.pid):.0f} MB")
            report["soak_compute_p50_s"] = round(_pct(times, 0.5), 3) if times else None
            report["rss_after_soak_mb"] = round(_rss_mb(server.proc.pid))
            browser.close()
    finally:
        server.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ui.loadtest", description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--soak", type=int, default=300)
    p.add_argument("--T", type=int, default=50)
    p.add_argument("--ckpt", default=DEFAULT_CHECKPOINT)
    p.add_argument("--soak-ckpts", default="",
                   help="comma-separated (default: every shipped checkpoint of --ckpt's task)")
    p.add_argument("--browser-nice", type=int, default=19, choices=range(20),
                   help="CPU priority of the browsers (19: lowest, as remote visitors; 0: the "
                   "server's)")  # fmt: skip
    args = p.parse_args(argv)
    soak = args.soak_ckpts.split(",") if args.soak_ckpts else _same_task(args.ckpt)
    report = run(args.clients, args.soak, args.ckpt, soak, args.T, args.browser_nice)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
