"""App benchmark: ``python -m tools.bench [--ckpt NAME] [--imdb NAME] [--pages]``.

Prints, for the explore page on the default checkpoint (a short sentence) and a long-text one
(a 300-word review from the bundled sample of ``uqlab.catalog.tasks.LONG_TEXT_TASK``):
* the server-side time of one script run from a submitted link to every figure built, at
  T = 100 (caches cleared before each run, so the sampling is included; best and median of
  ``--repeats``), split into the sampling call and the rest (figures, widgets);
* the time and peak resident memory (VmHWM) of a fresh process serving the link at T = 1000;
* with ``--pages``, for both checkpoints, every page's first run and its compute button with
  the page's defaults (error analysis: every bundled example at T = 10).
The last line is one JSON object with every figure. Each measurement runs the real app script
under ``streamlit.testing`` (no browser: network and rendering time are not included). Figures
only; nothing here passes or fails.
"""

from __future__ import annotations

import os

# the server's OpenMP wait policy (app.py), set before torch is imported: the figures are the
# server's
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from uqlab.catalog.tasks import LONG_TEXT_CHECKPOINT, LONG_TEXT_TASK, TASKS

ROOT = Path(__file__).resolve().parent.parent
TEXT = "John is tall on several occasions."
REVIEW_WORDS = 300
# the CoLA checkpoint timed beside the long-text one (not the app's first screen, which is now
# imdb-hsto: the bench then timed imdb-hsto twice and no CoLA model)
BENCH_CHECKPOINT = "cola-minilm-hsto"
KNOB_CHECKPOINT = "imdb-minilm-hsto"  # noise in the last layer only: a knob change reuses layers
WORD_CHECKPOINT = "cola-hsto"  # the paper's word-level H-STO (noise in every layer)


def review(words: int = REVIEW_WORDS) -> str:
    """The first bundled IMDB review with at least ``words`` words, cut to ``words`` words."""
    from uqlab.data import load_eval_subset

    split = load_eval_subset(TASKS[LONG_TEXT_TASK].eval_subsets["id"])
    text = next(t for t in split.texts if len(t.split()) >= words)
    return " ".join(text.split()[:words])


def _quiet() -> None:
    """AppTest runs without a server and Streamlit warns about that on every run: noise here."""
    from streamlit.logger import set_log_level

    set_log_level("error")


def _cold() -> None:
    """Forget every cached result (Streamlit's data caches, the explored sentences, the stored
    samples read, the prefixes, the dataset pages' samples and the finished figures); loaded
    checkpoints stay, as on a running server."""
    import streamlit as st

    from ui import cached

    st.cache_data.clear()
    cached.explored().clear()
    cached.prefix_cache().clear()
    cached.stored_cache_clear()
    cached.attributions().clear()
    cached.live_maps().clear()
    cached.samples().clear()
    cached.figures().clear()


def _run_once(ckpt: str, T: int, text: str = TEXT) -> dict:
    """One cold script run in this process; returns seconds and the sampling's own seconds."""
    from streamlit.testing.v1 import AppTest

    _quiet()

    _cold()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    for key, value in {"ckpt": ckpt, "text": text, "label": "0", "T": str(T), "seed": "1"}.items():
        at.query_params[key] = value
    started = time.perf_counter()
    at.run()
    total = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(str(at.exception))
    charts = len(at.get("plotly_chart"))
    caption = [c.value for c in at.caption if c.value.startswith("Computed in")][-1]  # sampling
    sampling = float(caption.split()[2])
    return {"seconds": total, "sampling_seconds": sampling, "charts": charts}


def _page_times(ckpt: str) -> list[tuple[str, float, str]]:
    """Server-side seconds of each page's first run (cold caches), and of its compute button
    with the page's defaults where it has one."""
    from streamlit.testing.v1 import AppTest

    _quiet()

    from ui.routes import PAGES

    buttons = {
        "app_pages/table3.py": None,
        "app_pages/results.py": "res_go",
        "app_pages/errors.py": "err_go",
        "app_pages/sweep.py": "sw_go",
    }
    out = []
    for script, title, _, _ in PAGES:
        _cold()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
        at.query_params["ckpt"] = ckpt
        at.run()
        started = time.perf_counter()
        at.switch_page(script).run()
        out.append((title, time.perf_counter() - started, "page load"))
        if script in buttons:
            started = time.perf_counter()
            (at.button[0] if buttons[script] is None else at.button(key=buttons[script])).click()
            at.run()
            out.append((title, time.perf_counter() - started, "compute with the defaults"))
        if at.exception:
            raise RuntimeError(f"{script}: {at.exception}")
    return out


