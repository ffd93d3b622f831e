"""The shipped checkpoints read at their training length, beside the figures they had when read
at the position table's length (issue 36): ``python -m uqlab.evaluation.reading_length --before
REV``.

Until issue 36, evaluate, predict and the pages encoded a MiniLM checkpoint at its base's 512
positions although its adapters were trained at 64 (CoLA, CR) or 256 (IMDB) tokens. ``--before``
names the git revision whose ``metrics.json`` files were measured that way (``a088136``); this
command keeps their headline figures in :data:`RECORD`, and :func:`markdown` sets them beside
each checkpoint's present metrics.json (docs/results.md, written by ``python -m uqlab.results``).

A checkpoint later trained on at a longer length (``init_from``, :mod:`uqlab.training.continued`:
imdb-minilm-hsto, 256 -> 512 tokens) gets a third figure between the two: its first stage read
at its own length, kept from a revision that still held that stage (``--stage REV``, d1af3bc
for imdb-minilm-hsto). Each checkpoint keeps the revision its stage came from, so a later
``--stage REV`` adds the checkpoints continued since without touching those recorded before.
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
    """Write the headline figures of every shipped MiniLM checkpoint at ``rev`` (a recorded
    first stage, :func:`record_stage`, is kept); return them."""
    before = {}
    for folder in sorted(SHIPPED_CHECKPOINT_DIR.iterdir()):
        if not any(p in folder.name for p in PREFIXES):
            continue
        found = _at(rev, folder / "metrics.json")
        if found is not None:
            before[folder.name] = headline(found)
    doc = {"rev": rev, "read_at": "the position table (512 tokens)", "checkpoints": before}
    kept = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    if "stage" in kept:
        doc["stage"] = kept["stage"]
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def record_stage(rev: str, out: Path = RECORD) -> dict:
    """Add to the record the headline figures at ``rev`` of every shipped checkpoint that now
    continues a first stage (``training.init_from`` in its config.json) and that ``rev`` still
    holds as that stage (its config.json there records no ``init_from``): the stage read at its
    own length. Only a checkpoint with a figure read at 512 gets one (the stage sits between that
    and now; a checkpoint first shipped after the 512 revision, such as imdb-minilm-ensemble,
    has neither, and what ``rev`` holds under its name may be another model altogether).
    Stages recorded from other revisions stay, each with its revision (``revs``);
    the figures read at 512 stay as they are. Return the stage part."""
    doc = json.loads(out.read_text(encoding="utf-8"))
    kept = doc.get("stage") or {}
    stages = dict(kept.get("checkpoints", {}))
    revs = dict(kept.get("revs") or dict.fromkeys(stages, kept.get("rev")))
    for folder in sorted(SHIPPED_CHECKPOINT_DIR.iterdir()):
        if folder.name not in doc.get("checkpoints", {}) or not _continues(folder):
            continue  # no figure at 512 to set it after, or not continued now
        if _init_from(_at(rev, folder / "config.json") or {}):
            continue  # already continued (or absent) at rev
        found = _at(rev, folder / "metrics.json")
        if found is not None:
            stages[folder.name], revs[folder.name] = headline(found), rev
    doc["stage"] = {"revs": revs, "read_at": "the first stage's length", "checkpoints": stages}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc["stage"]


def command(path: Path = RECORD) -> str:
    """The command that wrote the record at ``path``: its --before revision and one --stage
    for each revision its first stages came from, oldest recorded first."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    stage_revs = dict.fromkeys((doc.get("stage") or {}).get("revs", {}).values())
    stages = "".join(f" --stage {r}" for r in stage_revs)
    return f"python -m uqlab.evaluation.reading_length --before {doc['rev']}{stages}"


def _at(rev: str, file: Path) -> dict | None:
    """The JSON file as git revision ``rev`` holds it (None: that revision has no such file)."""
    path = file.relative_to(REPO_ROOT).as_posix()
    text = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return json.loads(text.stdout) if text.returncode == 0 else None


def _init_from(config: dict) -> bool:
    """Whether a parsed config.json records a first stage (``training.init_from``)."""
    return bool((config.get("training") or {}).get("init_from"))


def _continues(folder: Path) -> bool:
    """Whether the checkpoint in ``folder`` was trained on from another (``training.init_from``)."""
    config = folder / "config.json"
    return config.is_file() and _init_from(json.loads(config.read_text()))


def _cell(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None else format(x, fmt)


def markdown(rows: list[tuple[str, dict | None]], path: Path = RECORD) -> list[str]:
    """The before / after table (empty without a record); a checkpoint with a recorded first
    stage shows three figures: read at 512, its first stage at that stage's length, now."""
    if not path.is_file():
        return []
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = [
        "| checkpoint | tokens read | ID accuracy | ID ECE | OOD accuracy | AUROC (MI) | "
        "AUROC (1 − max p) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    stages = doc.get("stage", {}).get("checkpoints", {})
    keys = ("id_accuracy", "id_ece", "ood_accuracy", "auroc_mi", "auroc_max_prob")
    for name, m in rows:
        old = doc["checkpoints"].get(name)
        if not old or not m:
            continue
        steps = [old, *([stages[name]] if name in stages else []), headline(m)]
        lengths = " → ".join(["512", *(str(h["read_len"]) for h in steps[1:])])
        cells = " | ".join(" → ".join(_cell(h[k]) for h in steps) for k in keys)
        out.append(f"| {name} | {lengths} | {cells} |")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.evaluation.reading_length", description=__doc__
    )
    p.add_argument("--before", help="the git revision read at 512 tokens")
    p.add_argument(
        "--stage",
        action="append",
        default=[],
        help="a git revision whose metrics.json are the first stages of checkpoints now "
        "continued (training.init_from), read at their own length; repeatable",
    )
    args = p.parse_args(argv)
    if not args.before and not args.stage:
        p.error("give --before REV, --stage REV or both")
    where = RECORD.relative_to(REPO_ROOT)
    if args.before:
        doc = record(args.before)
        print(f"wrote {where} ({len(doc['checkpoints'])} checkpoints read at 512)")
    for rev in args.stage:
        stage = record_stage(rev)
        got = [name for name, r in stage["revs"].items() if r == rev]
        print(f"wrote {where}: first stages at {rev} of {', '.join(got) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
