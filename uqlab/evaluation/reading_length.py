"""The shipped checkpoints read at their training length, beside the figures they had when read
at the position table's length (issue 36): ``python -m uqlab.evaluation.reading_length --before
REV``.

Until issue 36, evaluate, predict and the pages encoded a MiniLM checkpoint at its base's 512
positions although its adapters were trained at 64 (CoLA, CR) or 256 (IMDB) tokens. ``--before``
names the git revision whose ``metrics.json`` files were measured that way (``a088136``); this
command keeps their headline figures in :data:`RECORD`, and :func:`markdown` sets them beside
each checkpoint's present metrics.json (docs/results.md, written by ``python -m uqlab.results``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from uqlab.catalog.paths import EVAL_DIR, REPO_ROOT, SHIPPED_CHECKPOINT_DIR

RECORD = EVAL_DIR / "reading_length_before.json"
PREFIXES = ("-minilm-",)  # the checkpoints whose positions reach past their training length


def headline(m: dict) -> dict:
    """The figures compared: in-domain accuracy and ECE, OOD accuracy, AUROC of MI and 1 - max p."""
    det = m.get("ood_detection") or {}
    return {
        "read_len": m.get("read_len"),
        "id_accuracy": m["id"]["accuracy_mean"],
        "id_ece": m["id"]["ece"],
        "ood_accuracy": m.get("ood", {}).get("accuracy_mean"),
        "auroc_mi": det.get("mutual_information", {}).get("auroc"),
        "auroc_max_prob": det.get("max_prob", {}).get("auroc"),
    }


def record(rev: str, out: Path = RECORD) -> dict:
    """Write the headline figures of every shipped MiniLM checkpoint at ``rev``; return them."""
    before = {}
    for folder in sorted(SHIPPED_CHECKPOINT_DIR.iterdir()):
        if not any(p in folder.name for p in PREFIXES):
            continue
        path = (folder / "metrics.json").relative_to(REPO_ROOT).as_posix()
        text = subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=REPO_ROOT, capture_output=True, text=True
        )
        if text.returncode == 0:
            before[folder.name] = headline(json.loads(text.stdout))
    doc = {"rev": rev, "read_at": "the position table (512 tokens)", "checkpoints": before}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def _cell(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None else format(x, fmt)


def markdown(rows: list[tuple[str, dict | None]], path: Path = RECORD) -> list[str]:
    """The before / after table (empty without a record)."""
    if not path.is_file():
        return []
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = [
        "| checkpoint | tokens read | ID accuracy | ID ECE | OOD accuracy | AUROC (MI) | "
        "AUROC (1 − max p) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in rows:
        old = doc["checkpoints"].get(name)
        if not old or not m:
            continue
        new = headline(m)
        keys = ("id_accuracy", "id_ece", "ood_accuracy", "auroc_mi", "auroc_max_prob")
        pairs = " | ".join(f"{_cell(old[k])} → {_cell(new[k])}" for k in keys)
        out.append(f"| {name} | 512 → {new['read_len']} | {pairs} |")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.evaluation.reading_length", description=__doc__
    )
    p.add_argument("--before", required=True, help="the git revision read at 512 tokens")
    args = p.parse_args(argv)
    doc = record(args.before)
    print(f"wrote {RECORD.relative_to(REPO_ROOT)} ({len(doc['checkpoints'])} checkpoints)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
