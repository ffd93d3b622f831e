"""Where a visit's server time goes: ``python -m tools.bench_visit [--ckpt NAME ...] [--T 50]
[--links 8] [--profile]``.

Opens explorer links the way a shared link is opened (``app.py`` under ``streamlit.testing``,
a new session per visit, the link's query parameters set) and splits the server's CPU seconds
of each visit (process CPU time, so the sampling's worker threads count; not wall time, as the
cores are shared) into:

* **sampling**: ``ui.cached.explore`` (the cache lookup on a repeat);
* **figure building**: the builders of :mod:`uqlab.workbench.figures` (a figure's plotly JSON, or
before issue 32 the validated ``go.Figure``), the views' arrays for them included;
* **figure objects**: :func:`uqlab.workbench.titles.as_figure`, the session's own figure of a
cached spec; * **figure cache**: its lookups, and sizing what it keeps;
* **st.plotly_chart**: Streamlit's serialisation of each figure (``to_dict``, ``to_json``, the
  element id);
* **protobuf**: each message the script sends, serialised as the server does for the websocket
  (timed here, in the script's thread);
* **checkpoint listing**: ``ui.cached._scan``, the folder's checkpoints read back from
  ``st.cache_data`` (unpickled on every call);
* **rest of the script**: everything else (sidebar, widgets, metrics, state).

Each link (a seed of its own) is opened fresh (nothing cached) and then again from another
session (the result cached across sessions), **before** (the validated builders of
``viz/reference.py``, no figure cache: the explorer as it was before issue 32) and
**after** (this code), interleaved link by link with the caches cleared between, after one
unmeasured warm-up visit per checkpoint and mode (model load, imports). The AppTest harness's
own work (reading the messages back into elements) is not the server's and is left out, and
the page scripts are compiled once for all visits, as the server's script cache does (AppTest
compiles them again for each test).
Prints one table per checkpoint (milliseconds of CPU per visit, mean over the links), then one
JSON line. Figures only; nothing passes or fails.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # the server's (app.py), before torch

import argparse
import contextlib
import cProfile
import gc
import io
import json
import pstats
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = "John is tall on several occasions."
CHECKPOINTS = ("cola-minilm-hsto", "cola-minilm-bam")
CATEGORIES = (
    "sampling",
    "figure building",
    "figure objects",
    "figure cache",
    "st.plotly_chart",
    "protobuf",
    "checkpoint listing",
    "rest of the script",
)
BUILDERS = (
    "prediction_histogram",
    "running_mean_figure",
    "attention_panels",
    "centroid_panels",
    "bar_figure",
    "prior_posterior_figure",
)
MODES = ("before", "after")


class Meter:
    """Exclusive CPU time per category: a category entered inside another pauses the outer
    one, so the categories add up to the visit's total."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[str] = []
        self._mark = 0.0

    @property
    def active(self) -> bool:
        return bool(self._stack)

    def enter(self, category: str) -> None:
        now = time.process_time()
        if self._stack:
            self.totals[self._stack[-1]] += now - self._mark
        self._stack.append(category)
        self._mark = now

    def exit(self) -> None:
        now = time.process_time()
        self.totals[self._stack.pop()] += now - self._mark
        self._mark = now

    @contextlib.contextmanager
    def timing(self, category: str):
        self.enter(category)
        try:
            yield
        finally:
            self.exit()

    def wrap(self, category: str, fn):
        def timed(*args, **kwargs):
            with self.timing(category):
                return fn(*args, **kwargs)

        timed.__wrapped__ = fn
        return timed


