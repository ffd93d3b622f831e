"""The comparison table and its verdicts, as the Results page and docs/results.md show them."""

from __future__ import annotations

import pytest

from uqlab.evaluation.comparison_report import comparison_rows, left_out, markdown, verdict_lines


def _pair(difference: float, low: float, high: float, verdict: str) -> dict:
    return {"difference": difference, "interval": [low, high], "verdict": verdict}


def _metrics(baseline: str | None, ece: float, errors: dict | None = None, ood=None) -> dict:
    block = {
        "baseline": baseline,
        "score": "mutual_information" if baseline else "max_prob",
        "intervals": {
            "accuracy": {"value": 0.9, "interval": [0.87, 0.93]},
            "ece": {"value": ece, "interval": [ece - 0.01, ece + 0.01]},
            "error_auroc": {"value": 0.8, "interval": [0.75, 0.85]},
        },
        "ood_matched": {"n_per_side": 495, "auroc": {"value": 0.7, "interval": [0.66, 0.73]}},
    }
    if baseline:
        block["errors"] = errors
        block["ood_matched"]["versus_baseline"] = ood
    return {
        "task": "cr",
        "family": "hsto" if baseline else "trans",
        "comparison": block,
        "id": {"scaled": {"ece": ece / 2}},
        "error_detection": {
            "id": {"mutual_information": {"aurc": 0.05}, "max_prob": {"aurc": 0.04}}
        },
        "ood_detection": {"mutual_information": {"auroc": 0.71}, "max_prob": {"auroc": 0.66}},
    }


ENTRIES = [
    (
        "a-laplace",
        _metrics(
            "a-trans", 0.04, _pair(-0.01, -0.03, 0.01, "tie"), _pair(0.05, 0.02, 0.08, "better")
        ),
    ),
    ("a-hsto", _metrics("a-trans", 0.09, _pair(-0.05, -0.08, -0.02, "worse"), None)),
    ("a-trans", _metrics(None, 0.10)),
    ("old", {"task": "cr"}),  # evaluated before the block: left out
]


def test_each_row_shows_intervals_the_dev_choice_and_the_paired_verdicts():
    rows = {r["checkpoint"]: r for r in comparison_rows(ENTRIES)}
    assert set(rows) == {"a-laplace", "a-hsto", "a-trans"}
    lap = rows["a-laplace"]
    assert lap["accuracy"] == "0.900 [0.870, 0.930]" and lap["ECE scaled"] == "0.020"
    assert lap["uncertainty (dev)"] == "MI" and lap["error AURC"] == "0.050"
    assert lap["OOD AUROC"] == "0.710" and lap["OOD AUROC, lengths matched"] == (
        "0.700 [0.660, 0.730] (495 a side)"
    )
    assert lap["errors: beats plain 1−p?"] == "−0.010 [−0.030, +0.010] tie"
    assert lap["OOD matched: beats plain 1−p?"] == "+0.050 [+0.020, +0.080] better"
    assert rows["a-trans"]["errors: beats plain 1−p?"] == "the baseline"
    assert rows["a-hsto"]["OOD matched: beats plain 1−p?"] == "—"  # missing: a dash
    assert rows["a-hsto"]["NLL"] == "—"


def test_a_sampling_family_with_no_plain_model_beside_it_is_not_called_the_baseline():
    alone = _metrics(None, 0.05) | {"family": "hsto"}  # no plain transformer of its task
    halved = _metrics("a-trans", 0.05)
    halved["comparison"]["chosen_on"] = "half of your file"
    rows = {r["checkpoint"]: r for r in comparison_rows([("b-hsto", alone), ("a-x", halved)])}
    assert rows["b-hsto"]["errors: beats plain 1−p?"] == "—"
    assert rows["b-hsto"]["OOD matched: beats plain 1−p?"] == "—"
    assert rows["a-x"]["uncertainty (dev)"] == "MI (half of your file)"


def test_the_verdicts_name_the_winners_say_none_plainly_and_weigh_the_ece_against_half():
    (line,) = verdict_lines(ENTRIES)
    assert line.startswith("Beats a-trans's 1 − max p, for its errors: none; ")
    assert "out-of-domain texts at matched length: a-laplace (MI +0.050 [+0.020, +0.080])" in line
    assert "Lowest ECE beside it: a-laplace 0.040 against 0.100 (−60 %; at most half)." in line
    table = markdown(ENTRIES)
    assert table[0].startswith("| checkpoint | accuracy |") and table[-2] == f"- {line}"
    assert table[-1] == f"- {left_out(ENTRIES)}"


def test_the_checkpoints_left_out_are_named_with_the_command_that_adds_them():
    """A checkpoint without a comparison block is named under the table, not silently absent;
    a name that is not a folder name (an upload's) is not said; none left out: no sentence."""
    said = left_out(ENTRIES + [("<b>x</b>", None)])
    assert said.startswith("Not in the table yet (no comparison block): old; ")
    assert "--comparison-only" in said and "<b>" not in said
    assert left_out(ENTRIES[:3]) == ""
    assert markdown(ENTRIES[:3])[-1].startswith("- Beats a-trans")


@pytest.mark.parametrize(
    "hostile",
    [
        {"comparison": {"baseline": "x", "intervals": {"accuracy": {"value": "1"}}}},
        {"comparison": {"baseline": 3, "score": "<b>", "ood_matched": {"n_per_side": True}}},
        {"comparison": []},
        {"comparison": {"baseline": "[see](http://evil.example)", "errors": {"verdict": "better"}}},
    ],
)
def test_an_uploaded_block_of_any_shape_gives_dashes_not_a_traceback(hostile):
    rows = comparison_rows([("up", hostile)])
    assert all(v in ("—", "up", "the baseline") or "—" in v for r in rows for v in r.values())
    lines = verdict_lines([("up", hostile)])  # a baseline named with markup is not said
    assert not any("http" in line or "[" in line for line in lines), lines
