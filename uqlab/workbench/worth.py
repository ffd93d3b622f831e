"""The Results page's "Which uncertainty is worth having, on your file" and "Two checkpoints,
paired": the frames of a visitor's labelled file (:func:`uqlab.workbench.dataset.frame`) turned into
the comparison blocks of :mod:`uqlab.evaluation.file_comparison` and the paired verdict of
:mod:`uqlab.evaluation.two_models`, on the rows every compared checkpoint could read. No
Streamlit here."""

from __future__ import annotations

import pandas as pd

from uqcore.registry import CheckpointInfo
from uqlab.evaluation.comparison import Scored, deterministic, find_baseline
from uqlab.evaluation.file_comparison import HALF, OnFile, file_blocks, recorded_score
from uqlab.evaluation.two_models import rows as two_model_rows
from uqlab.evaluation.two_models import two_models
from uqlab.workbench.dataset import OUT, in_domain, mean_probs

MIN_ROWS = 40  # labelled rows every compared checkpoint read: fewer give no comparison
COLUMNS = {  # score of uqcore.stats.OOD_SCORES -> its column in a frame
    "max_prob": "one_minus_max",
    "entropy": "entropy",
    "mutual_information": "mi",
    "variance": "var",
}


def scored(part: pd.DataFrame) -> Scored:
    """A frame's rows as :class:`Scored` (mean prediction and the four scores, in row order)."""
    return Scored(mean_probs(part), {s: part[c].to_numpy(float) for s, c in COLUMNS.items()})


def answer_first(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison table (:func:`uqlab.evaluation.comparison_report.comparison_rows`) with the
    answer first: checkpoint, its uncertainty and whether it beats plain 1 − p (off-screen to
    the right otherwise on a projector), then the rest in their order."""
    answer = [c for c in table.columns if c.endswith("beats plain 1−p?")]
    first = [c for c in ("checkpoint", "uncertainty (dev)", *answer) if c in table.columns]
    return table[first].join(table.drop(columns=first))


def file_table(rows: list[dict], got: dict[str, dict]) -> pd.DataFrame:
    """The file's comparison table: the columns a file can fill (no stored OOD or scaled
    figure; no out-of-domain column without an out-of-domain file), the answer first."""
    table = pd.DataFrame(rows)
    table = table.loc[:, (table != "—").any()]
    if not any("ood_matched" in b for b in got.values()):
        table = table.drop(columns=[c for c in table.columns if c.startswith("OOD")])
    return answer_first(table)


def baselines_of(names: list[str], infos: list[CheckpointInfo]) -> dict[str, str | None]:
    """The plain checkpoint each of ``names`` is compared with (None for a plain one itself,
    or when none of its task, backbone and base is listed)."""
    return {n: find_baseline(n, infos) for n in names}


def _key(df: pd.DataFrame) -> pd.Series:
    return df["domain"].astype(str) + "\x00" + df["index"].astype(str)


def shared_rows(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each non-empty frame cut to the rows every one of them could read, in one order
    (domain, then index), so numbers of different checkpoints are paired row by row."""
    frames = {n: f for n, f in frames.items() if len(f)}
    if not frames:
        return {}
    shared = set.intersection(*(set(_key(f)) for f in frames.values()))
    return {n: f[_key(f).isin(shared)].sort_values(["domain", "index"]) for n, f in frames.items()}


def pair(
    frames: dict[str, pd.DataFrame], a: str, b: str, score: str, seed: int
) -> tuple[dict | None, int]:
    """:func:`uqlab.evaluation.two_models.two_models` of checkpoint ``b`` against ``a`` on the
    labelled rows both could read (an out-of-domain file's rows have no label: left out), and
    how many rows that is; None below :data:`MIN_ROWS`."""
    kept = shared_rows({a: frames[a], b: frames[b]})
    if len(kept) < 2:
        return None, 0
    part_a, part_b = in_domain(kept[a]), in_domain(kept[b])
    if len(part_a) < MIN_ROWS:
        return None, len(part_a)
    block = two_models(
        scored(part_a), scored(part_b), part_a["gold"].to_numpy(), (a, b), score=score, seed=seed
    )
    return block, len(part_a)


def pair_table(block: dict) -> pd.DataFrame:
    """The paired verdict as a table: one row per metric, the answer first (which is better,
    B − A with its interval: off-screen to the right at 1024 px otherwise), then A's and B's
    figures under their names."""
    table = pd.DataFrame(two_model_rows(block))
    table = table[["metric", "better", "B − A [95 %]", "A", "B"]]
    return table.rename(columns={"A": f"A: {block['a']}", "B": f"B: {block['b']}"})


def pair_caption(block: dict) -> str:
    """What the paired table is: its rows, how the intervals were drawn, what B − A means."""
    return (
        f"{block['n']:,} labelled rows both checkpoints read, in the same order. B − A: B's "
        "figure minus A's (lower is better for ECE, NLL and Brier; higher for accuracy and "
        "AUROC). 95 % paired bootstrap intervals (1,000 resamples: each draws the rows once "
        "and scores both models on them; for AUROC, within the four cells of which model is "
        "wrong). 'No difference' when the interval holds 0."
    )


