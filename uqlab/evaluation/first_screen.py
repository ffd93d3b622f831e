"""Which checkpoint should a stranger's first screen open on? Measured on dev data only.

    python -m uqlab.evaluation.first_screen [--rows 200] [--T 10] [--seed 0] [--only NAME ...]

For each candidate (a shipped MiniLM checkpoint and the task whose *dev* split serves as its
out-of-domain set), samples the first ``--rows`` rows of its own task's dev split (in domain) and
of the other task's dev split (out of domain), T samples each, read as the app reads them (the
checkpoint's vocabulary at ``Checkpoint.read_len``), and prints what a first screen needs:

- ``dev acc``: accuracy of the mean prediction in domain (the model is worth showing);
- ``AUROC(MI)``: how well mutual information ranks the out-of-domain rows above the in-domain
  ones (the "it knows what it has not seen" story: 0.5 = no better than chance);
- ``length sep.``: how well token length alone separates the two (the AUROC of length, or of
  minus length, whichever is larger): near 1, MI may only be measuring length (on MiniLM
  H-STO with SST-2 in domain and the IMDB reviews out of it, long reviews got *lower* MI:
  AUROC(MI) 0.07-0.44; docs/results.md, "at equal length");
- ``AUROC(MI), cut``: AUROC(MI) again with in-domain row i and out-of-domain row i both cut to
  the shorter one's token length (a length-matched comparison: what is left of the story when
  length cannot tell the domains apart);
- ``MI p90 ID``: the 90th percentile of in-domain MI (nats), how visible the model's own doubt is;
- ``split ID``: the share of in-domain rows whose samples disagree on the class (an "Unsure"
  story exists where this is above 0);
- ``visible ID``: the share of in-domain rows whose samples' p(predicted class) has a standard
  deviation of at least 0.05 (a spread wider than one bar of the explorer's histogram: what a
  stranger can see).

No test data and no out-of-domain *test* data are read. The figures go to
``assets/eval/first_screen.json`` (``--only`` replaces those candidates' rows and keeps the
others), which ``python -m uqlab.results`` writes into docs/results.md beside the choice.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from uqcore.inference.batch_predict import predict_ids
from uqcore.registry import load
from uqcore.stats import mutual_information
from uqlab.catalog.paths import CONFIG_DIR, EVAL_DIR, checkpoint_dir
from uqlab.catalog.task_file import read_task_file
from uqlab.catalog.tasks import FIRST_SCREEN_CANDIDATES, TASKS, register
from uqlab.data import load_task

VISIBLE_STD = 0.05  # one bar of the explorer's histogram of p
RECORD = EVAL_DIR / "first_screen.json"


@dataclass(frozen=True)
class Measured:
    """One candidate's dev figures (see the module docstring); NaN where not measured."""

    name: str
    ood_task: str | None
    dev_acc: float
    auroc_mi: float
    length_sep: float
    auroc_mi_cut: float
    mi_p90: float
    split_share: float
    visible_share: float
    tokens_id: float
    tokens_ood: float


def shares(probs: np.ndarray) -> tuple[float, float]:
    """Of samples ``probs [T, N, C]``: the share of texts whose samples disagree on the class, and
    the share whose samples' p(class of the mean) has a standard deviation >= VISIBLE_STD."""
    votes = probs.argmax(-1)  # [T, N]
    picked = probs.mean(0).argmax(-1)  # [N]
    spread = probs[:, np.arange(probs.shape[1]), picked].std(0)  # [N]
    return float((votes != votes[0]).any(0).mean()), float((spread >= VISIBLE_STD).mean())


def dev_rows(task: str, rows: int) -> tuple[list[str], np.ndarray]:
    """The first ``rows`` texts and labels of ``task``'s dev split (a task of configs/tasks too)."""
    if task not in TASKS:  # a task described by a file of configs/tasks (CR)
        register(read_task_file(CONFIG_DIR / "tasks" / f"{task}.json"))
    split = load_task(task).dev
    return list(split.texts[:rows]), np.asarray(split.labels[:rows])


