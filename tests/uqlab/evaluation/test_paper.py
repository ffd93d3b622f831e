"""The paper's tables (uqlab.evaluation.paper) and the one cell formatter."""

from __future__ import annotations

import dataclasses

import pytest

from uqlab.catalog.tasks import TASKS
from uqlab.evaluation import paper
from uqlab.evaluation.paper import (
    TABLE3,
    TABLES,
    ExampleRow,
    MetricRow,
    correct_cell,
    example_cells,
    metric_cell,
    p_gold_cell,
    pm,
)


@pytest.mark.parametrize(
    ("args", "kwargs", "cell"),
    [
        ((87.01, 0.075, 2, 3), {}, "87.01 ± 0.075"),
        ((87.51,), {}, "87.51"),
        ((0.4, 2.21), {}, "0.40 ± 2.21"),
        ((0.6292, 0.0027), {"scale": 100}, "62.92 ± 0.27"),
        ((0.62921, 0.00271, 4), {}, "0.6292 ± 0.0027"),
        ((0.8718, 0.0), {"scale": 100, "unit": " %"}, "87.18 ± 0.00 %"),
        ((0.42, 0.0005), {"spread_digits": -1}, "0.42 ± 5.0e-04"),
        ((-0.1234, 0.01), {}, "-0.12 ± 0.01"),
    ],
)
def test_pm_on_hand_cases(args, kwargs, cell) -> None:
    assert pm(*args, **kwargs) == cell


def test_cells_of_tables_1_to_3() -> None:
    side = {"mcc_mean": 0.20523, "mcc_std": 0.0076}
    assert metric_cell(side, "mcc") == "20.52 ± 0.76"
    assert metric_cell(side, "mcc", scale=1) == "0.21 ± 0.01"
    assert p_gold_cell(0.198, 0.0028) == "0.20 ± 0.003"
    assert p_gold_cell(0.198, 0.0001) == "0.20 ± 0.000"
    assert p_gold_cell(0.198, 0.0001, small=True) == "0.20 ± 1.0e-04"
    assert p_gold_cell(0.198, 0.0028, small=True) == "0.20 ± 0.003"
    assert correct_cell(7, 10) == "7/10"


def test_the_papers_cells_print_as_in_the_paper() -> None:
    t1, t2 = TABLES[1], TABLES[2]
    assert t1.cells(t1.row_of("imdb-trans")) == ("TRANS (eta=0.5)", "87.51", "63.40")
    assert t1.cells(t1.row_of("imdb-ensemble")) == ("ENSEMBLE", "86.89 ± 0.230", "64.20 ± 1.585")
    assert t1.cells(t1.row_of("imdb-hsto"))[2] == "67.14 ± 0.400"
    assert t2.cells(t2.row_of("cola-mcdropout")) == (
        "MC-DROPOUT (eta=0.1)",
        "19.91 ± 0.40",
        "16.70 ± 2.21",
    )
    assert t2.row_of("cola-bam") is None
    assert example_cells("sally suspected joe, but he did n't holly.") == ("0.60 ± 0.008", "8/10")
    assert example_cells("john is tall on several occasions .") == ("0.42 ± 0.005", "1/10")
    assert example_cells("not in the paper") is None


def test_table_rows_have_one_shape() -> None:
    for table in TABLES.values():
        kinds = {type(r) for r in table.rows}
        assert len(kinds) == 1 and kinds <= {MetricRow, ExampleRow}, table.number
        assert table.title.startswith(f"Table {table.number}:")
    assert all(isinstance(r, ExampleRow) for r in TABLE3) and len(TABLE3) == 10
    assert {r.domain for r in TABLE3} == {"id", "ood"}
    assert all(r.gold in (0, 1) and 0 <= r.correct <= r.samples == 10 for r in TABLE3)
    names = [r.text for r in TABLE3]
    assert len(set(names)) == len(names)
    fields = {f.name for f in dataclasses.fields(MetricRow)}
    assert fields == {"checkpoint", "method", "id_mean", "id_std", "ood_mean", "ood_std"}


def test_each_task_has_its_paper_rows() -> None:
    assert paper.metric_table("imdb") is TABLES[1] and paper.metric_table("cola") is TABLES[2]
    assert paper.examples("imdb") == () and paper.examples("cola") == TABLE3
    for name, spec in TASKS.items():
        if not spec.paper_tables:  # a task described by a file (cr): no paper reports it
            assert paper.metric_table(name) is None and not spec.builtin
            continue
        table = paper.metric_table(name)
        assert all(r.checkpoint.startswith(f"{name}-") for r in table.rows)
        assert spec.paper_tables[0] == table.number


def test_a_sentence_matches_the_papers_row_after_its_normalisation() -> None:
    """Issue 34: the paper prints its sentences tokenised and in lower case; a sentence typed
    as prose is the same row, another sentence (a missing full stop) is not."""
    row = next(r for r in TABLE3 if "n't" in r.text)
    typed = row.text.replace(" n't", "n't").replace(" ,", ",").replace(" .", ".").upper()
    assert typed != row.text and paper.paper_key(typed) == paper.paper_key(row.text)
    assert paper.example_of("cola", typed) is row
    assert example_cells(typed) == example_cells(row.text) is not None
    assert paper.example_of("cola", row.text.rstrip(" .")) is None
    assert paper.example_of("imdb", row.text) is None  # no Table 3 of that task
    assert all(paper.example_of("cola", r.text) is r for r in TABLE3)
