"""Bench of a Hugging Face model brought by a user: ``python -m tools.bench_import [--source NAME]
[--repeats N]``.

A MiniLM-size ``BertForSequenceClassification`` (the shipped ``cola-minilm-trans`` exported by
:mod:`uqlab.export_hf`: 22.7M parameters, 6 layers, width 384) is imported as each training-free
family (:mod:`uqlab.import_hf`), each import in a fresh process (its wall time and peak RSS),
then the explorer page is timed on each imported checkpoint at T = 100, server side, cold caches
(the best and median of ``--repeats`` runs after one warm-up), as :mod:`tools.bench` times the
shipped ones. Prints one JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench import ROOT, TEXT, _run_once

IMPORT = """
import json, sys, time
from pathlib import Path
start = time.perf_counter()
from uqlab.import_hf import import_folder
import_folder(sys.argv[1], sys.argv[2], sys.argv[4], family=sys.argv[2], root=sys.argv[3])
seconds = time.perf_counter() - start
hwm = next(int(x.split()[1]) for x in Path("/proc/self/status").read_text().splitlines()
           if x.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "peak_rss_mb": hwm / 1024}))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.bench_import", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--source", default="cola-minilm-trans", help="the shipped checkpoint exported")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    from uqlab.export_hf import export
    from uqlab.import_hf import TRAINING_FREE

    report: dict = {"source": args.source, "import": {}, "explore_T100": {}}
    with tempfile.TemporaryDirectory(prefix="uq-bench-import-") as tmp:
        hf, root = Path(tmp) / "hf", Path(tmp) / "checkpoints"
        root.mkdir()
        started = time.perf_counter()
        export(args.source, hf)
        report["export_s"] = round(time.perf_counter() - started, 2)
        size = sum(f.stat().st_size for f in hf.iterdir()) / 2**20
        print(
            f"exported {args.source} as a BertForSequenceClassification: {size:.0f} MB "
            f"in {report['export_s']} s"
        )
        for family in TRAINING_FREE:
            task = json.loads((hf / "uq_family.json").read_text())["training"]["task"]
            run = subprocess.run(
                [sys.executable, "-c", IMPORT, str(hf), family, str(root), task],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            out = json.loads(run.stdout.strip().splitlines()[-1])
            report["import"][family] = {k: round(v, 2) for k, v in out.items()}
            print(
                f"import as {family:<9}: {out['seconds']:.2f} s in a fresh process (imports "
                f"included), peak RSS {out['peak_rss_mb']:.0f} MB"
            )
        os.environ["UQ_CHECKPOINT_DIR"] = str(root)
        for family in TRAINING_FREE:
            _run_once(family, 100)  # warm-up: the checkpoint load, imports, allocator
            runs = [_run_once(family, 100) for _ in range(args.repeats)]
            secs = sorted(r["seconds"] for r in runs)
            samp = sorted(r["sampling_seconds"] for r in runs)
            report["explore_T100"][family] = {
                "best_s": round(secs[0], 3),
                "median_s": round(statistics.median(secs), 3),
                "sampling_best_s": round(samp[0], 3),
            }
            print(
                f"explore {family:<9} T=100 '{TEXT}': best {secs[0]:.3f} s, median "
                f"{statistics.median(secs):.3f} s (sampling {samp[0]:.3f} s)"
            )
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
