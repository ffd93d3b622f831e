"""The task table: what each task is, in one entry each.

A :class:`TaskSpec` holds everything the lab and the app need to know about a task: its title
and label names, its metric, where its data lives (local files, Hub ids) and how its splits are
drawn, the evaluation subsets bundled in ``assets/eval`` (by domain), its training defaults and
the rows of the paper's tables that report it (:mod:`uqlab.paper`). Every other module asks this
table; adding a task is one entry in :data:`TASKS` (plus its data and its eval subsets).

Domains have one key and one display name each (:data:`DOMAINS`): ``"id"`` (in-domain: the
task's test split) and ``"ood"`` (out-of-domain: the task's OOD set). ``metrics.json`` uses the
keys; the app shows the display names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uqcore.errors import ConfigError

DOMAINS = {"id": "in-domain", "ood": "out-of-domain"}  # key -> display name
# What the app opens first: MiniLM with H-STO attention in its last layer (CoLA test MCC 0.28),
# right and sure on the first example (50 of 50 samples, p(gold) 0.71) and more uncertain out of
# domain (mean mutual information 2.38e-4 against 2.30e-4 in domain, the bundled subsets, T = 10)
DEFAULT_CHECKPOINT = "cola-minilm-hsto"
PAPER_CHECKPOINT = "cola-hsto"  # the paper's word-level H-STO-TRANS (its Table 3 model), MCC 0.14
LONG_TEXT_TASK = "imdb"  # the task whose reviews the app benchmark times on a long text
LONG_TEXT_CHECKPOINT = "imdb-hsto"  # ... and its checkpoint there


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
    """One task. ``files``: the three Parquet files under the data folder, (pool, test, ood) when
    ``test_in_pool`` is False (the pool splits 9:1 into train and dev), else (pool part 1, pool
    part 2, ood) with the pool split 7:1:2 into train, dev and test (see :mod:`uqlab.data`).
    ``eval_subsets``: domain key -> file stem under ``assets/eval``; ``eval_id_sample``: the
    in-domain subset is a label-balanced sample of the test split (else the whole test split).
    ``train_defaults``: the base of every training config (``uqlab.training.config``).
    ``paper_tables``: the numbers of the paper's tables that report this task."""

    name: str
    title: str  # "CoLA acceptability"
    short: str  # "CoLA"
    label_names: tuple[str, ...]
    metric: str  # a key of METRICS
    text_column: str
    files: tuple[str, str, str]
    layout: str  # the data folder's files, as the error hint describes them
    test_in_pool: bool
    hub: HubSource | None
    eval_subsets: dict[str, str] = field(hash=False)
    eval_id_sample: bool
    ood_name: str  # the OOD set as the paper calls it
    train_defaults: dict[str, Any] = field(hash=False)
    paper_tables: tuple[int, ...] = ()
    label_column: str = "label"
    # a task described by a file (uqlab.task_file): the description as read, its paths resolved
    description: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def metric_spec(self) -> MetricSpec:
        return METRICS[self.metric]


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec(
            "imdb", "IMDB sentiment", "IMDB", ("neg", "pos"), "accuracy", "text",
            ("imdb/train.parquet", "imdb/test.parquet", "cr/test.parquet"),
            "imdb/{train,test}.parquet (text, label), "
            "cr/{train,validation,test}.parquet (text, label)",
            test_in_pool=False,
            hub=HubSource("stanfordnlp/imdb", None, ("train", "test"), ood_subset="cr_test"),
            eval_subsets={"id": "imdb_test_sample", "ood": "cr_test"}, eval_id_sample=True,
            ood_name="CR",
            # the paper's IMDB model: 1 layer, 8 heads, embedding and hidden size 128, Adam 1e-3,
            # batch 128
            train_defaults={
                "max_len": 256, "batch_size": 128, "lr": 1e-3, "vocab_size": 20_000,
                "model": {"n_layers": 1, "n_heads": 8, "d_model": 128, "d_ff": 128,
                          "dropout": 0.1},
            },
            paper_tables=(1,),
        ),
        TaskSpec(
            "cola", "CoLA acceptability", "CoLA", ("unacceptable", "acceptable"), "mcc",
            "sentence",
            ("cola/train.parquet", "cola/validation.parquet", "cola/ood.parquet"),
            "cola/{train,validation,ood}.parquet (sentence, label, idx, source)",
            test_in_pool=True,
            hub=HubSource("nyu-mll/glue", "cola", ("train", "validation"), ood_tail=(527, 516)),
            eval_subsets={"id": "cola_test", "ood": "cola_ood"}, eval_id_sample=False,
            ood_name="CoLA out-of-domain",
            # word-level CoLA from scratch (the paper used ELMo inputs, which we do not have)
            train_defaults={
                "max_len": 48, "batch_size": 32, "lr": 5e-4, "vocab_size": 8_000, "min_freq": 1,
                "model": {"n_layers": 4, "n_heads": 8, "d_model": 128, "d_ff": 512,
                          "dropout": 0.1},
            },
            paper_tables=(2, 3),
        ),
    )
}  # fmt: skip
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def register(spec: TaskSpec) -> TaskSpec:
    """Add a task described by a file (:mod:`uqlab.task_file`) to the table, for this process;
    a built-in task's name is refused. Registering the same description again is a no-op."""
    known = TASKS.get(spec.name)
    if known is not None and known.description is None:
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