DATASET_PAGES = (
    ("landing", None, None),
    ("Error analysis", "app_pages/errors.py", None),
    ("Results", "app_pages/results.py", None),
    ("Table 3", "app_pages/table3.py", 0),
)  # (title, script, button index to press)


FIRST_VIEW_TRIES = 2  # each first view is timed this often (cold caches each time); the least


def _first_views(names: list[str]) -> dict[str, dict[str, float]]:
    """Seconds of each dataset page's first view at its defaults (the landing: the explorer's
    first visit with its three stories; Table 3: also its compute button on the examples), per
    checkpoint, with cold data caches (Streamlit's, the stored samples, the prefixes); the
    checkpoints themselves are loaded once first, and every page runs once before any timing
    (the imports a running server has done), as on a running server. Each view is timed
    :data:`FIRST_VIEW_TRIES` times, its caches emptied before each; the least is kept (this
    machine is shared: a stray pause is not the page's)."""
    from streamlit.testing.v1 import AppTest

    _quiet()
    out: dict[str, dict[str, float]] = {}
    for i, name in enumerate(names):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
        at.query_params["ckpt"] = name
        at.run()  # loads the checkpoint (kept across runs and sessions)
        for title, script, button in DATASET_PAGES:
            tries = []
            for _ in range(FIRST_VIEW_TRIES + (i == 0)):  # the very first run warms the process
                _cold()
                at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
                at.query_params["ckpt"] = name
                started = time.perf_counter()
                at.run()
                if script is not None:
                    started = time.perf_counter()
                    at.switch_page(script).run()
                if button is not None:
                    at.button[button].click().run()
                tries.append(time.perf_counter() - started)
                if at.exception:
                    raise RuntimeError(f"{name}, {title}: {at.exception}")
            out.setdefault(name, {})[title] = round(min(tries[-FIRST_VIEW_TRIES:]), 3)
    return out


def _knob_changes(ckpt: str, values: tuple[float, ...]) -> list[float]:
    """Seconds of Error analysis on every bundled example after each tau2 change (pressing
    Compute), in one server process: the first change computes the prefix, later ones reuse it.
    The data caches start cold; the stored samples are then not read (another tau2)."""
    from streamlit.testing.v1 import AppTest

    from ui.logic import keys as K

    _quiet()
    _cold()
    out = []
    for tau2 in values:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
        at.query_params.update({"ckpt": ckpt, "tau2": str(tau2)})
        at.run()
        at.switch_page("app_pages/errors.py").run()
        started = time.perf_counter()
        at.button(key=K.ERR_GO).click().run()
        out.append(round(time.perf_counter() - started, 3))
        if at.exception:
            raise RuntimeError(f"{ckpt}, tau2 {tau2}: {at.exception}")
    return out


def _recompute_floor(ckpt: str, tau2: float) -> dict[str, float]:
    """The matmul work of Error analysis recomputed at ``tau2`` (every bundled example, T = 10):
    with the prefix computed (a first change) and with it reused (a second change)."""
    from torch.utils.flop_counter import FlopCounterMode

    from uqcore.checkpoint import load_checkpoint
    from uqcore.inference.prefix import PrefixCache
    from uqcore.nets.linear import matmul_linear_only
    from uqcore.settings import SamplingSettings
    from uqlab.benches.sampler import matmul_flops
    from uqlab.catalog.paths import checkpoint_dir
    from uqlab.workbench import dataset
    from uqlab.workbench.compute import many_probs

    ck = load_checkpoint(checkpoint_dir() / ckpt, shared_weights=True)
    texts = tuple(r[0] for r in dataset.pick(ck.training["task"], None))
    cache, rate, out = PrefixCache(2**40, 2**40), matmul_flops(), {"matmul_gflops": 0.0}
    for what in ("first change", "second change"):
        with FlopCounterMode(display=False) as counter, matmul_linear_only():
            many_probs(ck, texts, 10, 0, SamplingSettings(tau2=tau2), cache, "bench")
        flops = counter.get_total_flops()
        out[f"{what} gflop"] = round(flops / 1e9, 1)
        out[f"{what} floor_s"] = round(flops / rate, 3)
    out["matmul_gflops"] = round(rate / 1e9, 1)
    return out