def measure(name: str, ood_task: str | None, rows: int, T: int, seed: int) -> Measured:
    """The dev figures of checkpoint ``name`` (module docstring)."""
    ck = load(name, checkpoint_dir())
    task = ck.training["task"]
    max_len = ck.read_len

    def encode(texts: list[str]) -> list[list[int]]:
        return [ck.vocab.encode(t, max_len, allow_all_unknown=True).ids for t in texts]

    def mi_of(rows_ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        probs = predict_ids(ck.model, rows_ids, T, seed).cpu().numpy()  # [T, N, C]
        return probs, np.asarray(mutual_information(probs))

    texts, labels = dev_rows(task, rows)
    ids_id = encode(texts)
    probs, mi_id = mi_of(ids_id)
    split_share, visible_share = shares(probs)
    acc = float((probs.mean(0).argmax(-1) == labels).mean())
    len_id = np.array([len(r) for r in ids_id])
    nan = float("nan")
    auroc_mi = length_sep = auroc_cut = tokens_ood = nan
    if ood_task is not None:
        ood_texts, _ = dev_rows(ood_task, rows)
        ids_ood = encode(ood_texts)
        _, mi_ood = mi_of(ids_ood)
        len_ood = np.array([len(r) for r in ids_ood])
        truth = np.r_[np.zeros(len(mi_id)), np.ones(len(mi_ood))]
        auroc_mi = float(roc_auc_score(truth, np.r_[mi_id, mi_ood]))
        by_length = float(roc_auc_score(truth, np.r_[len_id, len_ood]))
        length_sep = max(by_length, 1.0 - by_length)
        n = min(len(ids_id), len(ids_ood))
        short = [min(len(ids_id[i]), len(ids_ood[i])) for i in range(n)]  # [CLS] included
        _, cut_id = mi_of([ids_id[i][: short[i]] for i in range(n)])
        _, cut_ood = mi_of([ids_ood[i][: short[i]] for i in range(n)])
        auroc_cut = float(roc_auc_score(np.r_[np.zeros(n), np.ones(n)], np.r_[cut_id, cut_ood]))
        tokens_ood = float(len_ood.mean())
    return Measured(
        name,
        ood_task,
        acc,
        auroc_mi,
        length_sep,
        auroc_cut,
        float(np.quantile(mi_id, 0.9)),
        split_share,
        visible_share,
        float(len_id.mean()),
        tokens_ood,
    )


def markdown(rows: list[Measured], n: int, T: int, seed: int) -> str:
    """The table docs/results.md records (first ``n`` dev rows per domain, T, seed)."""
    head = (
        f"First {n} dev rows per domain, T = {T}, seed {seed} "
        "(`python -m uqlab.evaluation.first_screen`).\n\n"
        "| checkpoint | OOD dev | dev acc | AUROC(MI) | length sep. | AUROC(MI), cut | "
        "MI p90 ID (nats) | split ID | visible ID | tokens ID / OOD |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {m.name} | {m.ood_task or '—'} | {m.dev_acc:.3f} | {_cell(m.auroc_mi)} | "
        f"{_cell(m.length_sep)} | {_cell(m.auroc_mi_cut)} | {m.mi_p90:.4f} | "
        f"{m.split_share:.3f} | {m.visible_share:.3f} | "
        f"{m.tokens_id:.0f} / {_cell(m.tokens_ood, '.0f')} |"
        for m in rows
    ]
    return head + "\n".join(lines) + "\n"


def _cell(x: float, fmt: str = ".3f") -> str:
    return "—" if np.isnan(x) else format(x, fmt)


def save(measured: list[Measured], rows: int, T: int, seed: int, path: Path = RECORD) -> None:
    """Write the figures (merged by name into what ``path`` holds for the same settings)."""
    kept: dict[str, dict] = {}
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if (old.get("rows"), old.get("T"), old.get("seed")) == (rows, T, seed):
            kept = {m["name"]: m for m in old["measured"]}
    kept |= {m.name: dataclasses.asdict(m) for m in measured}
    order = [name for name, _ in FIRST_SCREEN_CANDIDATES]
    doc = {
        "rows": rows,
        "T": T,
        "seed": seed,
        "measured": sorted(kept.values(), key=lambda m: order.index(m["name"])),
    }
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def load_record(path: Path = RECORD) -> tuple[list[Measured], int, int, int] | None:
    """The saved figures and their settings (rows, T, seed), or None when there are none."""
    if not path.exists():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [Measured(**m) for m in doc["measured"]], doc["rows"], doc["T"], doc["seed"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.evaluation.first_screen", description=__doc__.split("\n")[0]
    )
    p.add_argument("--rows", type=int, default=200)
    p.add_argument("--T", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="*", help="measure these candidates only")
    p.add_argument("--out", type=Path, default=RECORD)
    args = p.parse_args(argv)
    out = []
    for name, ood in FIRST_SCREEN_CANDIDATES:
        if args.only and name not in args.only:
            continue
        m = measure(name, ood, args.rows, args.T, args.seed)
        print(m, flush=True)
        out.append(m)
    save(out, args.rows, args.T, args.seed, args.out)
    print(markdown(out, args.rows, args.T, args.seed))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