class Instruments:
    """The patches that time a visit (``mode`` "after": this code; "before": the validated
    builders and no figure cache, as before issue 32)."""

    def __init__(self) -> None:
        import streamlit as st
        from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

        from ui import cached, explore_views
        from ui.logic import runlog
        from uqlab.workbench import figures
        from viz import reference as viz_reference

        self.meter = Meter()
        self.profile: cProfile.Profile | None = None
        self.mods = {"st": st, "cached": cached, "V": explore_views, "F": figures}
        self.own = {name: getattr(figures, name) for name in BUILDERS}
        self.reference = {name: getattr(viz_reference, name) for name in BUILDERS}
        self.originals = {
            "explore": cached.explore,
            "figure": cached.figure,
            "as_figure": explore_views.as_figure,
            "plotly_chart": st.plotly_chart,
            "scan": cached._scan,
        }
        meter = self

        @contextlib.contextmanager
        def script(*_args, **_kwargs):  # app.py's runlog.timed: the whole script run
            if meter.profile is not None:
                meter.profile.enable()
            try:
                with meter.meter.timing("rest of the script"):
                    yield
            finally:
                if meter.profile is not None:
                    meter.profile.disable()

        self._restore = [(runlog, "timed", runlog.timed)]
        runlog.timed = script
        # the server compiles each page once (its Runtime's ScriptCache); AppTest compiles it
        # anew for every test, which is not a visit's cost: one cache for every visit here
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.testing.v1 import app_test

        shared = ScriptCache()
        self._restore.append((app_test, "ScriptCache", app_test.ScriptCache))
        app_test.ScriptCache = lambda: shared
        enqueue = ScriptRunContext.enqueue

        def enqueue_and_serialise(ctx, msg):
            enqueue(ctx, msg)
            if meter.meter.active:  # what the server does next with it: bytes for the websocket
                with meter.meter.timing("protobuf"):
                    msg.SerializeToString()

        self._restore.append((ScriptRunContext, "enqueue", enqueue))
        ScriptRunContext.enqueue = enqueue_and_serialise
        self._restore += [(cached, n, getattr(cached, n)) for n in ("explore", "figure", "_scan")]
        self._restore += [
            (explore_views, "as_figure", explore_views.as_figure),
            (st, "plotly_chart", st.plotly_chart),
        ]
        self._restore += [(figures, n, getattr(figures, n)) for n in BUILDERS]
        self.set_mode("after")

    def close(self) -> None:
        """Undo every patch."""
        for owner, name, value in reversed(self._restore):
            setattr(owner, name, value)

    def _builder(self, name: str, mode: str):
        wrap = self.meter.wrap
        if mode == "before":  # the validated builder, its figure drawn as it is
            fn = wrap("figure building", self.reference[name])
            fn.spec = fn
            return fn
        fn = wrap("figure building", self.own[name])
        fn.spec = wrap("figure building", self.own[name].spec)
        return fn

    def set_mode(self, mode: str) -> None:
        m, o, wrap = self.mods, self.originals, self.meter.wrap
        m["cached"].explore = wrap("sampling", o["explore"])
        m["st"].plotly_chart = wrap("st.plotly_chart", o["plotly_chart"])
        m["cached"]._scan = wrap("checkpoint listing", o["scan"])
        m["cached"]._scan.clear = o["scan"].clear  # ui.cached.rescan
        for name in BUILDERS:
            setattr(m["F"], name, self._builder(name, mode))
        if mode == "before":
            m["cached"].figure = lambda key, build: build()
            m["V"].as_figure = lambda fig: fig
        else:
            m["cached"].figure = wrap("figure cache", o["figure"])
            m["V"].as_figure = wrap("figure objects", o["as_figure"])

    def clear(self) -> None:
        """Forget the sampled sentences and the finished figures (loaded models stay)."""
        cached = self.mods["cached"]
        cached.explored().clear()
        cached.figures().clear()
        cached.prefix_cache().clear()


