"""ui.logic.sweep: the sweep's table per value and domain, every value of a chunk of texts asked
of the sampler at once."""

from __future__ import annotations

import numpy as np

from ui.logic import sweep
from uqlab.workbench.compute import Sampled

ROWS = [
    ("a fine film", 1, "in", 0),
    ("a dull film", 0, "in", 1),
    ("the battery died", 0, "out", 2),
    ("", 1, "out", 3),
]


def _samples(text: str, value: float) -> Sampled | str:
    """Made-up samples: p(class 1) grows with the value and the text's length."""
    if not text:
        return "empty text"
    p = min(0.95, 0.1 * value + 0.1 * len(text.split()))
    probs = np.array([[1 - p, p], [1 - p / 2, p / 2]])  # [T, C]
    return Sampled(probs, np.log(probs))


def test_each_chunk_is_asked_once_for_every_value_and_each_value_gets_its_own_table():
    calls = []

    def probs_grid(texts, values):
        calls.append((texts, tuple(values)))
        return [[_samples(t, v) for t in texts] for v in values]

    seen = []
    table = sweep.records(ROWS, probs_grid, [3.0, 1.0], lambda f, v: seen.append((f, v)))
    assert len(calls) == 1 and calls[0][1] == (1.0, 3.0)  # the values sorted, asked at once
    assert list(table["tau"]) == [1.0, 1.0, 3.0, 3.0]
    assert list(table["domain"]) == ["in", "out"] * 2
    assert list(table["n"]) == [2, 1, 2, 1]  # the empty text is skipped
    in_1 = table[(table.tau == 1.0) & (table.domain == "in")].iloc[0]
    mean_p = [(_samples(t, 1.0).probs[:, 1]).mean() for t, *_ in ROWS[:2]]
    assert in_1["accuracy"] == np.mean(
        [(p > 0.5) == g for p, g in zip(mean_p, (1, 0), strict=True)]
    )
    assert seen[-1] == (1.0, 3.0)


def test_the_tables_are_the_dataset_frames_statistics_at_every_value():
    from uqlab.workbench import dataset

    def probs_grid(texts, values):
        return [[_samples(t, v) for t in texts] for v in values]

    table = sweep.records(ROWS, probs_grid, [0.5, 2.0, 7.0])
    for value in (0.5, 2.0, 7.0):
        frame, skipped = dataset.frame(ROWS, lambda texts, v=value: [_samples(t, v) for t in texts])
        assert skipped == 1
        for domain, part in frame.groupby("domain"):
            row = table[(table.tau == value) & (table.domain == domain)].iloc[0]
            assert row["n"] == len(part)
            assert row["accuracy"] == (part["pred"] == part["gold"]).mean()
            assert np.isclose(row["mi"], part["mi"].mean(), rtol=1e-12, atol=0)
            assert np.isclose(row["entropy"], part["entropy"].mean(), rtol=1e-12, atol=0)


def test_a_sweep_of_texts_none_of_which_can_be_sampled_gives_an_empty_table():
    table = sweep.records(
        [("", 1, "in", 0)], lambda texts, values: [["empty"] for _ in values], [1.0]
    )
    assert table.empty and list(table.columns) == list(sweep.COLUMNS)
