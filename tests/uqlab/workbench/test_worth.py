"""The file comparison's glue (uqlab.workbench.worth): frames in, blocks out, on shared rows
only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from uqlab.evaluation.comparison import Scored
from uqlab.evaluation.file_comparison import OnFile, file_blocks
from uqlab.workbench import worth
from uqlab.workbench.dataset import CLASS_P, OUT, YOURS


class _Info:
    def __init__(self, name: str, family: str, metrics: dict | None = None):
        self.name, self.family, self.metrics = name, family, metrics


def _frame(n: int, seed: int, ood: int = 0) -> pd.DataFrame:
    """A frame as :func:`uqlab.workbench.dataset.frame` makes it: ``n`` rows of the file, ``ood`` of
    the out-of-domain one."""
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(0.05, 0.95, n + ood)
    mean = np.stack([1 - p1, p1], 1)
    out = pd.DataFrame(
        {
            "domain": [YOURS] * n + [OUT] * ood,
            "index": [*range(n), *range(ood)],
            "text": [" ".join(["w"] * (1 + i % 7)) for i in range(n + ood)],
            "gold": rng.integers(0, 2, n + ood),
            "one_minus_max": 1 - mean.max(1),
            "entropy": rng.random(n + ood),
            "mi": rng.random(n + ood),
            "var": rng.random(n + ood),
        }
    )
    for c in range(2):
        out[f"{CLASS_P}{c}"] = mean[:, c]
    return out


def test_a_row_one_checkpoint_could_not_read_is_left_out_for_every_one():
    plain, sampling = _frame(80, 0), _frame(80, 1)
    sampling["gold"] = plain["gold"]
    skipped = sampling.drop(index=[3, 50]).reset_index(drop=True)  # two unreadable rows
    infos = {
        "a-trans": _Info(
            "a-trans", "trans", {"comparison": {"chosen_on": "dev", "score": "max_prob"}}
        ),
        "a-hsto": _Info("a-hsto", "hsto", {"comparison": {"chosen_on": "dev", "score": "mi"}}),
    }  # "mi" is no score's name: a-hsto's choice is made on half the file
    chosen = worth.recorded(infos, ["a-trans", "a-hsto"])
    assert chosen == {"a-trans": "max_prob", "a-hsto": None}
    got, n = worth.blocks(
        {"a-trans": plain, "a-hsto": skipped}, chosen, {"a-hsto": "a-trans", "a-trans": None}, 5
    )
    assert n == 78
    kept = plain.drop(index=[3, 50])
    direct = file_blocks(
        {
            "a-trans": OnFile(worth.scored(kept), recorded="max_prob"),
            "a-hsto": OnFile(worth.scored(skipped)),
        },
        kept["gold"].to_numpy(),
        {"a-hsto": "a-trans", "a-trans": None},
        seed=5,
    )
    assert got == direct and got["a-hsto"]["n"] == 39
    assert [n for n, _ in worth.entries(got, infos)] == ["a-trans", "a-hsto"]  # plain first


def test_the_scores_of_a_frame_are_the_columns_the_page_shows():
    f = _frame(10, 2)
    s = worth.scored(f)
    assert isinstance(s, Scored) and s.mean.shape == (10, 2)
    assert np.array_equal(s.scores["mutual_information"], f["mi"].to_numpy())
    assert np.allclose(s.scores["max_prob"], 1 - s.mean.max(1))


def test_too_few_shared_rows_give_no_block_and_the_out_of_domain_file_is_matched_in_words():
    infos = {"a-trans": None}  # nothing recorded: half the file chooses
    assert worth.blocks({"a-trans": _frame(30, 0)}, infos, {"a-trans": None}, 0) == ({}, 30)
    assert "at least 40" in worth.too_few(30)
    got, n = worth.blocks({"a-trans": _frame(200, 0, ood=150)}, infos, {"a-trans": None}, 0)
    block = got["a-trans"]
    assert n == 200 and block["length_unit"] == "words" and block["ood_matched"]["n_per_side"] > 20
    assert "your two files drawn to the same word counts" in worth.caption(n, got, [])


def test_the_answer_comes_first_and_nothing_is_lost():
    verdict = "x: beats plain 1−p?"
    row = {"checkpoint": "a", "accuracy": "0.9", "uncertainty (dev)": "MI", verdict: "tie"}
    table = pd.DataFrame([row])
    got = worth.answer_first(table)
    assert list(got.columns) == ["checkpoint", "uncertainty (dev)", verdict, "accuracy"]
    assert got.iloc[0].to_dict() == row


def test_two_checkpoints_are_paired_on_the_labelled_rows_both_read():
    """Issue 49 item 4: the paired verdict leaves out a row one could not read and the
    out-of-domain file's rows (no label), and equals two_models on exactly those rows."""
    from uqlab.evaluation.two_models import two_models

    a, b = _frame(70, 0, ood=30), _frame(70, 1, ood=30)
    b["gold"] = a["gold"]
    b = b.drop(index=[4, 20]).reset_index(drop=True)  # two rows B could not read
    got, n = worth.pair({"A": a, "B": b}, "A", "B", "entropy", seed=3)
    assert n == 68 and got["n"] == 68 and (got["a"], got["b"]) == ("A", "B")
    keep = a[a["domain"] == YOURS].drop(index=[4, 20])
    rest = b[b["domain"] == YOURS]
    want = two_models(
        worth.scored(keep),
        worth.scored(rest),
        keep["gold"].to_numpy(),
        ("A", "B"),
        score="entropy",
        seed=3,
    )
    assert got == want
    table = worth.pair_table(got)
    assert list(table.columns) == ["metric", "better", "B − A [95 %]", "A: A", "B: B"]
    few, n_few = worth.pair({"A": a.head(30), "B": b}, "A", "B", "max_prob", seed=3)
    assert few is None and n_few == 28  # below MIN_ROWS: no verdict, and how many there are
    assert "28 here" in worth.too_few_pair(n_few, mine=True)


def test_the_plain_checkpoint_is_offered_as_a_first():
    infos = {"x-hsto": _Info("x-hsto", "hsto"), "x-trans": _Info("x-trans", "trans")}
    assert worth.pair_defaults(["x-hsto", "x-trans"], infos) == (1, 0)
    assert worth.pair_defaults(["x-hsto", "upload"], infos) == (0, 1)  # no plain one listed
