"""Server-side timing of page runs, for the load test: with ``$UQ_RUN_LOG`` set to a file, each
script run appends one JSON line ``{"start", "end", "seconds", "cpu_s", "page", "session",
"outcome"}``: wall seconds from the script's start to its end (its last delta sent), the CPU
seconds of the script's own thread, the page's URL path, a short hash of the session id and
how the run ended (``done``, ``rerun``, ``stop`` or ``error``). Unset (the default) it does
nothing. No Streamlit here: ``app.py`` passes the session id and the page."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from contextlib import contextmanager

ENV = "UQ_RUN_LOG"
_lock = threading.Lock()


def _outcome(exc: BaseException | None) -> str:
    if exc is None:
        return "done"
    name = type(exc).__name__
    return {"RerunException": "rerun", "StopException": "stop"}.get(name, "error")


@contextmanager
def timed(session_id: str, page: str, path: str | None = None):
    """Time the run inside the ``with`` block and append its line to ``path`` (default:
    ``$UQ_RUN_LOG``; nothing when neither is set). Exceptions pass through untouched."""
    path = path or os.environ.get(ENV)
    if not path:
        yield
        return
    start, cpu0 = time.time(), time.thread_time()
    error: BaseException | None = None
    try:
        yield
    except BaseException as exc:  # Streamlit's rerun / stop signals included: timed, re-raised
        error = exc
        raise
    finally:
        end = time.time()
        line = {
            "start": round(start, 4),
            "end": round(end, 4),
            "seconds": round(end - start, 4),
            "cpu_s": round(time.thread_time() - cpu0, 4),
            "page": page,
            "session": hashlib.sha256(session_id.encode()).hexdigest()[:10],
            "outcome": _outcome(error),
        }
        with _lock, open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def read(path: str) -> list[dict]:
    """Every line of a run log (lines cut short by a killed server are skipped)."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                try:
                    out.append(json.loads(raw))
                except ValueError:
                    continue
    except OSError:
        return []
    return out