def _floors(ckpt: str) -> dict[str, dict[str, float]]:
    """The matmul work of each dataset page's sampling with its defaults, counted by
    ``torch.utils.flop_counter`` on the matmul path, and the seconds it needs at this machine's
    fp32 matmul rate (a 2048^3 matmul): a floor no implementation of the same model in fp32
    goes under on this CPU."""
    from torch.utils.flop_counter import FlopCounterMode

    from uqcore.checkpoint import load_checkpoint
    from uqcore.nets.linear import matmul_linear_only
    from uqcore.settings import SamplingSettings
    from uqlab.benches.sampler import matmul_flops
    from uqlab.catalog.paths import checkpoint_dir
    from uqlab.workbench import dataset
    from uqlab.workbench.compute import many_probs

    ck = load_checkpoint(checkpoint_dir() / ckpt, shared_weights=True)
    task = ck.training["config"]["task"]
    rate = matmul_flops()  # the library benchmark's reference rate (CPU)
    work = {
        "Error analysis": (dataset.pick(task, None), 1),
        "Temperature sweep": (dataset.pick(task, 60, 0), 5),
    }
    out = {}
    for title, (rows, repeats) in work.items():
        texts = tuple(r[0] for r in rows)
        with FlopCounterMode(display=False) as counter, matmul_linear_only():
            many_probs(ck, texts, 10, 0, SamplingSettings())
        flops = counter.get_total_flops() * repeats
        out[title] = {
            "gflop": round(flops / 1e9, 1),
            "floor_s": round(flops / rate, 3),
            "matmul_gflops": round(rate / 1e9, 1),
        }
    return out


SWEEP_TRIES = 3  # the sweep's compute is timed this often after a warm-up; the least is kept


def _sweep_compute(ckpt: str) -> dict[str, float]:
    """Seconds of the Temperature sweep's compute at the page's defaults (its first knob, the
    default values, 60 examples per domain, T = 10, seed 0): the tables over the grid sampler
    the page calls (:func:`tools.bench_sweep.sweep_seconds`), each try with empty caches (the
    page's first sweep of the checkpoint), no Streamlit; the least of :data:`SWEEP_TRIES`."""
    from tools.bench_sweep import WAYS, sweep_seconds
    from ui.logic import sweep
    from uqlab.workbench import dataset
    from uqlab.workbench.notebook import checkpoint

    ck, info = checkpoint(ckpt)
    knob = sweep.knobs(info)[0]
    rows = dataset.pick(info.task, 60, 0)
    sweep_seconds(ck, rows, knob, WAYS[1])  # imports, the checkpoint, the encodings
    best = min(sweep_seconds(ck, rows, knob, WAYS[1]) for _ in range(SWEEP_TRIES))
    return {"knob": knob, "seconds": round(best, 3)}


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _explore(ckpt: str, text: str, words: str, repeats: int) -> dict:
    """The explore page on ``ckpt``: T = 100 cold runs here, T = 1000 in a fresh process."""
    _run_once(ckpt, 100, text)  # warm-up: imports, checkpoint load (cache_resource), allocator
    runs = [_run_once(ckpt, 100, text) for _ in range(repeats)]
    secs = sorted(r["seconds"] for r in runs)
    samp = sorted(r["sampling_seconds"] for r in runs)
    print(f"explore page, {ckpt}, {words}, T=100, server side, cold cache, {repeats} runs:")
    print(
        f"  submit -> all {runs[0]['charts']} figures built: best {secs[0]:.3f} s, "
        f"median {statistics.median(secs):.3f} s"
    )
    print(
        f"  of which sampling (uqcore): best {samp[0]:.3f} s, median "
        f"{statistics.median(samp):.3f} s"
    )
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.bench",
            "--ckpt",
            ckpt,
            "--child-T",
            "1000",
            "--child-words",
            "0" if text == TEXT else str(REVIEW_WORDS),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    big = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"explore page, {ckpt}, T=1000, fresh process: {big['seconds']:.2f} s (after the "
        f"checkpoint load), peak RSS {big['peak_rss_mb']:.0f} MB"
    )
    return {
        "T100_best_s": round(secs[0], 3),
        "T100_median_s": round(statistics.median(secs), 3),
        "T100_sampling_s": round(samp[0], 3),
        "T1000_s": round(big["seconds"], 3),
        "T1000_peak_rss_mb": round(big["peak_rss_mb"]),
    }


