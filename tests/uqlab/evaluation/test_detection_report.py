"""The error-detection and equal-length rows of Results and docs/results.md
(uqlab.evaluation.detection_report), and the before / after table of the reading length
(uqlab.evaluation.reading_length)."""

from __future__ import annotations

import json

import numpy as np

from uqcore.inference.detection import matched_ood_detection, paired_auroc_difference
from uqlab.evaluation.detection_report import (
    backwards_notes,
    detection_rows,
    equal_length,
    markdown,
    metric_notes,
)
from uqlab.evaluation.reading_length import headline
from uqlab.evaluation.reading_length import markdown as before_after


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
    assert len(notes) == 1 and notes[0].startswith("a-hsto on the out-of-domain texts: AUROC")
    assert "MI 0.380" in notes[0] and "this score ranks backwards" in notes[0]
    assert backwards_notes([("t", _metrics(mi_err=0.3, mi_ood=0.3, mean_mi=0.0))]) == []
    lines = markdown([("a-hsto", _metrics())])
    assert lines[0].startswith("| checkpoint | tokens |") and "Ranking backwards" in lines[-3]


def test_no_bin_with_both_domains_is_said():
    m = _metrics()
    for b in m["ood_detection_by_length"]["mutual_information"]:
        b["auroc"] = None
    assert equal_length(m) == "no bin holds 20+ of both domains"
    assert equal_length({"read_len": 64}) == "—"


def _sst2_vs_imdb() -> dict:
    """The figures issue 45 read on SST-2 against IMDB: Mahalanobis 0.287 and max p 0.254
    below 0.5 beside MI, no length bin with 20 texts of both sides, ECE 0.085 -> 0.106."""
    m = _metrics(mi_ood=0.41)
    m["ood_detection"] |= {"max_prob": {"auroc": 0.254}, "mahalanobis": {"auroc": 0.287}}
    m["ood_detection"]["energy"] = {"auroc": 0.62}
    m["ood_detection_by_length"]["mutual_information"] = [
        {"tokens": [16, 32], "id": 700, "ood": 0, "auroc": None},
        {"tokens": [32, 64], "id": 150, "ood": 12, "auroc": None},
        {"tokens": [64, 65], "id": 2, "ood": 488, "auroc": None},
    ]
    m["id"] |= {"ece": 0.085, "scaled": {"ece": 0.106}}
    m["temperature"] = {"value": 1.7, "fitted_on": "dev"}
    return m


def test_every_backwards_score_length_and_a_scaling_that_hurts_are_noted():
    notes = metric_notes(_sst2_vs_imdb())
    assert len(notes) == 3, notes
    assert notes[0].startswith("On the out-of-domain texts: AUROC MI 0.410, 1−p 0.254, ")
    assert "Mahalanobis 0.287" in notes[0] and "these scores rank backwards" in notes[0]
    assert "energy" not in notes[0]  # 0.62 ranks the right way
    assert notes[1].startswith("Length could not be controlled: no bin of tokens read holds 20+")
    assert "in-domain texts read 16–31 tokens, most out-of-domain 64 (cut)" in notes[1]
    assert notes[2].startswith("Temperature scaling (t = 1.70, fitted on dev) raises the ")
    assert "in-domain test ECE 0.085 → 0.106" in notes[2]
    lines = markdown([("sst2-hsto", _sst2_vs_imdb())])
    assert any(line.startswith("- sst2-hsto: Length could not be controlled") for line in lines)
    plain = metric_notes(_metrics())  # a bin with both domains, no temperature: MI alone
    assert len(plain) == 1 and plain[0].startswith("On the out-of-domain texts: AUROC MI 0.380, b")