def too_few_pair(n_rows: int, mine: bool) -> str:
    """Why there is no paired verdict, and which control gives it more rows."""
    more = (
        "Add rows to your file (or set Rows per file to 0)."
        if mine
        else "Raise Examples per domain."
    )
    return (
        f"The paired verdict needs at least {MIN_ROWS} labelled rows that both checkpoints "
        f"could read; {n_rows} here. {more}"
    )


def pair_defaults(names: list[str], infos: dict[str, CheckpointInfo]) -> tuple[int, int]:
    """Which two of ``names`` to compare first: a plain checkpoint as A when there is one, and
    the first other as B."""
    plain = [i for i, n in enumerate(names) if n in infos and deterministic(infos[n].family)]
    first = plain[0] if plain else 0
    second = next(i for i in range(len(names)) if i != first)
    return first, second


def recorded(infos: dict[str, CheckpointInfo], names: list[str]) -> dict[str, str | None]:
    """The uncertainty each of ``names`` had chosen on its dev split (None: none recorded)."""
    return {n: recorded_score(infos[n].metrics) if n in infos else None for n in names}


def blocks(
    frames: dict[str, pd.DataFrame],
    chosen: dict[str, str | None],
    baselines: dict[str, str | None],
    seed: int,
) -> tuple[dict[str, dict], int]:
    """The comparison block of every checkpoint in ``frames`` (the chosen ones and their
    baselines, each sampled on the same file; ``chosen``: each one's recorded uncertainty,
    :func:`recorded`) and how many labelled rows they share; ``{}``
    with fewer than :data:`MIN_ROWS`. A row one checkpoint could not read (no known word) is
    left out for all, so every verdict is paired on the same rows."""
    kept = shared_rows(frames)
    if not kept:
        return {}, 0
    first = next(iter(kept.values()))
    labelled = in_domain(first)
    if len(labelled) < MIN_ROWS:
        return {}, len(labelled)
    models = {}
    for name, f in kept.items():
        ood = f[f["domain"] == OUT]
        models[name] = OnFile(
            scored(in_domain(f)), scored(ood) if len(ood) else None, chosen.get(name)
        )
    ood = first[first["domain"] == OUT]
    lengths = {
        "id": [len(t.split()) for t in labelled["text"]],
        "ood": [len(t.split()) for t in ood["text"]],
    }
    got = file_blocks(
        models,
        labelled["gold"].to_numpy(),
        {n: b for n, b in baselines.items() if n in models},
        lengths if len(ood) else None,
        seed=seed,
    )
    return got, len(labelled)


def entries(got: dict[str, dict], infos: dict[str, CheckpointInfo]) -> list[tuple[str, dict]]:
    """``(name, {"comparison": block, "family": ...})`` for the report's rows and sentences
    (:mod:`uqlab.evaluation.comparison_report`), plain checkpoints first."""
    family: dict[str, str | None] = {n: infos[n].family if n in infos else None for n in got}
    order = sorted(got, key=lambda n: not deterministic(family[n]))  # stable: the sampled order
    return [(n, {"comparison": got[n], "family": family[n]}) for n in order]


def caption(n_rows: int, got: dict[str, dict], extra: list[str]) -> str:
    """What the file's comparison table is: its rows, where each uncertainty was chosen, which
    baselines were sampled for it, how out-of-domain lengths were matched."""
    half = any(b.get("chosen_on") == HALF for b in got.values())
    n_scored = next(iter(got.values()))["n"]
    out = [
        f"{n_scored:,} labelled rows of your file scored"
        + (f" (of {n_rows:,}: the other half chose the uncertainty)" if half else "")
        + ", every checkpoint on the same rows (a row one could not read is left out for all).",
        "Uncertainty: the score each checkpoint's own evaluation chose on its dev split; "
        "where it recorded none, the one that finds the errors best on a random half of your "
        "file (never on the rows it is scored on)."
        if half
        else "Uncertainty: the score each checkpoint's own evaluation chose on its dev split.",
        "Beats plain 1−p?: that score's AUROC for the model's own errors minus the plain "
        "transformer's 1 − max p AUROC for its errors, paired on the same rows, with a 95 % "
        "bootstrap interval (1,000 resamples): better, tie or worse.",
    ]
    if extra:
        out.append(f"Sampled on your file as the baseline: {', '.join(extra)}.")
    if any("ood_matched" in b for b in got.values()):
        out.append(
            "OOD, lengths matched: your two files drawn to the same word counts, "
            "the texts kept a side in the cell."
        )
    if not any(b.get("baseline") for b in got.values()):
        out.append(
            "No plain transformer of this task and backbone is listed, so nothing to beat: "
            "the table gives each model's own figures."
        )
    return " ".join(out)


def too_few(n_rows: int) -> str:
    """Why there is no comparison table on the visitor's file."""
    return (
        f"The comparison needs at least {MIN_ROWS} labelled rows that every checkpoint could "
        f"read; {n_rows} here. Add rows to your file (or set Rows per file to 0)."
    )