def visit(inst: Instruments, ckpt: str, T: int, seed: int) -> dict[str, float]:
    """One visit of the link from a new session: CPU seconds per category."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    link = {"ckpt": ckpt, "text": TEXT, "label": "0", "T": str(T), "seed": str(seed)}
    for key, value in link.items():
        at.query_params[key] = value
    gc.collect()
    inst.meter.totals.clear()
    at.run()
    if at.exception:
        raise RuntimeError(str(at.exception))
    if not at.get("plotly_chart"):
        raise RuntimeError(f"{ckpt}: the explorer drew no figure")
    return {c: inst.meter.totals.get(c, 0.0) for c in CATEGORIES}


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {c: sum(r[c] for r in rows) / len(rows) for c in CATEGORIES}


def measure(inst: Instruments, ckpt: str, T: int, links: int) -> dict:
    """``{mode: {"fresh": {category: s}, "repeat": {...}}}``, means over ``links`` links."""
    rows: dict[str, dict[str, list]] = {m: {"fresh": [], "repeat": []} for m in MODES}
    for mode in MODES:  # warm-up, unmeasured
        inst.set_mode(mode)
        inst.clear()
        visit(inst, ckpt, T, 0)
    for seed in range(1, links + 1):
        for mode in MODES:
            inst.set_mode(mode)
            inst.clear()
            rows[mode]["fresh"].append(visit(inst, ckpt, T, seed))
            rows[mode]["repeat"].append(visit(inst, ckpt, T, seed))
    inst.set_mode("after")
    return {m: {k: _mean(v) for k, v in rows[m].items()} for m in MODES}


def profile(inst: Instruments, ckpt: str, T: int, top: int = 30) -> str:
    """cProfile of one repeat visit (after): the functions with the most own time."""
    inst.set_mode("after")
    inst.clear()
    visit(inst, ckpt, T, 1)
    inst.profile = cProfile.Profile()
    try:
        visit(inst, ckpt, T, 1)
    finally:
        prof, inst.profile = inst.profile, None
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def table(ckpt: str, got: dict) -> str:
    """Milliseconds of CPU per visit, before and after, fresh and repeat, with the ratios."""
    cols = [(m, k) for k in ("fresh", "repeat") for m in MODES]
    head = "| " + ckpt + " | " + " | ".join(f"{k}, {m}" for m, k in cols) + " |"
    lines = [head, "|---|" + "---:|" * len(cols)]
    for c in CATEGORIES:
        lines.append(f"| {c} | " + " | ".join(f"{1000 * got[m][k][c]:.1f}" for m, k in cols) + " |")
    totals = {(m, k): sum(got[m][k].values()) for m, k in cols}
    lines.append(
        "| **total, ms of CPU per visit** | "
        + " | ".join(f"**{1000 * totals[mk]:.1f}**" for mk in cols)
        + " |"
    )
    ratio = {k: totals[("after", k)] / totals[("before", k)] for k in ("fresh", "repeat")}
    lines.append(f"| after / before | | {ratio['fresh']:.2f} | | {ratio['repeat']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ckpt", nargs="+", default=list(CHECKPOINTS))
    parser.add_argument("--T", type=int, default=50)
    parser.add_argument("--links", type=int, default=8, help="links (seeds) per checkpoint")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print cProfile of one repeat visit per checkpoint",
    )
    args = parser.parse_args(argv)
    from streamlit.logger import set_log_level

    set_log_level("error")  # AppTest runs without a server: Streamlit warns on every run
    inst = Instruments()
    report = {}
    try:
        for ckpt in args.ckpt:
            got = measure(inst, ckpt, args.T, args.links)
            report[ckpt] = got
            print(
                f"\n{ckpt}, T = {args.T}, {args.links} links (seeds 1-{args.links}), "
                f"text {TEXT!r}: CPU ms per visit (mean)\n"
            )
            print(table(ckpt, got))
            if args.profile:
                print(profile(inst, ckpt, args.T))
    finally:
        inst.close()
    print(
        json.dumps(
            {
                "T": args.T,
                "links": args.links,
                "cpus": os.cpu_count(),
                "seconds": {
                    c: {
                        m: {k: {cat: round(v, 5) for cat, v in r.items()} for k, r in mk.items()}
                        for m, mk in got.items()
                    }
                    for c, got in report.items()
                },
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