def test_notes_of_a_metrics_json_that_is_junk_are_none_or_from_its_numbers_only():
    """An uploaded metrics.json may hold anything: its text is never shown, a wrong type is
    skipped, and a scaling that lowers ECE or a length bin with an AUROC says nothing."""
    assert metric_notes(None) == [] and metric_notes({}) == []
    junk = {
        "id": {"ece": "0.1", "scaled": {"ece": 0.5}, "mean_mutual_information": "x"},
        "ood_detection": {"mahalanobis": {"auroc": "0.1"}, "max_prob": [0.1]},
        "ood_detection_by_length": {"mutual_information": [{"tokens": "x", "auroc": None}]},
        "notes": ["<script>alert(1)</script>"],
    }
    assert metric_notes(junk) == [
        "Length could not be controlled: no bin of tokens read holds enough texts of both "
        "domains (most in-domain texts read ? tokens, most out-of-domain ?), so every OOD "
        "AUROC here may measure text length as much as domain."
    ]
    good = _metrics(mi_ood=0.6)
    good["id"] |= {"ece": 0.085, "scaled": {"ece": 0.04}}
    assert metric_notes(good) == []


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


def test_the_paired_verdict_and_the_length_matched_auroc_are_columns():
    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.3
    diff = paired_auroc_difference(y, y + rng.normal(0, 0.3, 200), y + rng.normal(0, 1, 200))
    m = _metrics()
    m["error_detection"]["id"]["versus_max_prob"] = {"mutual_information": diff.as_dict()}
    p = np.stack([np.full((3, 50), 0.8), np.full((3, 50), 0.2)], axis=-1)  # [T, N, 2]
    m["ood_detection_length_matched"] = matched_ood_detection(
        p, p, np.arange(50) % 30 + 1, np.arange(50) % 30 + 1, read_len=64
    )
    r = detection_rows([("a-hsto", m)])[0]
    low, high = diff.low, diff.high
    assert r["errors: MI − 1−p, 95 % CI"] == (
        f"{diff.difference:+.3f} [{low:+.3f}, {high:+.3f}] better".replace("-", "−")
    )
    assert r["OOD AUROC MI, lengths matched"] == "0.500 (50 a side)"
    m["ood_detection_length_matched"] = matched_ood_detection(
        p, p, np.full(50, 3), np.full(50, 40), read_len=64
    )
    r = detection_rows([("a-hsto", m)])[0]
    assert r["OOD AUROC 1−p, lengths matched"] == "none: lengths hardly overlap (0 a side)"
    old = detection_rows([("b-hsto", _metrics())])[0]  # evaluated before these figures
    assert old["errors: MI − 1−p, 95 % CI"] == "—" and old["OOD AUROC MI, lengths matched"] == "—"
    garbled = _metrics()
    garbled["error_detection"]["id"]["versus_max_prob"] = {
        "mutual_information": {"difference": "x"}
    }
    assert detection_rows([("c", garbled)])[0]["errors: MI − 1−p, 95 % CI"] == "—"


def test_the_texts_the_length_matched_figure_drew_are_named_and_junk_names_are_not():
    """Issue 47: where a task names out-of-domain texts cut to its own form (``set``), the cell
    and the length note say so; a name an uploaded metrics.json could carry (markup, too long,
    not a string) is not shown."""
    p = np.stack([np.full((3, 50), 0.8), np.full((3, 50), 0.2)], axis=-1)  # [T, N, 2]
    m = _sst2_vs_imdb()
    got = matched_ood_detection(p, p, np.arange(50) % 30 + 1, np.arange(50) % 30 + 1, read_len=64)
    m["ood_detection_length_matched"] = got | {"set": "IMDB review sentences"}
    r = detection_rows([("a-hsto", m)])[0]
    assert r["OOD AUROC 1−p, lengths matched"] == "0.500 (50 a side; IMDB review sentences)"
    note = next(n for n in metric_notes(m) if n.startswith("Length could not"))
    assert note.endswith("domain; the length-matched figure draws IMDB review sentences instead.")
    for junk in ("<script>x</script>", "a" * 41, ["IMDB"], "**bold**"):
        m["ood_detection_length_matched"] = got | {"set": junk}
        r = detection_rows([("a-hsto", m)])[0]
        assert r["OOD AUROC 1−p, lengths matched"] == "0.500 (50 a side)"
        assert all("draws" not in n for n in metric_notes(m))
    m["ood_detection_length_matched"] = "x"  # not an object: no name, no error
    assert any(n.endswith("text length as much as domain.") for n in metric_notes(m))
