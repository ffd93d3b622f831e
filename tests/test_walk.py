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


def test_the_sweeps_panel_titles_are_whole_and_fit_half_a_phone():
    """Defect: the sweep's right panel title read "mean mutual informatior" (cut at the edge)."""
    import pandas as pd

    from viz.figures import sweep_figure
    from viz.titles import PANEL_TITLE_CHARS

    table = pd.DataFrame({"tau": [1.0, 10.0] * 2, "accuracy": [0.7, 0.6, 0.6, 0.5],
                          "mi": [0.1, 0.0, 0.2, 0.1],
                          "domain": ["in-domain"] * 2 + ["out-of-domain"] * 2})  # fmt: skip
    fig = sweep_figure(table, "tau2")
    texts = [a.text for a in fig.layout.annotations]
    assert [t.replace("<br>", " ") for t in texts] == ["accuracy", "mean mutual information"]
    font = fig.layout.annotations[1].font.size
    for line in texts[1].split("<br>"):  # half a phone's plot is about 150 px wide
        assert len(line) <= PANEL_TITLE_CHARS and 0.6 * font * len(line) <= 150, line
    title_lines = fig.layout.title.text.count("<br>") + 1  # the title sits above both lines
    assert fig.layout.margin.t >= 20 * title_lines + 20 * len(texts[1].split("<br>")) + 20


def test_compare_without_a_gold_label_fills_the_same_columns_for_every_checkpoint():
    """Defect: with an unknown gold label one checkpoint filled p(unacceptable), another
    p(acceptable), and each row printed "None" in the other's column."""
    from types import SimpleNamespace

    import numpy as np

    from ui.compare import compare
    from ui.compute import summary

    names = ("unacceptable", "acceptable")
    probs = {"a": np.array([[0.9, 0.1], [0.7, 0.3]]), "b": np.array([[0.2, 0.8], [0.4, 0.6]])}
    for label in (None, 1):
        results = {n: SimpleNamespace(probs=p, summary=summary(p, label)) for n, p in probs.items()}
        table = compare(results, {"a": "hsto", "b": "trans"}, names, label).table
        assert not table.isna().any().any(), table
        assert "None" not in table.to_csv() and "nan" not in table.to_csv()
        if label is None:
            assert list(table["predicts"]) == ["unacceptable", "acceptable"]
            assert list(table["p(predicted) mean ± var"]) == ["0.800 ± 0.01", "0.700 ± 0.01"]
            assert list(table["samples agreeing"]) == ["2/2", "2/2"]
        else:
            assert list(table["correct / T"]) == ["0/2", "2/2"]


def test_upload_errors_never_name_a_folder_of_the_server(tmp_path):
    """Defect: a bad upload's message named the server's temporary folder
    (".../uq-upload-XXXX/.staging-upload-...")."""
    import json

    import pytest

    from tests.app_fixtures import make_checkpoints
    from ui.upload import UploadError, install

    source = make_checkpoints(tmp_path / "src", families=("hsto",)) / "cola-hsto"
    good = {f.name: f.read_bytes() for f in source.iterdir() if f.is_file()}
    config = json.loads(good["config.json"])
    wider = {**config, "model": {**config["model"], "d_model": 32}}
    bad = [{**good, "config.json": b"{not json"},
           {**good, "model.safetensors": good["model.safetensors"][:200]},
           {**good, "config.json": json.dumps(wider).encode()},
           {**good, "vocab.json": b"[1, 2]"}]  # fmt: skip
    folder = tmp_path / "uq-upload-abcd1234"
    blocked = tmp_path / "uq-upload-file"
    blocked.write_text("a file where the upload folder should be")  # writing fails: OSError
    cases = [(files, folder) for files in bad] + [(good, blocked)]
    for files, where in cases:
        with pytest.raises(UploadError) as caught:
            install(files, "mine", where)
        message = str(caught.value)
        for part in ("/tmp", "uq-upload", ".staging", str(tmp_path)):
            assert part not in message, message
