"""Issue 24, point 5 (the walk's defects): unit tests on the ui/viz helpers behind each fix."""

from __future__ import annotations

from uqcore.registry import list_checkpoints
from uqlab.paths import SHIPPED_CHECKPOINT_DIR


def test_picker_labels_fit_the_sidebar_and_stay_unique():
    """Defect: the sidebar cut every MiniLM name ("CoLA acceptability · MiniLM-L6 (a") and, at
    1024 px, "CoLA acceptability · Probabilistic"."""
    from ui.catalog import LABEL_CHARS, picker_labels

    infos = list_checkpoints(SHIPPED_CHECKPOINT_DIR)
    labels = picker_labels(infos)
    assert len(set(labels.values())) == len(labels), labels  # two STO-TRANS of IMDB told apart
    for name, label in labels.items():
        assert len(label) <= LABEL_CHARS, label
        task = name.split("-")[0].upper().replace("COLA", "CoLA")
        assert label.startswith(f"{task} · "), label
        assert ("minilm" in name) == ("MiniLM" in label), label
    assert labels["cola-minilm-hsto"] == "CoLA · MiniLM · H-STO-TRANS"
    assert labels["cola-probtrans"] == "CoLA · ProbTrans (EM)"
    assert labels["imdb-sto-t40"] == "IMDB · STO-TRANS (imdb-sto-t40)"
