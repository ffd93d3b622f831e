"""Issue 24, point 5 (the walk's defects): unit tests on the ui/viz helpers behind each fix."""

from __future__ import annotations

from uqcore.registry import list_checkpoints
from uqlab.paths import SHIPPED_CHECKPOINT_DIR


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
    assert labels["cola-probtrans"] == "CoLA · ProbTrans (EM)"
    assert labels["imdb-sto-t40"] == "IMDB · STO-TRANS (t40)"  # what tells it from imdb-sto-t1


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

    from ui.logic.compare import compare
    from ui.logic.compute import summary

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
    from uqlab.upload import UploadError, install

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


RECORD = {"checkpoint": "cola-hsto", "T": 5, "seed": 1, "tau2": 40.0,
          "text": "Jürgen said:\n“it’s fine” 🙂"}  # fmt: skip


def png_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """Every chunk of ``png`` as (type, data), each CRC checked."""
    import struct
    import zlib

    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    out, at = [], 8
    while at < len(png):
        size = struct.unpack(">I", png[at : at + 4])[0]
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        assert struct.unpack(">I", png[at + 8 + size : at + 12 + size])[0] == zlib.crc32(
            kind + data), kind  # fmt: skip
        out.append((kind, data))
        at += 12 + size
    return out


def test_a_csv_carries_its_settings_in_comment_lines_before_its_header():
    """Defect: exported CSVs carried their settings in the file name only."""
    import io

    import pandas as pd

    from ui.logic.exports import csv_text, read_header

    text = csv_text(pd.DataFrame({"sample": [0, 1], "p_acceptable": [0.25, 0.5]}), RECORD)
    assert text.startswith("# checkpoint: cola-hsto\n# T: 5\n# seed: 1\n# tau2: 40\n")
    assert read_header(text) == {**{k: str(v) for k, v in RECORD.items()}, "tau2": "40"}
    quoted = {"text": '"Quoted," she said.', "other": " edge "}
    assert read_header(csv_text(pd.DataFrame({"a": [1]}), quoted)) == quoted
    skip = int(text.split("skiprows=")[1].split(")")[0])
    back = pd.read_csv(io.StringIO(text), skiprows=skip)
    assert list(back.columns) == ["sample", "p_acceptable"] and len(back) == 2


def test_svg_and_png_carry_their_settings_inside():
    """Defect: exported SVG/PNG carried their settings in the file name only."""
    import json
    import struct
    import xml.etree.ElementTree as ET
    import zlib

    from ui.logic.exports import SVG_NS, png_text, png_with, svg_with

    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>'
    root = ET.fromstring(svg_with(svg, RECORD, "Attention, layer 1"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text == "Attention, layer 1"
    assert "checkpoint = cola-hsto" in root.find(f"{ns}desc").text
    settings = root.find(f"{ns}metadata/{{{SVG_NS}}}settings")
    assert json.loads(settings.text) == RECORD
    assert root.find(f"{ns}rect") is not None  # the drawing is still there

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I",
                                                                      zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)  # 1x1 grey
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
           + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))  # fmt: skip
    stamped = png_with(png, RECORD, "Attention, layer 1")
    kinds = [k for k, _ in png_chunks(stamped)]
    assert kinds[0] == b"IHDR" and kinds[-2:] == [b"IDAT", b"IEND"]
    assert b"tEXt" in kinds and b"iTXt" in kinds  # the emoji is beyond Latin-1
    found = png_text(stamped)
    assert found["checkpoint"] == "cola-hsto" and found["T"] == "5" and found["seed"] == "1"
    assert found["text"] == RECORD["text"] and json.loads(found["settings"]) == RECORD


def test_the_explorers_figure_files_carry_the_settings(tmp_path):
    """The explorer's Render button end to end (kaleido and Chromium on this machine)."""
    import xml.etree.ElementTree as ET

    import pytest

    from ui.logic.exports import figure_file, png_text
    from viz.figures import bar_figure

    fig = bar_figure([0.2, 0.8], ["centroid 0", "centroid 1"], "Centroid usage", "weight")
    try:
        svg = figure_file(fig, "svg", RECORD)
    except Exception as exc:  # noqa: BLE001 - no Chromium for kaleido here
        pytest.skip(f"static export unavailable: {type(exc).__name__}: {exc}"[:200])
    root = ET.fromstring(svg)
    assert root.find("{http://www.w3.org/2000/svg}title").text == "Centroid usage"
    png = figure_file(fig, "png", RECORD)
    assert png_text(png)["text"] == RECORD["text"]
    assert [k for k, _ in png_chunks(png)][-1] == b"IEND"
