"""The task table (uqlab.catalog.tasks): complete, consistent, and the one place that names a
task."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from uqcore.exceptions import ConfigError
from uqlab.catalog.paths import EVAL_DIR, SHIPPED_CHECKPOINT_DIR
from uqlab.catalog.tasks import (
    DEFAULT_CHECKPOINT,
    DOMAINS,
    FIRST_SCREEN_CANDIDATES,
    METRICS,
    PAPER_CHECKPOINT,
    TASKS,
    get_task,
    task_title,
)
from uqlab.data import EVAL_SUBSETS, load_eval_subset
from uqlab.evaluation import paper
from uqlab.training.recipe import build_config

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", TASKS)
def test_every_task_is_complete_and_consistent(name: str) -> None:
    spec = TASKS[name]
    assert spec.name == name and spec.title and spec.short and spec.ood_name
    metric = METRICS[spec.metric]
    assert spec.metric_spec is metric
    n = metric.n_classes
    assert len(spec.label_names) == n if n else len(spec.label_names) >= 2
    assert len(set(spec.label_names)) == len(spec.label_names)
    data = spec.description["data"]
    files = [
        *data["pool"],
        *([data["test"]] if "test" in data else []),
        spec.description["ood"]["file"],
    ]
    assert spec.builtin and all(f.startswith("${data}/") and f.endswith(".parquet") for f in files)
    assert all(f.split("/")[1] in spec.layout for f in files)  # the error hint names them
    assert set(spec.eval_subsets) == set(DOMAINS)  # one bundled subset per domain
    for domain, stem in spec.eval_subsets.items():
        assert (EVAL_DIR / f"{stem}.parquet").is_file(), stem
        assert load_eval_subset(stem).name == ("test" if domain == "id" else "ood")
    hub = spec.hub
    assert len(hub.splits) == 2 and (hub.ood_subset is None) != (hub.ood_tail is None)
    assert hub.ood_subset is None or hub.ood_subset in spec.eval_subsets.values()
    assert spec.paper_tables and all(n in paper.TABLES for n in spec.paper_tables)


def test_eval_subsets_come_from_the_table_and_none_is_shared() -> None:
    stems = [s for spec in TASKS.values() for s in spec.eval_subsets.values()]
    assert len(stems) == len(set(stems)) and set(stems) == set(EVAL_SUBSETS)
    from uqlab.data import SENTENCE_SETS  # made from a subset (uqlab.catalog.sentences)

    assert set(SENTENCE_SETS) <= set(stems)
    files = {p.stem for p in EVAL_DIR.glob("*.parquet")}
    assert files == set(stems) | set(SENTENCE_SETS.values())


@pytest.mark.parametrize("name", TASKS)
def test_training_defaults_are_what_build_config_starts_from(name: str) -> None:
    defaults = TASKS[name].train_defaults
    tc = build_config(name, "trans", "out")
    for key, value in defaults.items():
        if key != "model":
            assert getattr(tc, key) == value, key
    assert tc.model == defaults["model"]
    assert tc.model is not defaults["model"]  # a copy: configs never share the table's dicts
    tuned = build_config(name, "trans", "out", overrides=["model.d_model=64"])
    assert tuned.model["d_model"] == 64 and defaults["model"]["d_model"] != 64


def test_get_task_errors_clearly() -> None:
    assert get_task("cola") is TASKS["cola"]
    for bad in ("sst2", "", None, 3):
        with pytest.raises(ConfigError, match=r"Unknown task .*use one of imdb, cola"):
            get_task(bad)
    with pytest.raises(ConfigError, match="Unknown task 'sst2'"):
        build_config("sst2", "trans", "out")
    assert task_title("cola") == "CoLA acceptability" and task_title("mystery") == "mystery"


def test_specs_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TASKS["imdb"].metric = "mcc"  # type: ignore[misc]


def test_only_the_task_table_names_a_task() -> None:
    """No module of the lab or the app spells a task name as a string, except the two tables."""
    quoted = re.compile(r"""["'](imdb|cola)["']""")
    allowed = {ROOT / "uqlab/catalog/tasks.py", ROOT / "uqlab/evaluation/paper.py"}
    files = [
        ROOT / "app.py",
        *(p for d in ("uqlab", "ui", "app_pages", "viz") for p in (ROOT / d).rglob("*.py")),
    ]
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        if p not in allowed
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if quoted.search(line)
    ]
    assert not offenders, offenders


def test_the_built_in_tasks_are_descriptions_read_through_the_same_code() -> None:
    """uqlab/catalog/task_files/<name>.json through uqlab.catalog.tasks.describe, as a user's task
    file is."""
    import json

    from uqlab.catalog.tasks import TASK_FILES, describe

    for name in ("imdb", "cola"):
        doc = json.loads((TASK_FILES / f"{name}.json").read_text())
        again = describe(doc, TASK_FILES, builtin=True)
        assert again == TASKS[name]
    assert {p.stem for p in TASK_FILES.glob("*.json")} == set(TASKS) & {"imdb", "cola"}


def metrics_of(name: str) -> dict:
    return json.loads((SHIPPED_CHECKPOINT_DIR / name / "metrics.json").read_text())


def test_the_default_is_a_measured_first_screen_candidate_and_its_choice_is_recorded():
    """The first screen's model comes from the candidates ``python -m
    uqlab.evaluation.first_screen`` measures on dev data, and docs/results.md records its row beside
    the others."""
    names = [name for name, _ in FIRST_SCREEN_CANDIDATES]
    assert DEFAULT_CHECKPOINT in names and PAPER_CHECKPOINT in names
    assert metrics_of(DEFAULT_CHECKPOINT)["id"]["accuracy_mean"] > 0.85  # worth showing
    doc = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    section = doc.split("## The first screen, chosen on dev data", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")}
    assert set(names) - {"imdb-minilm-mcdropout"} <= rows, rows
    assert f"`{DEFAULT_CHECKPOINT}`" in section
