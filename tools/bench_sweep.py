"""Bench of the Temperature sweep's compute: ``python -m tools.bench_sweep [--ckpt NAME ...]
[--markdown docs/performance.md]``.

For each checkpoint and each temperature it can sweep, the sweep's tables at the page's defaults
(the default values, 60 examples per domain, T = 10, seed 0; :func:`ui.logic.sweep.records`)
are computed four ways: one value at a time (what the page did before: a
:func:`uqlab.workbench.compute.many_probs` call per value), as one grid
(:func:`uqlab.workbench.compute.many_probs_grid`: the noise drawn once, the values in one pass,
its batches on one worker thread per core: :func:`uqcore.runtime.across_cores`), as one grid
on the caller's one pool of threads (the batches one after another: the grid until the
afternoon of 2026-12-02) and as that with every pass on every thread
(:func:`uqcore.runtime.one_thread` off: the noise's hashing and the shortcut as they ran before
2026-12-02).
Each runs with empty prefix and samples caches (a first sweep), in the process's main thread and
in new threads (as Streamlit runs a script), under three OpenMP wait policies
(:data:`POLICIES`), each in processes of their own. Each figure is the least of ``--repeats``
runs after a warm-up. The matmul floor of the same work
is :mod:`tools.bench`'s. Prints a table and one JSON line; figures only, nothing passes or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

# not tools.bench's ROOT: importing tools.bench sets the server's wait policy in this process
ROOT = Path(__file__).resolve().parent.parent

CHECKPOINTS = ("imdb-hsto", "cola-minilm-hsto")  # tools.bench's two
POLICIES = {  # OpenMP wait policy -> the environment that sets it
    "PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "spin 10000": {"GOMP_SPINCOUNT": "10000"},
    "default": {},
}
WAYS = (  # see sweep_seconds
    "one value at a time",
    "one grid",
    "one grid, one pool",
    "one grid, all threads",
)
WHERE = ("main thread", "new thread")


def sweep_seconds(ck, rows: list, knob: str, way: str) -> float:
    """Seconds of the sweep's tables over ``rows`` for ``knob`` at the page's default values,
    T = 10, seed 0, with empty prefix and samples caches, computed ``way``: one sampler call
    per value, or one grid; "one grid, one pool" is the grid with its batches one after
    another on the caller's threads (:data:`uqcore.runtime.SPLIT_ACROSS_CORES` off), "one grid,
    all threads" that with :func:`uqcore.runtime.one_thread` switched off too, so that every
    pass of the noise and the shortcut may use every thread (what the library did before)."""
    from ui.logic import sweep
    from uqcore import runtime
    from uqcore.inference.prefix import PrefixCache
    from uqcore.settings import SamplingSettings
    from uqlab.workbench.compute import many_probs, many_probs_grid

    cache, owner = PrefixCache(2**30, 2**30), ("bench", ck.name)

    def probs_grid(texts, values):
        grid = tuple(SamplingSettings(**{knob: v}) for v in values)
        if way != WAYS[0]:
            return many_probs_grid(ck, tuple(texts), 10, 0, grid, cache, owner)
        return [many_probs(ck, tuple(texts), 10, 0, s, cache, owner) for s in grid]

    runtime.ONE_THREAD_BLOCKS = way != WAYS[3]
    runtime.SPLIT_ACROSS_CORES = way in WAYS[:2]
    try:
        started = time.perf_counter()
        sweep.records(rows, probs_grid, list(sweep.DEFAULT_GRID))
        return time.perf_counter() - started
    finally:
        runtime.ONE_THREAD_BLOCKS = runtime.SPLIT_ACROSS_CORES = True


def time_sweep(name: str, repeats: int, fresh_threads: bool = False) -> dict:
    """``{knob: {way: seconds}}`` for checkpoint ``name``; with ``fresh_threads`` every call
    (the checkpoint's load too) runs in a thread of its own, as Streamlit runs each script run,
    so no other thread of the process holds an OpenMP pool, as in the server."""
    from ui.logic import sweep
    from uqlab.workbench import dataset
    from uqlab.workbench.notebook import checkpoint

    call = _in_thread if fresh_threads else (lambda f: f())
    ck, info = call(lambda: checkpoint(name))
    rows = dataset.pick(info.task, 60, 0)
    out: dict = {}
    for knob in sweep.knobs(info):
        out[knob] = {}
        for way in WAYS:
            run = lambda k=knob, w=way: sweep_seconds(ck, rows, k, w)  # noqa: E731
            call(run)  # warm-up: encodings, the allocator
            out[knob][way] = round(min(call(run) for _ in range(repeats)), 3)
    return out


def _in_thread(fn):
    """``fn()`` in a fresh thread, which ends before this returns; its result."""
    got: list = []
    worker = threading.Thread(target=lambda: got.append(fn()))
    worker.start()
    worker.join()
    return got[0]


def render(report: dict) -> str:
    """The section of docs/performance.md."""
    import datetime

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## The temperature sweep's compute",
        "",
        "Written by `python -m tools.bench_sweep --markdown docs/performance.md` "
        f"({os.cpu_count()} logical CPUs, {when}): the page's defaults (five values, 60 examples "
        "per domain, T = 10), empty caches, seconds, the least of several runs, each policy in a "
        "process of its own. `PASSIVE`: idle OpenMP threads sleep at once (`OMP_WAIT_POLICY`); "
        "`spin 10000`: they spin 10,000 rounds first (`GOMP_SPINCOUNT`); `default`: libgomp's "
        "own (300,000 rounds). Main thread: the process's only thread; new thread: every call, "
        "the checkpoint's load too, in a thread of its own that then ends (a Streamlit script "
        "run's, with no other thread holding an OpenMP pool, as in the server).",
        "",
        "| checkpoint | swept | policy | way | main thread | new thread |",
        "|---|---|---|---|---:|---:|",
    ]
    first = next(iter(report.values()))["main thread"]
    for name, knobs in first.items():
        for knob, ways in knobs.items():
            for policy, per in report.items():
                for way in ways:
                    main, new = (per[w][name][knob][way] for w in WHERE)
                    lines.append(f"| {name} | {knob} | {policy} | {way} | {main:.3f} | {new:.3f} |")
    lines += ["", "```json", json.dumps(report), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.bench_sweep", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--ckpt", nargs="+", default=list(CHECKPOINTS))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--markdown", metavar="PATH", help="also write the section of PATH")
    p.add_argument("--child", choices=WHERE, help=argparse.SUPPRESS)  # one process's runs
    args = p.parse_args(argv)
    if args.child:
        fresh = args.child == WHERE[1]
        print(json.dumps({n: time_sweep(n, args.repeats, fresh) for n in args.ckpt}))
        return 0
    report: dict = {}
    for policy, settings in POLICIES.items():
        env = {
            k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
        }
        env.update(settings)
        for where in WHERE:
            cmd = [sys.executable, "-m", "tools.bench_sweep", "--child", where, "--repeats"]
            cmd += [str(args.repeats), "--ckpt", *args.ckpt]
            done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(done.stderr[-2000:])
            report.setdefault(policy, {})[where] = json.loads(done.stdout.strip().splitlines()[-1])
    text = render(report)
    print(text)
    if args.markdown:
        from uqlab.benches.report import write_section

        write_section(args.markdown, "tools.bench_sweep", text)
        print(f"wrote the sweep's section of {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
