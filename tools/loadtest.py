"""Load test: ``python -m tools.loadtest [--clients 20] [--links different|same] [--processes 1]
[--proxy] [--soak 0]``.

Starts the app on a free local port: ``--processes 1`` (the default) a plain ``streamlit run
app.py``; ``--processes N`` with N > 1, or ``--proxy``, ``python -m tools.serve --processes N``
(N Streamlit processes behind Caddy with sticky sessions). Every backend is warmed up first
(imports, checkpoint load) with a link of its own that no visitor opens. Then Chromium
(Playwright, Debian's ``chromium``) drives it as visitors would:

1. **Alone**: each distinct explorer link opened by itself, one after another: the numbers each
   shows and the time a visitor waits for them. ``--links different`` (the default): one link
   per client (texts and seeds vary); ``--links same``: every client opens one link, the one a
   teacher would hand out, so "alone" opens it once.
2. **Burst**: ``--clients`` visitors at once, one browser context each. Every page must show the
   numbers its link showed alone; printed: how many did (and how many showed other numbers,
   which must be none), the clients' wait (p50 / p95), the server's own compute time per request
   (the explorer's "Computed in" line) against alone, the slowest and 95th-percentile answers of
   the health check, polled every 0.2 s during the burst from a separate process through the
   address visitors use (the proxy, where there is one), and how the visitors spread over the
   backends (by Caddy's ``lb`` cookie).
3. **Soak** (``--soak``, default 0: off): varied explorer requests (texts, T, seeds, checkpoints)
   in sequence, then the server's resident memory (its process tree's RSS) against at start.

For every phase, from the server's side: **CPU seconds per visit** (utime + stime of every
server process, Streamlit backends, Caddy and the launcher with their children, from
``/proc/<pid>/stat`` before and after the phase, over the visits in it) and the **visit
latency** p50 / p95 from the run log the app writes (``$UQ_RUN_LOG``, set to a temporary file
for the servers started here; ``ui.logic.runlog``): a visit is one session, from its first script
run's start to its last run's end within the phase.

The last line is one JSON object with every figure. Figures only; nothing passes or fails. The
clients' wait includes the browsers' own rendering on the same cores: the "alone" row measures
that part (one browser, no contention) and the "Computed in" line and the run log the server's
part.

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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from tools.serve import COOKIE, backend_cookie, free_port, streamlit_command
from ui.logic import runlog
from uqcore.registry import list_checkpoints
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.tasks import DEFAULT_CHECKPOINT

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
CLK_TCK = os.sysconf("SC_CLK_TCK")
WARM_SEED = 99  # the warm-up link's seed: no visitor's link (theirs start at 100)


# -- pure helpers: /proc, percentiles, the run log -------------------------------------------


def parse_stat(text: str) -> tuple[int, float]:
    """``(parent pid, CPU seconds)`` from one ``/proc/<pid>/stat`` line: utime + stime + cutime +
    cstime, the process's own and that of the children it has waited for (a restarted backend,
    a finished helper). The name in brackets may hold spaces and brackets: fields are read after
    its last ``)``."""
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / CLK_TCK


def _stat(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None


def tree_pids(root: int) -> list[int]:
    """``root`` and every live descendant of it (by parent pid, read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (text := _stat(int(entry.name))):
            children.setdefault(parse_stat(text)[0], []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    text = _stat(pid)
    return text is not None and text.rsplit(")", 1)[1].split()[0] != "Z"


def cpu_seconds(root: int) -> float:
    """CPU seconds used so far by ``root``'s process tree (:func:`parse_stat` of each)."""
    return sum(parse_stat(t)[1] for p in tree_pids(root) if (t := _stat(p)))


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile of ``values`` by nearest rank (``q`` in [0, 1])."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


_pct = percentile


def visits(runs: list[dict], since: float, until: float) -> dict[str, dict]:
    """The run log's visits within ``[since, until]`` (wall-clock seconds): per session whose
    runs started in the window, ``{"seconds"``: its first run's start to its last run's end,
    ``"cpu_s"``: its runs' script CPU seconds, ``"runs"``}."""
    out: dict[str, dict] = {}
    for r in runs:
        if not since <= r["start"] <= until:
            continue
        v = out.setdefault(
            r["session"], {"start": r["start"], "end": r["end"], "cpu_s": 0.0, "runs": 0}
        )
        v["start"], v["end"] = min(v["start"], r["start"]), max(v["end"], r["end"])
        v["cpu_s"] += r.get("cpu_s", 0.0)
        v["runs"] += 1
    return {
        k: {"seconds": v["end"] - v["start"], "cpu_s": v["cpu_s"], "runs": v["runs"]}
        for k, v in out.items()
    }


def visit_seconds(runs: list[dict], since: float, until: float) -> list[float]:
    """Each visit's server-side latency within ``[since, until]`` (:func:`visits`)."""
    return [v["seconds"] for v in visits(runs, since, until).values()]


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (MB), from /proc."""
    total = 0
    for p in tree_pids(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


# -- the server -------------------------------------------------------------------------------

BACKEND = re.compile(r"^backend \d+/\d+: http://(\S+) \(pid \d+\)$", re.M)


class Server:
    """The app on a free port, stopped with :meth:`stop`: ``streamlit run app.py`` alone, or
    (``proxied``) ``python -m tools.serve --processes N`` behind Caddy."""

    def __init__(
        self,
        log: Path,
        processes: int = 1,
        proxied: bool = False,
        env: dict[str, str] | None = None,
        cpus: str = "",
    ):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proxied = proxied or processes > 1
        self.log = log
        self._log = log.open("w")
        if self.proxied:
            cmd = [
                sys.executable,
                "-m",
                "tools.serve",
                "--processes",
                str(processes),
                "--port",
                str(self.port),
            ]
        else:
            cmd = streamlit_command(self.port)
            # (no file watcher: edits during a run must not reload modules)
        if cpus:  # the server (and every process it starts) on these CPUs only
            cmd = ["taskset", "-c", cpus, *cmd]
        self.proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.time() + 60 + 60 * processes
        while time.time() < deadline and self.proc.poll() is None:
            if self.health() is not None:
                break
            time.sleep(0.3)
        else:
            self.stop()
            raise RuntimeError(f"the server did not start; see {log}")
        # where each visitor can be sent: the backends tools.serve printed, or the one server
        self.dials = (
            BACKEND.findall(log.read_text()) if self.proxied else [f"127.0.0.1:{self.port}"]
        )

    def health(self, timeout: float = 5.0) -> float | None:
        """Seconds the health check took to answer (None if it did not)."""
        started = time.perf_counter()
        try:
            ok = urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=timeout).read()
        except OSError:
            return None
        return time.perf_counter() - started if ok == b"ok" else None

    def cpu_s(self) -> float:
        """CPU seconds of every server process so far (the launcher's tree where proxied)."""
        return cpu_seconds(self.proc.pid)

    def rss_mb(self) -> float:
        return _rss_mb(self.proc.pid)

    def stop(self) -> None:
        """SIGTERM to the server's group (tools.serve then stops its own children's groups)."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=60)
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
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _PROBE, url], stdout=subprocess.PIPE, text=True
        )
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


def link(ckpt: str, text: str, T: int, seed: int) -> str:
    return "/?" + urlencode({"ckpt": ckpt, "text": text, "label": 0, "T": T, "seed": seed})


def links_for(ckpt: str, T: int, clients: int, same: bool) -> list[str]:
    """Each client's link: one for all (``same``) or one each (texts and seeds vary)."""
    if same:
        return [link(ckpt, TEXTS[0], T, 100)] * clients
    return [link(ckpt, TEXTS[i % len(TEXTS)], T, 100 + i) for i in range(clients)]


def _context(browser, url: str, dial: str | None = None):
    """A fresh browser context; with ``dial``, pinned to that backend by Caddy's cookie."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    if dial:
        context.add_cookies([{"name": COOKIE, "value": backend_cookie(dial), "url": url}])
    return context


def _backend(context, url: str, dials: list[str]) -> str | None:
    """The backend Caddy's cookie in ``context`` names (None: no cookie, no proxy)."""
    by_cookie = {backend_cookie(d): d for d in dials}
    for c in context.cookies(url):
        if c["name"] == COOKIE:
            return by_cookie.get(c["value"])
    return None


def _open(
    browser, base: str, path: str, dial: str | None = None, timeout_ms: int = 600_000
) -> dict:
    """Open ``path`` in a fresh context; the numbers shown, the wait and the server's compute."""
    context = _context(browser, base, dial)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    started = time.perf_counter()
    try:
        page.goto(base + path, wait_until="commit")
        values, line = _shown(page)
        return {
            "values": values,
            "wait_s": time.perf_counter() - started,
            "compute_s": float(line.split()[2]),
        }
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


class Phase:
    """The server's side of one phase: CPU seconds of its processes and the run log's visits
    between :meth:`start` and :meth:`end`."""

    def __init__(self, server: Server, log: str):
        self.server, self.log = server, log

    def start(self) -> Phase:
        self.cpu0, self.t0 = self.server.cpu_s(), time.time()
        return self

    def end(self, n_visits: int) -> dict:
        t1 = time.time()
        time.sleep(0.5)  # the last run's line is written as its run ends
        cpu = self.server.cpu_s() - self.cpu0
        seen = visits(runlog.read(self.log), self.t0, t1)
        seconds = [v["seconds"] for v in seen.values()]
        return {
            "visits": n_visits,
            "server_cpu_s": round(cpu, 2),
            "server_cpu_per_visit_s": round(cpu / n_visits, 3) if n_visits else None,
            "script_cpu_per_visit_s": (
                round(sum(v["cpu_s"] for v in seen.values()) / len(seen), 3) if seen else None
            ),
            "server_visit_p50_s": round(percentile(seconds, 0.5), 3) if seconds else None,
            "server_visit_p95_s": round(percentile(seconds, 0.95), 3) if seconds else None,
            "runlog_visits": len(seen),
        }


def _say(name: str, figures: dict) -> None:
    print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in figures.items()), flush=True)


def run(
    clients: int,
    soak: int,
    ckpt: str,
    soak_ckpts: list[str],
    T: int,
    browser_nice: int = 19,
    same: bool = False,
    processes: int = 1,
    proxy: bool = False,
    server_cpus: str = "",
) -> dict:
    from playwright.sync_api import sync_playwright

    logs = Path(tempfile.mkdtemp(prefix="uq-loadtest-"))
    log = str(logs / "runs.jsonl")
    print(f"logs in {logs}", flush=True)
    server = Server(logs / "server.log", processes, proxy, {runlog.ENV: log}, server_cpus)
    report: dict = {
        "clients": clients,
        "soak": soak,
        "T": T,
        "ckpt": ckpt,
        "browser_nice": browser_nice,
        "links": "same" if same else "different",
        "processes": processes,
        "proxy": server.proxied,
        "server_cpus": server_cpus or "all",
    }
    base, dials = server.url, server.dials
    pin = server.proxied
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=_niced_chromium(logs, browser_nice),
                args=["--no-sandbox", "--disable-gpu"],
            )
            links = links_for(ckpt, T, clients, same)
            for d in dials:  # warm-up: imports, checkpoint load, in every backend
                _open(browser, base, link(ckpt, TEXTS[0], T, WARM_SEED), d if pin else None)
            report["rss_start_mb"] = round(server.rss_mb())
            distinct = list(dict.fromkeys(links))
            phase = Phase(server, log).start()
            solo = {u: _open(browser, base, u) for u in distinct}
            alone = [solo[u] for u in distinct]
            report["alone"] = {
                "wait_p50_s": round(percentile([a["wait_s"] for a in alone], 0.5), 2),
                "compute_p50_s": round(percentile([a["compute_s"] for a in alone], 0.5), 3),
                **phase.end(len(distinct)),
            }
            _say("alone", report["alone"])
            # the burst: every link at once, a health probe polling beside it
            watcher = Prober(base)  # its own process: not slowed by Playwright's GIL
            phase = Phase(server, log).start()
            burst: list[dict] = []
            pages = []
            started = time.perf_counter()
            for u in links:  # one browser, one context per visitor, all opened now
                context = _context(browser, base)
                page = context.new_page()
                page.set_default_timeout(900_000)
                page.goto(base + u, wait_until="commit")
                pages.append((context, page))
            landed: dict[str, int] = {}
            for context, page in pages:
                values, line = _shown(page)
                burst.append(
                    {
                        "values": values,
                        "wait_s": time.perf_counter() - started,  # upper bound: in order
                        "compute_s": float(line.split()[2]),
                    }
                )
                where = _backend(context, base, dials) or dials[0]
                landed[where] = landed.get(where, 0) + 1
                context.close()
            probes = watcher.stop()
            server_side = phase.end(clients)
            expected = [solo[u]["values"] for u in links]
            same_count = sum(b["values"] == e for e, b in zip(expected, burst, strict=True))
            for i, (e, b) in enumerate(zip(expected, burst, strict=True)):
                if e != b["values"]:  # say what differed: the figures must be equal
                    print(f"  client {i}: alone {e} / burst {b['values']}")
            report["burst"] = {
                "identical_to_alone": same_count,
                "differing": sum(
                    1
                    for e, b in zip(expected, burst, strict=True)
                    if e and b["values"] and e != b["values"]
                ),
                "wait_p50_s": round(percentile([b["wait_s"] for b in burst], 0.5), 2),
                "wait_p95_s": round(percentile([b["wait_s"] for b in burst], 0.95), 2),
                "compute_p50_s": round(percentile([b["compute_s"] for b in burst], 0.5), 3),
                "compute_alone_p50_s": report["alone"]["compute_p50_s"],
                "alone_wait_p50_s": report["alone"]["wait_p50_s"],
                "health_max_s": round(max(probes), 3) if probes else None,
                "health_p95_s": round(percentile(probes, 0.95), 3) if probes else None,
                "health_probes": len(probes),
                "per_backend": sorted(landed.values(), reverse=True),
                **server_side,
            }
            print(f"burst of {clients}: {same_count}/{clients} identical to alone")
            _say("burst", {k: v for k, v in report["burst"].items() if k != "identical_to_alone"})
            # the soak: varied requests one after another
            times = []
            phase = Phase(server, log).start()
            for n in range(soak):
                name = soak_ckpts[n % len(soak_ckpts)]
                u = link(name, TEXTS[n % len(TEXTS)] + f" ({n})", (10, 50, 100, 300)[n % 4], n)
                times.append(_open(browser, base, u)["compute_s"])
                if (n + 1) % 50 == 0:
                    print(f"soak {n + 1}/{soak}: server RSS {server.rss_mb():.0f} MB")
            if soak:
                report["soak_phase"] = phase.end(soak)
                _say("soak", report["soak_phase"])
            report["soak_compute_p50_s"] = round(percentile(times, 0.5), 3) if times else None
            report["rss_after_soak_mb"] = round(server.rss_mb())
            browser.close()
    finally:
        server.stop()
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.loadtest", description=__doc__.splitlines()[0]
    )
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--soak", type=int, default=0, help="varied requests after the burst")
    p.add_argument("--T", type=int, default=50)
    p.add_argument("--ckpt", default=DEFAULT_CHECKPOINT)
    p.add_argument(
        "--links",
        choices=("different", "same"),
        default="different",
        help="one link per visitor, or every visitor on one link",
    )
    p.add_argument(
        "--processes", type=int, default=1, help="Streamlit processes (above 1: tools.serve, Caddy)"
    )
    p.add_argument(
        "--proxy",
        action="store_true",
        help="go through python -m tools.serve (Caddy) even with one process",
    )
    p.add_argument(
        "--server-cpus",
        default="",
        help="run the server on these CPUs only (taskset -c; e.g. 0 for one core)",
    )
    p.add_argument("--soak-ckpts", default="", help="comma-separated (default: --ckpt's task's)")
    p.add_argument(
        "--browser-nice",
        type=int,
        default=19,
        choices=range(20),
        help="CPU priority of the browsers (19: lowest, as remote visitors; 0: the server's)",
    )
    args = p.parse_args(argv)
    if args.processes < 1:
        p.error("--processes must be at least 1")
    soak = (
        args.soak_ckpts.split(",")
        if args.soak_ckpts
        else _same_task(args.ckpt)
        if args.soak
        else []
    )
    report = run(
        args.clients,
        args.soak,
        args.ckpt,
        soak,
        args.T,
        args.browser_nice,
        args.links == "same",
        args.processes,
        args.proxy,
        args.server_cpus,
    )
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
