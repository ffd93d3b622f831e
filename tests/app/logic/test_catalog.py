"""The checkpoint catalog (ui.logic.catalog): picker labels and the model card."""

from __future__ import annotations

from uqcore.registry import list_checkpoints
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR


def test_the_model_card_states_the_float16_storage_check_when_recorded():
    from pathlib import Path

    from ui.logic.catalog import storage_line
    from uqcore.registry import CheckpointInfo

    def info(training: dict) -> CheckpointInfo:
        return CheckpointInfo(
            name="x",
            path=Path("x"),
            family="trans",
            task="imdb",
            config={},
            metrics=None,
            training=training,
            card="",
        )

    check = {
        "dtype": "float16",
        "max_abs_log_prob_diff": 0.0035,
        "examples": 500,
        "argmax_agreement": 1.0,
    }
    assert storage_line(info({"storage": check})) == (
        "Stored in float16: predictions within 3.5e-03 in log-probability of the float32 model "
        "on 500 dev texts (argmax agreement 100.0%)."
    )
    assert storage_line(info({})) is None


def test_picker_labels_fit_the_sidebar_and_stay_unique():
    """Defect: the sidebar cut every MiniLM name ("CoLA acceptability · MiniLM-L6 (a") and, at
    1024 px, "CoLA acceptability · Probabilistic"."""
    from ui.logic.catalog import LABEL_CHARS, picker_labels

    infos = list_checkpoints(SHIPPED_CHECKPOINT_DIR)
    labels = picker_labels(infos)
    assert len(set(labels.values())) == len(labels), labels  # two STO-TRANS of IMDB told apart
    for name, label in labels.items():
        assert len(label) <= LABEL_CHARS, label
        task = name.split("-")[0].upper().replace("COLA", "CoLA")
        assert label.startswith(f"{task} · "), label
        assert ("minilm" in name) == ("MiniLM" in label), label
    assert labels["cola-minilm-hsto"] == "CoLA · MiniLM · H-STO-TRANS"
    if "cola-smollm2-trans" in labels:  # one character too long with "Deterministic"
        assert labels["cola-smollm2-trans"] == "CoLA · SmolLM2 · TRANS"
    assert labels["cola-probtrans"] == "CoLA · ProbTrans (EM)"
    assert labels["imdb-sto-t40"] == "IMDB · STO-TRANS (t40)"  # what tells it from imdb-sto-t1


def test_a_zero_shot_checkpoint_is_named_and_described_as_one():
    """A label-word checkpoint (uqlab.label_words) says that it answers in words, untrained."""
    from pathlib import Path

    from ui.logic.catalog import LABEL_CHARS, base_line, display_name, reading
    from uqcore.registry import CheckpointInfo

    def info(family: str) -> CheckpointInfo:
        return CheckpointInfo(
            name=f"cola-smollm2-words-{family}",
            path=Path("x"),
            family=family,
            task="cola",
            config={"backbone": "llama", "max_len": 8192, "stochastic_layers": [29]},
            metrics=None,
            training={
                "prompt": {"template": "{text}?", "words": ["no", "yes"]},
                "config": {"max_len": 128, "base": "smollm2"},
            },
            card="",
        )

    names = {f: display_name(info(f)) for f in ("trans", "sto", "bam", "mcdropout")}
    assert names["sto"] == "CoLA · SmolLM2 words · STO"
    assert all(len(n) <= LABEL_CHARS for n in names.values()), names
    line = base_line(info("sto"))
    assert "'no' / 'yes'" in line and "Nothing trained" in line and "layer(s) 29" in line
    assert reading(info("sto")).startswith("128 tokens, its prompt included")


def test_the_cards_ood_auroc_has_its_length_matched_companion_where_measured():
    import dataclasses

    from ui.logic.catalog import headline

    shipped = {i.name: i for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR)}
    info = shipped["cola-hsto"]
    m = dict(info.metrics)
    m["ood_detection_length_matched"] = {"n_per_side": 240, "auroc": {"mutual_information": 0.51}}
    line = headline(dataclasses.replace(info, metrics=m))
    assert "; OOD AUROC (mutual information) " in line
    assert line.endswith(", with lengths matched 0.510 (240 a side).")
    m["ood_detection_length_matched"] = {"n_per_side": 3, "note": "hardly overlap"}
    assert headline(dataclasses.replace(info, metrics=m)).endswith(
        ", with lengths matched none: lengths hardly overlap (3 a side)."
    )
    m.pop("ood_detection_length_matched")  # evaluated before the figure: the card says no more
    assert headline(dataclasses.replace(info, metrics=m)).endswith(".")
    assert "lengths matched" not in headline(dataclasses.replace(info, metrics=m))
    m["ood_detection"] = {"mutual_information": {"auroc": 0.0}}  # a figure, not a missing one
    line = headline(dataclasses.replace(info, metrics=m))
    assert "; OOD AUROC (mutual information) 0.000." in line
