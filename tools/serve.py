"""Many visitors: ``python -m tools.serve [--processes N] [--port 8501] [--address 127.0.0.1]``.

A Streamlit session lives in one process, and one process answers its sessions on one core at a
time (Python's GIL). This launcher runs several app processes behind Debian's Caddy as the
reverse proxy. The contract:

- **Backends**: ``N`` (default: the CPUs this process may use) processes of ``python -m
  streamlit run app.py --server.headless true --server.address 127.0.0.1 --server.port <free
  port> --server.fileWatcherType none``, from the repository root, with this process's
  environment (so ``UQ_CHECKPOINT_DIR``, ``UQ_DEVICE``, ``UQ_RUN_LOG`` reach them). One random
  ``server.cookieSecret`` is made per launch and shared by all of them (in the environment, as
  ``STREAMLIT_SERVER_COOKIE_SECRET``: Streamlit refuses it as a flag, and ``ps`` shows flags).
- **Proxy**: ``/usr/bin/caddy`` (``apt-get install -y caddy``) on ``http://ADDRESS:PORT``, plain
  HTTP, its admin endpoint off (two launches never collide), its JSON config, its data and the
  logs in a temporary folder. Sticky sessions: Caddy's ``cookie`` policy sets the cookie ``lb``
  on a visitor's first answer and sends every later request carrying it (the websocket
  ``/_stcore/stream``, uploads ``/_stcore/upload_file``, downloads ``/media/``) to the same
  backend; the value is :func:`backend_cookie` of the backend's address. Active health checks
  of ``/_stcore/health`` every 2 s: a backend that fails one gets no new visitors until it
  answers again.
- **Start**: waits until every backend and then the proxy answer ``/_stcore/health`` with
  ``ok``, then prints one line per backend (``backend i/N: http://127.0.0.1:PORT (pid P)``),
  one for Caddy and last ``Serving http://ADDRESS:PORT ...``.
- **Supervision**: a backend (or Caddy) that exits is started again on the same port (polled
  every 2 s); its visitors' pages reconnect to a live backend and rebuild their view from the
  link by themselves (``app.py``'s auto-rerun fragment makes the frontend ask for a run on
  reconnecting; without it a finished page stayed idle until a reload).
- **Stop**: on SIGINT or SIGTERM every process it started is stopped with its children (each
  runs in a process group of its own: SIGTERM, SIGKILL after 15 s), and the temporary folder is
  removed (kept, and named, when the start failed). The children also get SIGTERM if this
  launcher is killed outright (Linux's parent-death signal).
- Without Caddy it exits with status 2 and one line saying how to install it.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CADDY = "/usr/bin/caddy"
COOKIE = "lb"
HEALTH = "/_stcore/health"
POLL_S = 2.0
START_TIMEOUT_S = 180.0
STOP_GRACE_S = 15.0
BACKEND_HOST = "127.0.0.1"


def free_port(host: str = BACKEND_HOST) -> int:
    """A TCP port free on ``host`` now (the OS's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def backend_cookie(dial: str) -> str:
    """The value of the ``lb`` cookie that sends a visitor to the backend ``dial``
    (``"127.0.0.1:PORT"``): Caddy's cookie policy stores HMAC-SHA256 of the address, here with
    no secret (it only routes: a visitor who picks a backend gains nothing). Lets a test or the
    load test pin a browser to a backend."""
    return hmac.new(b"", dial.encode(), hashlib.sha256).hexdigest()


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether ``url``'s Streamlit health check answers ``ok``."""
    try:
        return urllib.request.urlopen(url + HEALTH, timeout=timeout).read() == b"ok"
    except OSError:
        return False


def streamlit_command(port: int) -> list[str]:
    """The one ``streamlit run app.py`` command line every launcher here uses (this server's
    backends, the browser tests, the screenshots, the load test): headless, on the loopback
    address only, and without a file watcher (an edit during a run must not reload modules)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        BACKEND_HOST,
        "--server.port",
        str(port),
        "--server.fileWatcherType",
        "none",
    ]


def _listen(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


# Streamlit's frontend: /static/js/x.js is STATIC_ROOT/static/js/x.js; every name there carries
# its content's hash, so browsers may keep them (as Streamlit itself says for these files)
STATIC_ROOT = Path(importlib.util.find_spec("streamlit").origin).parent / "static"
IMMUTABLE = "public, max-age=31536000, immutable"


def caddy_config(address: str, port: int, dials: list[str]) -> dict:
    """Caddy's JSON config: plain HTTP on ``address:port`` to ``dials`` with sticky sessions
    and active health checks; no admin endpoint, nothing saved, no automatic HTTPS. Caddy
    serves the frontend's static files (``/static/*``) from Streamlit's package itself."""
    proxy = {
        "handler": "reverse_proxy",
        "upstreams": [{"dial": d} for d in dials],
        "load_balancing": {
            "selection_policy": {"policy": "cookie", "name": COOKIE},
            "try_duration": "30s",
        },  # a request waits for a backend to come up
        "health_checks": {
            "active": {
                "uri": HEALTH,
                "interval": f"{POLL_S:g}s",
                "timeout": "10s",
                "expect_body": "ok",
            }
        },
    }
    static = {  # the frontend's files, by Caddy itself: no Python work for 5 MB a visitor
        "match": [{"path": ["/static/*"]}],
        "handle": [
            {"handler": "headers", "response": {"set": {"Cache-Control": [IMMUTABLE]}}},
            {"handler": "file_server", "root": str(STATIC_ROOT)},
        ],
        "terminal": True,
    }
    server = {
        "listen": [_listen(address, port)],
        "routes": [static, {"handle": [proxy]}] if STATIC_ROOT.is_dir() else [{"handle": [proxy]}],
        "automatic_https": {"disable": True},
    }
    return {
        "admin": {"disabled": True, "config": {"persist": False}},
        "logging": {"logs": {"default": {"level": "WARN"}}},
        "apps": {"http": {"grace_period": "2s", "servers": {"uq": server}}},
    }


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Child:
    """One supervised process in a process group of its own, its output in ``log``."""

    def __init__(self, name: str, cmd: list[str], log: Path, env: dict[str, str]):
        self.name, self.cmd, self.log, self.env = name, cmd, log, env
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                self.cmd,
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def exited(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def signal(self, sig: int) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def last_line(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(no output)"


class Launcher:
    """The backends and Caddy of one launch (see the module's contract)."""

    def __init__(self, processes: int, port: int, address: str, caddy: str = CADDY):
        self.folder = Path(tempfile.mkdtemp(prefix="uq-serve-"))
        self.url = f"http://{_listen(address, port)}"
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_urlsafe(32)}
        self.backends: list[tuple[str, Child]] = []
        for i in range(processes):
            p = free_port()
            child = Child(
                f"backend {i + 1}/{processes}",
                streamlit_command(p),
                self.folder / f"backend-{p}.log",
                env,
            )
            self.backends.append((f"{BACKEND_HOST}:{p}", child))
        config = self.folder / "caddy.json"
        config.write_text(json.dumps(caddy_config(address, port, [d for d, _ in self.backends])))
        xdg = {"XDG_DATA_HOME": str(self.folder), "XDG_CONFIG_HOME": str(self.folder)}
        self.caddy = Child(
            "caddy",
            [caddy, "run", "--config", str(config)],
            self.folder / "caddy.log",
            {**os.environ, **xdg},
        )

    def children(self) -> list[Child]:
        return [c for _, c in self.backends] + [self.caddy]

    def _wait(self, child: Child, url: str, stop: threading.Event) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(url):
            if stop.is_set():
                raise InterruptedError
            if child.exited():
                raise RuntimeError(f"{child.name} exited: {child.last_line()} (see {child.log})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{child.name} did not answer {url}{HEALTH} (see {child.log})")
            stop.wait(0.3)

    def start(self, stop: threading.Event) -> None:
        for _, child in self.backends:
            child.start()
        for dial, child in self.backends:
            self._wait(child, f"http://{dial}", stop)
            print(f"{child.name}: http://{dial} (pid {child.proc.pid})", flush=True)
        self.caddy.start()
        self._wait(self.caddy, self.url, stop)
        print(f"caddy: pid {self.caddy.proc.pid}, config {self.folder / 'caddy.json'}", flush=True)

    def supervise(self, stop: threading.Event) -> None:
        """Restart whatever exits, every :data:`POLL_S` seconds, until ``stop`` is set."""
        while not stop.wait(POLL_S):
            for child in self.children():
                if child.exited():
                    code = child.proc.returncode
                    child.signal(signal.SIGKILL)  # whatever it left in its group
                    child.start()
                    print(
                        f"{child.name} exited ({code}); restarted (pid {child.proc.pid})",
                        flush=True,
                    )

    def stop(self) -> None:
        """Every process group: SIGTERM, then SIGKILL for what is left after the grace."""
        children = [c for c in self.children() if c.proc is not None]
        for child in children:
            child.signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for child in children:
            try:
                child.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            child.signal(signal.SIGKILL)  # stragglers of the group (or the leader itself)
            child.proc.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.serve", description=__doc__.splitlines()[0])
    p.add_argument(
        "--processes",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="Streamlit processes (default: the CPUs this process may use)",
    )
    p.add_argument("--port", type=int, default=8501, help="the address visitors use: port")
    p.add_argument("--address", default="127.0.0.1", help="... and interface (0.0.0.0: all)")
    args = p.parse_args(argv)
    most = 4 * len(os.sched_getaffinity(0))  # each holds its own models: ~0.65 GB
    if not 1 <= args.processes <= most:
        p.error(
            f"--processes must be 1 to {most} (four per CPU here; each process holds its "
            "own models, about 0.65 GB)"
        )
    if not 1 <= args.port <= 65535:
        p.error("--port must be 1 to 65535")
    caddy = CADDY if os.access(CADDY, os.X_OK) else shutil.which("caddy")
    if not caddy:
        print(f"tools.serve needs Caddy at {CADDY}: apt-get install -y caddy", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    launcher = Launcher(args.processes, args.port, args.address, caddy)
    failed = False
    try:
        launcher.start(stop)
        print(
            f"Serving {launcher.url} with {args.processes} Streamlit process"
            f"{'es' if args.processes > 1 else ''} behind Caddy (sticky sessions); "
            "Ctrl-C stops them all.",
            flush=True,
        )
        launcher.supervise(stop)
    except InterruptedError:
        pass
    except RuntimeError as exc:
        failed = True
        print(f"tools.serve: {exc}", file=sys.stderr)
    finally:
        launcher.stop()
        if not failed:
            shutil.rmtree(launcher.folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