def _click(at, label: str) -> float:
    """Seconds of the script run after pressing the button labelled ``label``."""
    button = next(b for b in at.button if b.label == label)
    started = time.perf_counter()
    button.click().run()
    if at.exception:
        raise RuntimeError(str(at.exception))
    return time.perf_counter() - started


def _why(ckpt: str, text: str, T: int, steps: int = 32) -> dict:
    """The explorer's "Why is it unsure?" views on ``ckpt`` (server side, cold caches): the
    page with them (salience by gradient x input, occlusion and the head grid when they run
    without a click), then each button: the salience of a long text, integrated gradients
    with ``steps`` steps, the occlusion of a long text; then Error analysis's first view with
    the dataset map."""
    from streamlit.testing.v1 import AppTest

    from ui.logic import keys as K

    _quiet()
    _run_once(ckpt, 1, TEXT)  # imports and the checkpoint load, not timed
    _cold()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
    for key, value in {"ckpt": ckpt, "text": text, "T": str(T), "seed": "1"}.items():
        at.query_params[key] = value
    at.run()  # the views are off at first: switch them on (the explorer's part is cached)
    started = time.perf_counter()
    at.toggle(key=K.WHY_ON).set_value(True).run()
    out = {"the views switched on": time.perf_counter() - started}
    labels = [b.label for b in at.button]
    if "Compute the salience" not in labels:  # it ran in the page: its own time
        said = next(c.value for c in at.caption if c.value.startswith("Computed in"))
        out["of which salience, gradient x input"] = float(said.split()[2])
    if "Compute the salience" in labels:
        out["salience, gradient x input (button)"] = _click(at, "Compute the salience")
    occlusion = next((x for x in labels if x.startswith("Remove each of these")), None)
    if occlusion:
        out[f"occlusion, {occlusion.split()[4]} words (button)"] = _click(at, occlusion)
    at.radio(key=K.WHY_METHOD).set_value("integrated_gradients").run()
    at.number_input(key=K.WHY_STEPS).set_value(steps).run()
    out[f"integrated gradients, {steps} steps"] = _click(at, "Compute integrated gradients")
    caption = next(c.value for c in at.caption if c.value.startswith("Completeness"))
    out["completeness"] = caption
    _cold()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.query_params["ckpt"] = ckpt
    at.run()
    started = time.perf_counter()
    at.switch_page("app_pages/errors.py").run()
    out["Error analysis first view with the map (stored)"] = time.perf_counter() - started
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", default=BENCH_CHECKPOINT, help="the CoLA checkpoint")
    p.add_argument(
        "--imdb",
        default=LONG_TEXT_CHECKPOINT,
        help="the checkpoint timed on a 300-word review ('' to skip)",
    )
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--child-T", type=int, help=argparse.SUPPRESS)  # internal: one cold run
    p.add_argument("--child-words", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--pages", action="store_true", help="also time every page (cold caches)")
    p.add_argument(
        "--only",
        help="comma-separated checkpoints for the first-view table (default: every shipped one)",
    )
    p.add_argument(
        "--knob-ckpt",
        default=KNOB_CHECKPOINT,
        help="timed after two tau2 changes (prefix computed, then reused)",
    )
    p.add_argument(
        "--ckpt-word",
        default=WORD_CHECKPOINT,
        help="the word-level checkpoint timed after a tau2 change",
    )
    p.add_argument(
        "--why",
        action="store_true",
        help="time the explorer's 'why' views: the "
        "CoLA sentence at T = 100 and the review at T = 20",
    )
    p.add_argument(
        "--markdown",
        metavar="PATH",
        help="also write the figures as the app's section of PATH (docs/performance.md)",
    )
    args = p.parse_args(argv)
    if args.child_T:
        text = review(args.child_words) if args.child_words else TEXT
        _run_once(args.ckpt, 1, text)  # the checkpoint load and imports, not timed
        out = _run_once(args.ckpt, args.child_T, text)
        out["peak_rss_mb"] = _peak_rss_mb()
        print(json.dumps(out))
        return 0
    report: dict = {"explore": {}, "pages": {}}
    if args.why:
        report["why"] = {
            f"{args.ckpt}, {len(TEXT.split())} words, T = 100": _why(args.ckpt, TEXT, 100)
        }
        print(json.dumps(report["why"]), flush=True)
        if args.imdb:
            report["why"][f"{args.imdb}, {REVIEW_WORDS} words, T = 20"] = _why(
                args.imdb, review(), 20
            )
        for where, got in report["why"].items():
            print(f"why views, {where}, server side, cold caches:")
            for what, value in got.items():
                print(f"  {what:<48} {value if isinstance(value, str) else f'{value:7.2f} s'}")
        if args.markdown:
            from uqlab.benches.report import write_section

            write_section(args.markdown, "tools.bench --why", render_why(report["why"]))
            print(f"wrote the why views' section of {args.markdown}")
        print(json.dumps(report))
        return 0
    report["explore"][args.ckpt] = _explore(
        args.ckpt, TEXT, f"{len(TEXT.split())} words", args.repeats
    )
    if args.imdb:
        report["explore"][args.imdb] = _explore(
            args.imdb, review(), f"{REVIEW_WORDS} words", args.repeats
        )
    if args.pages:
        for ckpt in filter(None, (args.ckpt, args.imdb)):
            print(f"every page, {ckpt}, server side, cold caches:")
            for title, seconds, what in _page_times(ckpt):
                print(f"  {title:<22} {what:<26} {seconds:7.2f} s")
                report["pages"].setdefault(ckpt, {})[f"{title}: {what}"] = round(seconds, 3)
            floors = _floors(ckpt)
            report.setdefault("floors", {})[ckpt] = floors
            for title, f in floors.items():
                print(
                    f"  {title:<22} matmul work {f['gflop']:.0f} GFLOP: at least "
                    f"{f['floor_s']:.2f} s at {f['matmul_gflops']:.0f} GFLOP/s"
                )
            swept = _sweep_compute(ckpt)
            floors["Temperature sweep"]["compute_s"] = swept["seconds"]
            floors["Temperature sweep"]["knob"] = swept["knob"]
            print(
                f"  Temperature sweep      compute ({swept['knob']}, no Streamlit) "
                f"{swept['seconds']:.3f} s: "
                f"{swept['seconds'] / floors['Temperature sweep']['floor_s']:.1f}x the floor"
            )
        _dataset_pages(report, args)
    if args.markdown:
        from uqlab.benches.report import write_section

        write_section(args.markdown, "tools.bench", render_markdown(report))
        print(f"wrote the app's section of {args.markdown}")
    print(json.dumps(report))
    return 0


def _dataset_pages(report: dict, args) -> None:
    """The dataset pages at their defaults on every shipped checkpoint, and Error analysis after
    knob changes (recomputed) beside the matmul floor of what it recomputes."""
    from uqcore.registry import list_checkpoints
    from uqlab.catalog.paths import checkpoint_dir

    names = [i.name for i in list_checkpoints(checkpoint_dir()) if not i.error]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    first = _first_views(names)
    report["first_view"] = first
    print(
        f"first view at the defaults (stored samples), server side, cold data caches, least of "
        f"{FIRST_VIEW_TRIES}:"
    )
    print(f"  {'checkpoint':<24}" + "".join(f"{t:>16}" for t, _, _ in DATASET_PAGES))
    for name, row in first.items():
        print(f"  {name:<24}" + "".join(f"{row[t]:>14.2f} s" for t, _, _ in DATASET_PAGES))
    worst = max((sec, name, t) for name, row in first.items() for t, sec in row.items())
    print(f"  slowest: {worst[1]}, {worst[2]}: {worst[0]:.2f} s")
    report["knob"] = {}
    for ckpt in filter(None, (args.knob_ckpt, args.ckpt_word)):
        taus = (3.0, 8.0) if ckpt == args.knob_ckpt else (3.0,)
        secs = _knob_changes(ckpt, taus)
        floor = _recompute_floor(ckpt, taus[0])
        entry = {
            "seconds": secs,
            **floor,
            "first change x floor": round(secs[0] / floor["first change floor_s"], 2),
        }
        if len(secs) > 1:
            entry["second change x floor"] = round(secs[1] / floor["second change floor_s"], 2)
        report["knob"][ckpt] = entry
        print(f"Error analysis after tau2 changes, {ckpt} (every bundled example, T = 10):")
        for i, sec in enumerate(secs):
            what = ("first change", "second change")[i]
            print(
                f"  {what:<14} {sec:7.2f} s; matmul work {floor[what + ' gflop']:.0f} GFLOP, "
                f"floor {floor[what + ' floor_s']:.2f} s at {floor['matmul_gflops']:.0f} "
                f"GFLOP/s: {sec / floor[what + ' floor_s']:.1f}x"
            )


def render_why(why: dict) -> str:
    """The "why" views' section of docs/performance.md from one run."""
    import datetime

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        '## The explorer\'s "why" views, server side',
        "",
        "Written by `python -m tools.bench --why --markdown docs/performance.md` "
        f"({os.cpu_count()} logical CPUs, {when}): the real app script under "
        "`streamlit.testing`, cold caches, no browser.",
        "",
        "| checkpoint, text, T | view | seconds |",
        "|---|---|---:|",
    ]
    notes = []
    for where, got in why.items():
        for what, value in got.items():
            if isinstance(value, str):
                notes.append(f"- {where}: {value}")
            else:
                lines.append(f"| {where} | {what} | {value:.2f} |")
    return "\n".join(lines + [""] + notes) + "\n"


