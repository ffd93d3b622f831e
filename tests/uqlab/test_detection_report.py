"""The error-detection and equal-length rows of Results and docs/results.md
(uqlab.detection_report), and the before / after table of the reading length
(uqlab.reading_length)."""

from __future__ import annotations

import json

from uqlab.detection_report import backwards_notes, detection_rows, equal_length, markdown
from uqlab.reading_length import headline
from uqlab.reading_length import markdown as before_after


def _metrics(mi_err=0.7, mi_ood=0.38, mean_mi=0.01) -> dict:
    scores = {
        k: {"auroc": v, "aurc": 0.1}
        for k, v in (("max_prob", 0.8), ("entropy", 0.8), ("mutual_information", mi_err))
    }
    bins = [
        {"tokens": [16, 32], "id": 40, "ood": 25, "auroc": 0.61},
        {"tokens": [32, 64], "id": 3, "ood": 2, "auroc": None},
        {"tokens": [64, 65], "id": 30, "ood": 300, "auroc": 0.44},
    ]
    return {
        "read_len": 64,
        "id": {"mean_mutual_information": mean_mi, "accuracy_mean": 0.9, "ece": 0.05},
        "ood": {"accuracy_mean": 0.7},
        "error_detection": {"id": {**scores, "variance": scores["entropy"]}},
        "ood_detection": {"mutual_information": {"auroc": mi_ood}, "max_prob": {"auroc": 0.6}},
        "ood_detection_by_length": {"min_per_side": 20, "mutual_information": bins},
    }


def test_rows_set_error_and_equal_length_detection_side_by_side():
    rows = detection_rows([("a-hsto", _metrics()), ("old", {"id": {}}), ("none", None)])
    assert [r["checkpoint"] for r in rows] == ["a-hsto"]  # unevaluated ones left out
    r = rows[0]
    assert r["tokens"] == 64 and r["error AUROC MI"] == "0.700"
    assert r["OOD AUROC MI"] == "0.380"
    assert r["OOD AUROC MI at equal length"] == "16–31: 0.610 · 64 (cut): 0.440"
    flat = detection_rows([("a-trans", _metrics(mi_err=0.5, mi_ood=0.5, mean_mi=0.0))])[0]
    assert flat["error AUROC MI"] == "— (no spread)" and flat["error AUROC 1−p"] == "0.800"


def test_a_backwards_auroc_gets_a_note_and_a_model_without_spread_none():
    notes = backwards_notes([("a-hsto", _metrics())])
    assert len(notes) == 1 and notes[0].startswith("a-hsto, MI on the out-of-domain texts")
    assert "0.380" in notes[0] and "backwards" in notes[0]
    assert backwards_notes([("t", _metrics(mi_err=0.3, mi_ood=0.3, mean_mi=0.0))]) == []
    lines = markdown([("a-hsto", _metrics())])
    assert lines[0].startswith("| checkpoint | tokens |") and "Ranking backwards" in lines[-3]


def test_no_bin_with_both_domains_is_said():
    m = _metrics()
    for b in m["ood_detection_by_length"]["mutual_information"]:
        b["auroc"] = None
    assert equal_length(m) == "no bin holds 20+ of both domains"
    assert equal_length({"read_len": 64}) == "—"


def test_the_reading_length_table_sets_the_record_beside_the_present_metrics(tmp_path):
    before = {**_metrics(), "read_len": None}
    record = tmp_path / "before.json"
    record.write_text(json.dumps({"rev": "x", "checkpoints": {"a-hsto": headline(before)}}))
    now = {**_metrics(), "ood_detection": {"mutual_information": {"auroc": 0.66}}}
    lines = before_after([("a-hsto", now), ("b", _metrics())], record)
    assert len(lines) == 3  # head, rule, the one recorded checkpoint
    assert lines[2].startswith("| a-hsto | 512 → 64 | 0.900 → 0.900 |")
    assert "0.380 → 0.660" in lines[2]
    assert before_after([], tmp_path / "none.json") == []
