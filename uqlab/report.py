"""A report of your file: ``python -m uqlab.report --ckpt NAME [--ckpt OTHER] [--file F.csv
[--ood-file G.csv] [--text-column C] [--label-column L]] [--samples 10] [--seed 0] [--per N]
[--score mutual_information] --out report.html``.

Samples every row of the labelled file (read as the pages read an upload: CSV, TSV, JSON lines
or Parquet, at most 5,000 rows and 20 MB; the text and label columns and the label values guessed
as the pages guess them unless given) with each checkpoint, and writes one self-contained HTML
file (:mod:`uqlab.workbench.report`): the summary with intervals, reliability, risk-coverage,
out-of-domain detection (with ``--ood-file``), the worst confident errors and the most uncertain
rows with their spread, slices, each checkpoint's card and every setting; with two checkpoints,
the paired verdict of the second against the first. Without ``--file``: the task's bundled
examples. The file is written whole or not at all: a failed run leaves ``--out`` as it was.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from uqcore.exceptions import UQError
from uqcore.runtime import tune_cpu
from uqcore.text.vocab import write_atomic
from uqlab.workbench import dataset, report
from uqlab.workbench.notebook import analyze, checkpoint, compare
from uqlab.workbench.worth import COLUMNS


def _labels(pairs: list[str]) -> dict[str, int] | None:
    """``--label VALUE=ID`` options as a mapping (None: the pages' guesses)."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        value, sep, idx = pair.rpartition("=")
        if not sep or not idx.strip().isdigit():
            raise UQError(f"--label {pair!r}: write VALUE=ID, e.g. --label positive=1.")
        out[value] = int(idx)
    return out


def run(args) -> Path:
    """Compute every checkpoint's analysis and write the report; the path written."""
    if len(args.ckpt) > 2:
        raise UQError("Give one checkpoint, or two for a paired verdict.")
    if args.ood_file and not args.file:
        raise UQError("--ood-file needs --file: the out-of-domain rows are compared with it.")
    out = Path(args.out)
    if not out.parent.is_dir():
        raise UQError(f"{out.parent}: no such folder for --out.")
    options = {
        "ood_file": args.ood_file,
        "text_column": args.text_column,
        "label_column": args.label_column,
        "labels": _labels(args.label),
        "T": args.samples,
        "seed": args.seed,
        "per": args.per,
        "progress": not args.quiet,
    }
    analyses = [analyze(checkpoint(name, args.root), args.file, **options) for name in args.ckpt]
    paired = None
    if len(analyses) == 2:
        paired = compare(*analyses, score=args.pair_score, seed=args.seed)
    write_atomic(out, report.build(analyses, paired, args.score).encode("utf-8"))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.report", description=__doc__.split("\n\n")[0])
    p.add_argument("--ckpt", action="append", required=True, help="checkpoint (twice: paired)")
    p.add_argument("--root", default=None, help="folder of checkpoints (default: the shipped)")
    p.add_argument("--file", default=None, help="your labelled file (default: bundled examples)")
    p.add_argument("--ood-file", default=None, help="an out-of-domain file, read the same way")
    p.add_argument("--text-column", default=None, help="default: the pages' guess")
    p.add_argument("--label-column", default=None, help="default: the pages' guess")
    p.add_argument(
        "--label", action="append", default=[], help="VALUE=ID, repeatable (default: guessed)"
    )
    p.add_argument("--samples", type=int, default=dataset.DATASET_T, help="T (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per", type=int, default=None, help="rows drawn per domain (default: all)")
    p.add_argument("--score", default="mutual_information", choices=list(dataset.SCORES))
    p.add_argument("--pair-score", default="max_prob", choices=list(COLUMNS))
    p.add_argument("--out", default="report.html")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if not 1 <= args.samples <= 100:
        p.error("--samples must be between 1 and 100 (the pages' range).")
    tune_cpu(args.threads)
    try:
        path = run(args)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({path.stat().st_size / 2**20:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