def render_markdown(report: dict) -> str:
    """The app's section of docs/performance.md from one run's ``report``."""
    import datetime
    import os

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## The app, server side",
        "",
        "Written by `python -m tools.bench --pages --markdown docs/performance.md` "
        f"({os.cpu_count()} logical CPUs, {when}): the real app script under `streamlit.testing`, "
        "cold caches, no browser (network and rendering are not included).",
        "",
        "| checkpoint | explore, T = 100 (best / median) | of which sampling | T = 1000 | "
        "peak RSS at T = 1000 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, e in report["explore"].items():
        lines.append(
            f"| {name} | {e['T100_best_s']:.2f} / {e['T100_median_s']:.2f} s | "
            f"{e['T100_sampling_s']:.2f} s | {e['T1000_s']:.2f} s | "
            f"{e['T1000_peak_rss_mb']} MB |"
        )
    if report["pages"]:
        lines += ["", "| checkpoint | page: what | seconds |", "|---|---|---:|"]
        for name, pages in report["pages"].items():
            lines += [f"| {name} | {what} | {sec:.2f} |" for what, sec in pages.items()]
    if report.get("floors"):
        lines += [
            "",
            "The floor: the matmul work of each page's sampling (T = 10, the page's "
            "default examples; `torch.utils.flop_counter` on the matmul path) over this "
            "machine's fp32 rate for a 2048^3 matmul. No fp32 implementation of the same "
            "model computes it faster here.",
            "",
            "The sweep's compute: the tables over the grid sampler the page calls, with the "
            "page's defaults and empty caches, without Streamlit (least of "
            f"{SWEEP_TRIES} tries; the page's own time, rendering included, is in the table "
            "above).",
            "",
            "| checkpoint | page | matmul work | floor at the matmul rate | compute | x floor |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for name, floors in report["floors"].items():
            for title, f in floors.items():
                measured = f.get("compute_s")
                tail = (
                    f"{measured:.3f} s ({f['knob']}) | {measured / f['floor_s']:.1f} |"
                    if measured is not None
                    else "| |"
                )
                lines.append(
                    f"| {name} | {title} | {f['gflop']:.0f} GFLOP | {f['floor_s']:.3f} s "
                    f"at {f['matmul_gflops']:.0f} GFLOP/s | {tail}"
                )
    lines += ["", "```json", json.dumps(report), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
