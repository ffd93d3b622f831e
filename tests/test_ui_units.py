"""The app's plain helpers: URL state parsing and user-supplied sentences."""

from __future__ import annotations

import pytest

from ui.logic.inputs import MAX_ROWS, parse_csv, parse_lines
from ui.logic.state import MAX_T, ViewState, parse, to_params

NAMES = ("unacceptable", "acceptable")


def test_state_round_trips_through_the_url():
    state = ViewState(
        ckpt="cola-hsto",
        text="John is tall.",
        label=0,
        T=77,
        seed=5,
        tau1=0.123456789,
        tau2=40.0,
        noise_scale=0.5,
        bam_mode="mean",
        em_iterations=3,
        dropout=0.2,
        scaled=True,
    )
    back, notes = parse(to_params(state), ["cola-hsto"], None)
    assert back == state and notes == []
    # one name per knob, from the widget to the kernel: the URL keys are the library's names
    assert {"noise_scale", "bam_mode", "em_iterations"} <= set(to_params(state))
    settings = state.overrides()
    assert (settings.noise_scale, settings.bam_mode, settings.em_iterations) == (0.5, "mean", 3)


def test_links_made_before_the_rename_still_open_the_same_view():
    state, notes = parse({"noise": "0.5", "bam": "mean", "em": "3"}, ["a"], "a")
    assert (state.noise_scale, state.bam_mode, state.em_iterations) == (0.5, "mean", 3)
    assert notes == []


def test_missing_values_take_defaults_and_bad_ones_are_explained():
    state, notes = parse({"T": "0", "seed": "-4", "tau2": "nan", "noise_scale": "9",
                          "em_iterations": "x"}, ["a"], "a")  # fmt: skip
    assert state.ckpt == "a" and state.T == 1 and state.seed == 0
    assert state.tau2 is None and state.noise_scale == 5.0 and state.em_iterations is None
    assert len(notes) == 5
    state, notes = parse({"T": str(10 * MAX_T), "text": "x" * 30_000}, [], None)
    assert state.T == MAX_T and len(state.text) == 20_000 and len(notes) == 2


def test_pasted_lines_with_labels_names_and_domains():
    rows, problems = parse_lines("a b\t1\nc d\tacceptable\tood\n\n\tx\ne f\tmaybe", NAMES)
    assert rows == [("a b", 1, "pasted"), ("c d", 1, "ood"), ("e f", None, "pasted")]
    assert len(problems) == 2


def test_csv_uploads():
    rows, problems = parse_csv(b"Sentence,label,domain\nhello there,0,id\n,1,id\nbye,2,ood\n",
                               NAMES)  # fmt: skip
    assert rows == [("hello there", 0, "id"), ("bye", None, "ood")] and len(problems) == 2
    with pytest.raises(ValueError, match="'sentence'"):
        parse_csv(b"words,label\nhi,1\n", NAMES)
    with pytest.raises(ValueError, match="not a readable CSV"):
        parse_csv(b"\xff\xfe\x00garbage\x00", NAMES)
    with pytest.raises(ValueError, match="limit"):
        parse_csv(b"sentence\n" + b"x\n" * 2_000_000, NAMES)
    many, notes = parse_csv(("sentence\n" + "a\n" * (MAX_ROWS + 5)).encode(), NAMES)
    assert len(many) == MAX_ROWS and "first" in notes[-1]


def test_the_model_card_states_the_float16_storage_check_when_recorded():
    from pathlib import Path

    from ui.logic.catalog import storage_line
    from uqcore.registry import CheckpointInfo

    def info(training: dict) -> CheckpointInfo:
        return CheckpointInfo(name="x", path=Path("x"), family="trans", task="imdb", config={},
                              metrics=None, training=training, card="")  # fmt: skip

    check = {"dtype": "float16", "max_abs_log_prob_diff": 0.0035, "examples": 500,
             "argmax_agreement": 1.0}  # fmt: skip
    assert storage_line(info({"storage": check})) == (
        "Stored in float16: predictions within 3.5e-03 in log-probability of the float32 model "
        "on 500 dev texts (argmax agreement 100.0%)."
    )
    assert storage_line(info({})) is None


def test_the_unsure_story_is_a_sentence_whose_samples_disagree():
    """The landing's "Unsure" story: among in-domain rows whose samples split between right and
    wrong, the highest mutual information; never "the samples disagree" when they all agree."""
    import pandas as pd

    from ui.logic import dataset, landing

    rows = pd.DataFrame({
        "domain": [dataset.IN] * 3 + [dataset.OUT], "text": ["a", "b", "c", "d"],
        "gold": [1, 1, 0, 0], "pred": [1, 0, 0, 1], "p_gold": [0.9, 0.2, 0.6, 0.4],
        "var_gold": [0.0, 0.01, 0.04, 0.02], "correct": [10, 0, 6, 3], "T": [10] * 4,
        "mi": [0.0, 0.3, 0.1, 0.2],
    })  # fmt: skip
    sure, unsure, ood = landing.stories(rows)
    assert (sure.text, unsure.text, ood.text) == ("a", "c", "d")  # not "b": all its samples agree
    assert unsure.why == "6 of 10 samples right: the samples disagree"
    agreeing = landing.stories(rows[rows["text"] != "c"])[1]
    assert agreeing.text == "b" and "disagree" not in agreeing.why and "± 0.10" in agreeing.why
