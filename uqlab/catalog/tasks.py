"""The task table: what each task is, in one entry each, read from task descriptions.

A :class:`TaskSpec` holds everything the lab and the app need to know about a task: its title
and label names, its metric, where its data lives (files, Hub ids) and how its splits are drawn,
the evaluation subsets bundled in ``assets/eval`` (by domain), its training defaults and the
rows of the paper's tables that report it (:mod:`uqlab.evaluation.paper`). Every other module asks
this table. Each task is a JSON description (:func:`describe`): the built-in ones are
``uqlab/catalog/task_files/imdb.json`` and ``cola.json``; a user's is read by ``--task-file``
(:mod:`uqlab.catalog.task_file`) and added with :func:`register`. Adding a task is one description.

Domains have one key and one display name each (:data:`DOMAINS`): ``"id"`` (in-domain: the
task's test split) and ``"ood"`` (out-of-domain: the task's OOD set). ``metrics.json`` uses the
keys; the app shows the display names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uqcore.exceptions import ConfigError

DOMAINS = {"id": "in-domain", "ood": "out-of-domain"}  # key -> display name
# What the app opens first, chosen on dev data (`python -m uqlab.evaluation.first_screen`,
# docs/results.md): the word-level H-STO-TRANS on IMDB sentiment: 0.91 accurate on 200 dev reviews,
# whose samples spread visibly (standard deviation of p >= 0.05) on 11.5 % of them, where no MiniLM
# checkpoint does on more than 0.5 %. No candidate's out-of-domain separation by MI survives a
# length-matched check, so the first screen claims none.
DEFAULT_CHECKPOINT = "imdb-hsto"
PAPER_CHECKPOINT = "cola-hsto"  # the paper's word-level H-STO-TRANS (its Table 3 model), MCC 0.14
# Candidates for the first screen, measured on dev data by `python -m
# uqlab.evaluation.first_screen`: (checkpoint, the task whose dev split is its out-of-domain dev
# set, or None). CoLA has no out-of-domain dev split (its out_of_domain_dev file is the project's
# out-of-domain test set).
FIRST_SCREEN_CANDIDATES: tuple[tuple[str, str | None], ...] = (
    ("imdb-minilm-hsto", "cr"),
    ("imdb-minilm-bam", "cr"),
    ("imdb-minilm-mcdropout", "cr"),
    ("cr-minilm-hsto", "imdb"),
    ("cola-minilm-hsto", None),
    ("imdb-hsto", "cr"),
    ("imdb-bam", "cr"),
    ("cola-hsto", None),
)
LONG_TEXT_TASK = "imdb"  # the task whose reviews the app benchmark times on a long text
LONG_TEXT_CHECKPOINT = "imdb-hsto"  # ... and its checkpoint there
TASK_FILES = Path(__file__).resolve().parent / "task_files"
BUILTIN = ("imdb", "cola")  # in the app's order


@dataclass(frozen=True)
class MetricSpec:
    """A task metric as it is stored (``<name>_mean`` / ``<name>_std`` in ``metrics.json``) and
    shown. ``n_classes``: the class count it is defined for (None: any)."""

    name: str  # "accuracy" or "mcc"
    title: str  # "Accuracy", "MCC"
    card_scale: int  # the model card shows scale * value ...
    card_unit: str  # ... followed by this unit
    table_unit: str  # the paper tables' unit (their cells are 100 * value)
    n_classes: int | None = None


METRICS: dict[str, MetricSpec] = {
    "accuracy": MetricSpec("accuracy", "Accuracy", 100, " %", "accuracy %"),
    "mcc": MetricSpec("mcc", "MCC", 1, "", "MCC × 100", n_classes=2),
    "macro_f1": MetricSpec("macro_f1", "Macro-F1", 100, " %", "macro-F1 %"),
}


@dataclass(frozen=True)
class HubSource:
    """Where the task's first two data files come from on the Hugging Face Hub.

    ``splits``: the Hub splits standing for ``TaskSpec.files[0]`` and ``[1]``. ``ood_subset``:
    the bundled eval subset used as the OOD set when the Hub has no copy of it. ``ood_tail``:
    the second split holds ``(in-domain rows, out-of-domain rows)`` in that order (GLUE's CoLA
    validation), so the OOD set is its tail.
    """

    path: str
    config: str | None
    splits: tuple[str, str]
    ood_subset: str | None = None
    ood_tail: tuple[int, int] | None = None


@dataclass(frozen=True)
class TaskSpec:
    """One task, as its description says (:func:`describe`). ``description``: the description
    itself (its ``data`` and ``ood`` files; ``base``: the folder relative paths start from);
    ``test_in_pool``: the test split is drawn from the pool (else a file of its own);
    ``eval_subsets``: domain key -> file stem under ``assets/eval`` (built-in tasks);
    ``eval_sentences``: domain key -> the file stem of that subset cut into sentences
    (:mod:`uqlab.catalog.sentences`: another task's out-of-domain texts in its own form);
    ``eval_id_sample``: the in-domain subset is a label-balanced sample of the test split;
    ``train_defaults``: the base of every training config (``uqlab.training.recipe``);
    ``paper_tables``: the numbers of the paper's tables that report this task; ``builtin``:
    shipped with the lab (``uqlab/catalog/task_files``); ``label_words``: the question and answer
    words of a zero-shot classifier (:mod:`uqlab.label_words`), when the description gives
    them."""

    name: str
    title: str  # "CoLA acceptability"
    short: str  # "CoLA"
    label_names: tuple[str, ...]
    metric: str  # a key of METRICS
    text_column: str
    label_column: str
    layout: str  # the data files, as the error hint describes them
    hub: HubSource | None
    eval_subsets: dict[str, str] = field(hash=False)
    eval_sentences: dict[str, str] = field(hash=False)
    eval_id_sample: bool
    ood_name: str  # the OOD set as the paper calls it
    train_defaults: dict[str, Any] = field(hash=False)
    description: dict[str, Any] = field(hash=False, compare=False)
    paper_tables: tuple[int, ...] = ()
    builtin: bool = False
    # what an instruction model is asked and the word that answers for each class
    # (uqlab.label_words): {"instruction": TEXT, "words": [one per label]}, or None
    label_words: dict[str, Any] | None = field(default=None, hash=False)

    @property
    def metric_spec(self) -> MetricSpec:
        return METRICS[self.metric]

    @property
    def test_in_pool(self) -> bool:
        data = self.description["data"]
        return "file" in data or "test" in data.get("split", {})


OOD_COLUMNS = ("text_column", "label_column")  # an OOD file may name its own columns


def _column(name) -> bool:
    return isinstance(name, str) and 0 < len(name) <= 200


PATH_KEYS = ("data", "ood", "ood_matched", "examples", "base")  # where it reads files from
USER_KEYS = {
    "name",
    "title",
    "short",
    "text_column",
    "label_column",
    "label_names",
    "metric",
    "data",
    "ood",
    "ood_matched",
    "examples",
    "train_defaults",
    "notes",
    "label_words",
}
BUILTIN_KEYS = USER_KEYS | {
    "layout",
    "hub",
    "eval_subsets",
    "eval_sentences",
    "eval_id_sample",
    "paper_tables",
}
MAX_LABELS = 100
DEFAULT_TRAINING = {  # a small word-level recipe: trains in minutes on 2 cores
    "max_len": 64,
    "batch_size": 32,
    "lr": 5e-4,
    "vocab_size": 8_000,
    "min_freq": 1,
    "model": {"n_layers": 2, "n_heads": 4, "d_model": 128, "d_ff": 256, "dropout": 0.1},
}


def describe(
    doc: Any,
    base: Path | str,
    where: str = "the task file",
    builtin: bool = False,
    data_free: bool = False,
) -> TaskSpec:
    """The :class:`TaskSpec` of a description ``doc`` whose relative paths start at ``base``;
    :class:`ConfigError` naming ``where`` and what is wrong. The format is in
    :mod:`uqlab.catalog.task_file`; built-in descriptions may also give ``layout``, ``hub``,
    ``eval_subsets``, ``eval_id_sample`` and ``paper_tables``. ``data_free``: a description
    without files (an upload's, :func:`uqlab.catalog.task_file.data_free`): ``data``, ``ood`` and
    ``examples`` are refused, and the spec reads nothing."""
    _check_keys(doc, where, builtin, data_free)
    name = _check_name(doc["name"], where, builtin)
    labels = _check_label_names(doc["label_names"], where)
    metric = _check_metric(
        doc.get("metric", "accuracy" if len(labels) == 2 else "macro_f1"), len(labels), where
    )
    columns = _columns(doc, where, data_free)
    if not data_free:
        _check_data(doc["data"], where)
    ood = doc.get("ood")
    _check_ood(ood, where)
    _check_ood(doc.get("ood_matched"), where, "ood_matched")
    _check_examples(doc.get("examples"), where)
    defaults = doc.get("train_defaults", DEFAULT_TRAINING)
    if not isinstance(defaults, dict):
        raise ConfigError(f"{where}: train_defaults must be a JSON object.")
    words = _label_words(doc.get("label_words"), len(labels), where)
    title = str(doc.get("title") or name)[:60]
    return TaskSpec(
        name,
        title,
        str(doc.get("short") or title)[:20],
        tuple(labels),
        metric,
        columns["text_column"],
        columns["label_column"],
        layout=str(doc.get("layout") or f"the files named in {where}"),
        hub=_hub(doc.get("hub")),
        eval_subsets=dict(doc.get("eval_subsets", {})),
        eval_sentences=dict(doc.get("eval_sentences", {})),
        eval_id_sample=bool(doc.get("eval_id_sample", False)),
        ood_name=str((ood or {}).get("name") or "out-of-domain")[:40],
        train_defaults=defaults,
        description={"data": {}, **doc, "base": str(doc.get("base", base))},
        paper_tables=tuple(doc.get("paper_tables", ())),
        builtin=builtin,
        label_words=words,
    )


def _check_keys(doc: Any, where: str, builtin: bool, data_free: bool) -> None:
    """A JSON object with only the keys its kind allows and every key it needs."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{where} must hold a JSON object.")
    allowed = BUILTIN_KEYS if builtin else USER_KEYS
    unknown = sorted(set(doc) - allowed - {"base"})
    if unknown:
        raise ConfigError(
            f"{where} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}."
        )
    if data_free and set(PATH_KEYS) & set(doc):
        raise ConfigError(f"{where}: a description without files names none.")
    needed = ("name", "label_names") + (() if data_free else ("text_column", "data"))
    missing = [k for k in needed if k not in doc]
    if missing:
        raise ConfigError(f"{where} lacks {', '.join(missing)}.")


def _check_name(name: Any, where: str, builtin: bool) -> str:
    """1-40 lower-case letters, digits or dashes; a user's task never takes a built-in name."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", name):
        raise ConfigError(
            f"{where}: name must be 1-40 lower-case letters, digits or dashes; got {name!r}."
        )
    if not builtin and name in BUILTIN:
        raise ConfigError(f"{where}: {name!r} is a built-in task's name; choose another.")
    return name


def _check_label_names(labels: Any, where: str) -> list[str]:
    """2-MAX_LABELS distinct (case-insensitively) names of 1-40 characters."""
    if (
        not isinstance(labels, list)
        or not 2 <= len(labels) <= MAX_LABELS
        or not all(isinstance(x, str) and 0 < len(x) <= 40 for x in labels)
        or len({x.lower() for x in labels}) != len(labels)
    ):
        raise ConfigError(
            f"{where}: label_names must list 2-{MAX_LABELS} distinct names of "
            "1-40 characters, in the order of the label ids."
        )
    return labels


def _check_metric(metric: Any, n_labels: int, where: str) -> str:
    """A key of :data:`METRICS` that fits ``n_labels`` classes."""
    spec_m = METRICS.get(metric) if isinstance(metric, str) else None
    if spec_m is None:
        raise ConfigError(f"{where}: metric must be one of {', '.join(METRICS)}; got {metric!r}.")
    if spec_m.n_classes is not None and spec_m.n_classes != n_labels:
        raise ConfigError(
            f"{where}: {spec_m.title} is for {spec_m.n_classes} classes; this task "
            f"has {n_labels}: use macro_f1 or accuracy."
        )
    return metric


def _columns(doc: dict[str, Any], where: str, data_free: bool) -> dict[str, str]:
    """The text and label columns (defaults: a data-free task's ``text``, ``label``)."""
    columns = {
        "text_column": doc.get("text_column", "text" if data_free else None),
        "label_column": doc.get("label_column", "label"),
    }
    for key, col in columns.items():
        if not isinstance(col, str) or not col or len(col) > 200:
            raise ConfigError(f"{where}: {key} must name a column, got {col!r}.")
    return columns


def _check_ood(ood: Any, where: str, key: str = "ood") -> None:
    """``ood`` (or ``ood_matched``: out-of-domain texts cut to the in-domain texts' form, for the
    length-matched OOD figure): ``{"file": PATH, "name": TEXT}``, its own columns optional, or
    absent."""
    if ood is not None and (
        not isinstance(ood, dict)
        or set(ood) - {"file", "name", *OOD_COLUMNS}
        or not isinstance(ood.get("file"), str)
        or not all(_column(ood.get(k, "x")) for k in OOD_COLUMNS)
    ):
        raise ConfigError(
            f'{where}: {key} must be {{"file": PATH, "name": TEXT}} (with "text_column" and '
            '"label_column" when its columns are not named as the task\'s) or left out.'
        )


def _check_examples(examples: Any, where: str) -> None:
    """``examples``: a file per domain key (``id``, ``ood``), or absent."""
    if examples is not None and (
        not isinstance(examples, dict)
        or not examples
        or set(examples) - set(DOMAINS)
        or not all(isinstance(v, str) for v in examples.values())
    ):
        raise ConfigError(f"{where}: examples must map 'id' (and 'ood') to a file or be left out.")


def _hub(hub: dict[str, Any] | None) -> HubSource | None:
    """A built-in task's Hugging Face source, its lists as tuples."""
    if hub is None:
        return None
    return HubSource(
        **{
            **hub,
            "splits": tuple(hub["splits"]),
            "ood_tail": tuple(hub["ood_tail"]) if hub.get("ood_tail") else None,
        }
    )


MAX_INSTRUCTION_CHARS = 500


def _label_words(doc: Any, n_labels: int, where: str) -> dict[str, Any] | None:
    """``label_words``: ``{"instruction": TEXT, "words": [one per label]}`` or absent."""
    if doc is None:
        return None
    if (
        not isinstance(doc, dict)
        or set(doc) != {"instruction", "words"}
        or not isinstance(doc["instruction"], str)
        or not 0 < len(doc["instruction"]) <= MAX_INSTRUCTION_CHARS
        or not isinstance(doc["words"], list)
        or len(doc["words"]) != n_labels
        or not all(isinstance(w, str) and 0 < len(w) <= 40 for w in doc["words"])
    ):
        raise ConfigError(
            f'{where}: label_words must be {{"instruction": TEXT (at most '
            f'{MAX_INSTRUCTION_CHARS} characters), "words": [one word per label]}} or left out.'
        )
    return {"instruction": doc["instruction"], "words": list(doc["words"])}


def _check_data(data: Any, where: str) -> None:
    """``data``: three files (train, dev, test); one file with split fractions and a seed; or
    (built-in form) a pool of files with split fractions and, unless the split has a test
    fraction, a test file."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}: data must be an object (train/dev/test files, or a file "
            "with split fractions)."
        )
    if "train" in data:
        if set(data) != {"train", "dev", "test"} or not all(
            isinstance(v, str) for v in data.values()
        ):
            raise ConfigError(
                f"{where}: data with a train file takes train, dev and test files and nothing else."
            )
        return
    one = "file" in data
    keys = {"file", "split", "seed"} if one else {"pool", "split", "seed", "test"}
    files = [data.get("file")] if one else list(data.get("pool") or [])
    if set(data) - keys or not files or not all(isinstance(f, str) for f in files):
        raise ConfigError(
            f"{where}: data must name train, dev and test files, or one file "
            "with split (dev and test fractions) and seed."
        )
    split = data.get("split", {"dev": 0.1, "test": 0.2})
    needs_test = one or "test" not in data
    ok = (
        isinstance(split, dict)
        and {"dev"} <= set(split) <= {"dev", "test"}
        and (("test" in split) == needs_test)
        and all(isinstance(v, int | float) and 0 < v < 0.5 for v in split.values())
        and sum(split.values()) < 0.9
    )
    seed = data.get("seed", 0)
    if not ok or isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(
            f'{where}: split must be {{"dev": f, "test": f}} with each '
            "fraction in (0, 0.5) and their sum under 0.9; seed an integer."
        )


def _builtin(name: str) -> TaskSpec:
    path = TASK_FILES / f"{name}.json"
    return describe(json.loads(path.read_text(encoding="utf-8")), TASK_FILES, path.name, True)


TASKS: dict[str, TaskSpec] = {name: _builtin(name) for name in BUILTIN}
TASK_NAMES: tuple[str, ...] = tuple(TASKS)  # the built-in tasks


def register(spec: TaskSpec) -> TaskSpec:
    """Add a task described by a file (:mod:`uqlab.catalog.task_file`) to the table, for this
    process; a built-in task's name is refused. Registering a name again replaces its
    description."""
    if spec.name in BUILTIN:
        raise ConfigError(f"Task name {spec.name!r} is a built-in task's; name yours otherwise.")
    TASKS[spec.name] = spec
    return spec


def get_task(name: str) -> TaskSpec:
    """The spec of task ``name``; :class:`ConfigError` listing the known tasks otherwise."""
    spec = TASKS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError(f"Unknown task {name!r}; use one of {', '.join(TASKS)}.")
    return spec


def task_title(name: str) -> str:
    """A task's title (the name itself for a task this table does not know)."""
    spec = TASKS.get(name) if isinstance(name, str) else None
    return spec.title if spec else str(name)


def eval_subset_domains() -> dict[str, str]:
    """Every bundled evaluation subset: file stem -> domain key, in table order."""
    return {stem: d for spec in TASKS.values() for d, stem in spec.eval_subsets.items()}


def sentence_sets() -> dict[str, str]:
    """Every bundled subset cut into sentences: the subset's file stem -> the stem of its
    sentences (``TaskSpec.eval_sentences``), in table order."""
    return {
        spec.eval_subsets[d]: stem
        for spec in TASKS.values()
        for d, stem in spec.eval_sentences.items()
    }


def label_names(info) -> tuple[str, ...]:
    """The label names of a checkpoint (a :class:`uqcore.registry.CheckpointInfo`): its own
    (``training.label_names``), else its task's (:data:`TASKS`), else generic."""
    names = info.training.get("label_names")
    if isinstance(names, list | tuple) and names and all(isinstance(n, str) for n in names):
        return tuple(names)
    spec = TASKS.get(info.task)
    return spec.label_names if spec else ("class 0", "class 1")
