"""The evaluation's journal: a stopped run resumes from its finished batches to the numbers of
an uninterrupted run, computing only what is missing; nothing under another key is read."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import uqlab.evaluate as evaluate_mod
import uqlab.evaluation.journal as journal_mod
from tests.helpers import evaluate_tiny, tiny_siblings
from uqcore.checkpoint import load_checkpoint
from uqlab import feature_map
from uqlab.evaluate import main as evaluate_main
from uqlab.evaluation.journal import Journal, model_key


class Stop(RuntimeError):
    """What the counting stand-in raises to stop a run partway (as a kill would)."""


def _counting(monkeypatch, stop_after: int | None = None, kinds: list | None = None) -> list[int]:
    """Count the batches computed from now on (each samples / features call of the journal:
    its rows), raising :class:`Stop` once ``stop_after`` have finished; ``kinds``, when given,
    receives "samples" or "features" per batch."""
    calls: list[int] = []
    real_samples, real_features = journal_mod.sample_rows, journal_mod.features_ids

    def wrap(real, kind: str):
        def counted(*a, **kw):
            if stop_after is not None and len(calls) >= stop_after:
                raise Stop("stopped")
            calls.append(len(a[2]) if kind == "samples" else len(kw["batches"][0]))
            if kinds is not None:
                kinds.append(kind)
            return real(*a, **kw)

        return counted

    monkeypatch.setattr(journal_mod, "sample_rows", wrap(real_samples, "samples"))
    monkeypatch.setattr(journal_mod, "features_ids", wrap(real_features, "features"))
    return calls


@pytest.mark.parametrize("family", ["hsto", "trans"])
def test_a_stopped_journaled_evaluation_resumes_to_the_uninterrupted_numbers(
    tmp_path, data_dir, monkeypatch, family
):
    """H-STO with its baseline's samples journaled too; the plain model with the features its
    sampling passes read kept beside its samples."""
    root = tmp_path / "cks"
    tiny_siblings(root, data_dir)  # cola-hsto and its baseline cola-trans
    hsto = root / f"cola-{family}"
    plain = evaluate_tiny(hsto, data_dir)  # no journal
    total = _counting(monkeypatch)
    evaluate_tiny(hsto, data_dir)
    n = len(total)  # every batch of samples, features and the baseline's samples
    assert n >= 6, n
    monkeypatch.undo()

    folder = tmp_path / "journal"
    _counting(monkeypatch, stop_after=n // 2)
    with pytest.raises(Stop):
        evaluate_tiny(hsto, data_dir, "--journal", str(folder))
    monkeypatch.undo()
    assert Journal(folder, "any").done() == n // 2  # each finished batch kept

    resumed = _counting(monkeypatch)
    assert evaluate_tiny(hsto, data_dir, "--journal", str(folder)) == plain
    assert len(resumed) == n - n // 2  # only the missing batches were computed
    resumed.clear()
    assert evaluate_tiny(hsto, data_dir, "--journal", str(folder)) == plain
    assert resumed == []  # a finished journal computes nothing
    again = ["--ckpt", str(hsto), "--comparison-only", "--data-dir", str(data_dir), "--quiet"]
    assert evaluate_main([*again, "--journal", str(folder)]) == 0
    assert resumed == []  # the comparison block alone reads the evaluation's batches
    assert json.loads((hsto / "metrics.json").read_text()) == plain
    # another seed is another key: computed afresh, not read from the files of seed 0
    other = evaluate_tiny(hsto, data_dir, "--journal", str(folder), "--seed", "1")
    assert other["id"] != plain["id"] and len(resumed) > 0
    assert json.loads((hsto / "metrics.json").read_text()) == other


@pytest.mark.parametrize("family", ["trans", "hsto"])
def test_the_distance_features_come_with_the_samples(tmp_path, data_dir, monkeypatch, family):
    """The sampling calls give the features of a pass without noise too (a plain model's one
    pass; H-STO's layers from the noise up once more), so a whole-set evaluation does not read
    its 25,500 IMDB test and CR texts a second time (~2.7 h of a SmolLM2 checkpoint here): only
    the training texts get a features pass of their own, and every figure is what two passes
    give, the distance baseline's to the last bits that other batch shapes move."""
    root = tmp_path / "cks"
    plain = root / f"cola-{family}"
    tiny_siblings(root, data_dir, families=(family,))
    kinds: list[str] = []
    rows = _counting(monkeypatch, kinds=kinds)
    one = evaluate_tiny(plain, data_dir)
    monkeypatch.undo()
    fit = int(one["ood_detection"]["mahalanobis"]["fitted_on"].split()[0])
    mapped = int(np.isfinite(feature_map.read(plain, "cola")[0][0]).all(1).sum())  # the map's
    assert sum(n for n, k in zip(rows, kinds, strict=True) if k == "features") == fit + mapped
    real = evaluate_mod._sample_splits  # the old way: the features of both domains read again
    monkeypatch.setattr(evaluate_mod, "_sample_splits", lambda *a: real(*a[:-1], False))
    kinds.clear()
    rows = _counting(monkeypatch, kinds=kinds)
    two = evaluate_tiny(plain, data_dir)
    sizes = two["sizes"]["id"] + two["sizes"]["ood"]
    assert sum(n for n, k in zip(rows, kinds, strict=True) if k == "features") == (
        fit + sizes + mapped
    )
    distance = (one["ood_detection"].pop("mahalanobis"), two["ood_detection"].pop("mahalanobis"))
    assert one == two  # every other figure: the same samples
    for key in ("auroc", "aupr", "fpr_at_95_tpr"):
        assert distance[0][key] == pytest.approx(distance[1][key], abs=1e-3)


def test_the_comparison_reads_its_plain_baselines_own_evaluation(tmp_path, data_dir, monkeypatch):
    """A plain baseline's one pass is sampled at the evaluation's T, so the comparison block of
    cola-hsto reads the batches cola-trans's own evaluation left in the journal (for
    imdb-smollm2-hsto: the 25,500 IMDB test and CR texts of imdb-smollm2-trans, ~2.7 h here)."""
    root = tmp_path / "cks"
    tiny_siblings(root, data_dir)
    hsto, plain = root / "cola-hsto", root / "cola-trans"
    fresh = evaluate_tiny(hsto, data_dir)["comparison"]
    assert fresh["baseline"] == "cola-trans" and fresh["baseline_samples"] == 1
    folder = tmp_path / "journal"
    evaluate_tiny(plain, data_dir, "--journal", str(folder))
    families: list[str] = []
    real = journal_mod.sample_rows

    def counted(model, *a, **kw):
        families.append(model.cfg.family)
        return real(model, *a, **kw)

    monkeypatch.setattr(journal_mod, "sample_rows", counted)
    got = evaluate_tiny(hsto, data_dir, "--journal", str(folder))["comparison"]
    assert "hsto" in families and "trans" not in families  # no baseline batch computed
    assert got == fresh


def test_a_stopped_evaluations_map_is_not_read_again(tmp_path, data_dir, monkeypatch):
    """The map of the bundled examples is the first thing an evaluation reads (~6 min of a
    SmolLM2 run here): through the journal, a rerun reads its finished batches instead, and the
    file is the one a run without a journal writes."""
    from tests.app_fixtures import make_checkpoints
    from uqcore.registry import load

    ck = load("cola-trans", make_checkpoints(tmp_path / "src", families=("trans",)))
    with torch.inference_mode():
        plain = feature_map.features(ck, [r[0] for r in feature_map.bundled_rows("cola")])
    folder = tmp_path / "journal"
    first = _counting(monkeypatch, stop_after=2)
    with pytest.raises(Stop):
        feature_map.write(ck, journal=Journal.open(folder, ck.model))
    monkeypatch.undo()
    assert first == [64, 64] and Journal(folder, "any").done() == 2
    rest = _counting(monkeypatch)
    path = feature_map.write(ck, journal=Journal.open(folder, ck.model))
    n = int(np.isfinite(plain).all(1).sum())
    assert sum(rest) == n - 128  # only the batches the stopped run had not finished
    rest.clear()
    assert feature_map.write(ck, journal=Journal.open(folder, ck.model)) == path
    assert rest == []
    xy, _ = feature_map.read(ck.path, "cola")[0]
    np.testing.assert_array_equal(xy, feature_map.project(plain)[0].astype(np.float16))


def test_the_key_covers_the_weights_and_every_setting(tmp_path, checkpoint):
    model = load_checkpoint(checkpoint).model
    before = model_key(model)
    rows = [[2, 5, 6, 3], [2, 7, 3]]
    part = Journal.open(tmp_path, model).part("samples", rows, T=4, seed=0)
    with torch.no_grad():
        p = next(model.parameters())
        p.view(-1)[0] += 1e-6  # one weight, one step
    assert model_key(model) != before
    changed = Journal.open(tmp_path, model).part("samples", rows, T=4, seed=0)
    assert changed.key != part.key
    keys = {
        part.key,
        Journal(tmp_path, before).part("samples", rows, T=5, seed=0).key,
        Journal(tmp_path, before).part("samples", rows, T=4, seed=1).key,
        Journal(tmp_path, before).part("samples", [[2, 5, 6, 3], [2, 8, 3]], T=4, seed=0).key,
        Journal(tmp_path, before).part("features", rows, T=4, seed=0).key,
    }
    assert len(keys) == 5
    assert Journal(tmp_path, before).part("samples", rows, T=4, seed=0).key == part.key


def test_a_batch_file_of_other_rows_is_not_read(tmp_path):
    part = Journal(tmp_path, "k").part("samples", [[2, 3]], T=1, seed=0)
    part.save(0, [0, 1], {"probs": torch.ones(1, 2, 2)})
    assert part.load(0, [0, 1])["probs"].shape == (1, 2, 2)
    assert part.load(0, [1, 0]) is None  # another batch plan (device, row cap): recomputed
    assert part.load(1, [0, 1]) is None  # not written
    assert not list(tmp_path.glob("*.tmp"))  # written atomically: no temp file left


def test_each_computed_batch_hands_the_freed_heap_back(tmp_path, monkeypatch):
    """A whole-set evaluation grew to 9 GB of RSS, 7 GB of it heap glibc kept after the batches
    freed it: each computed batch is followed by a malloc_trim (a journal's batch is not)."""
    released: list[int] = []
    monkeypatch.setattr(journal_mod, "release_memory", lambda: released.append(1))
    part = Journal(tmp_path, "k").part("samples", [[2, 3]] * 3, T=1, seed=0)
    plan = [[0], [1], [2]]
    part.save(1, [1], {"x": torch.zeros(1)})  # batch 1 is in the journal
    got: dict[int, float] = {}

    def fill(rows, tensors):
        got[rows[0]] = float(tensors["x"][0])

    journal_mod.run_batches(part, plan, [0, 1, 2], lambda rows: {"x": torch.ones(1)}, fill)
    assert got == {0: 1.0, 1: 0.0, 2: 1.0} and len(released) == 2


def test_the_listing_names_each_checkpoint_and_a_drop_keeps_the_others(
    tmp_path, data_dir, monkeypatch, capsys
):
    """cola-hsto's journaled evaluation holds its own batches and its baseline cola-trans's:
    the index names both; dropping cola-hsto deletes only its files, and a rerun then computes
    only cola-hsto's batches (the baseline's are read)."""
    root = tmp_path / "cks"
    tiny_siblings(root, data_dir)
    folder = tmp_path / "journal"
    evaluate_tiny(root / "cola-hsto", data_dir, "--journal", str(folder))
    held = journal_mod.holdings(folder)
    assert sorted(held) == ["cola-hsto", "cola-trans"]
    trans = {p: p.read_bytes() for p in held["cola-trans"]}
    assert journal_mod.main([str(folder), "--drop", "cola-hsto"]) == 0
    out = capsys.readouterr().out
    assert f"dropped cola-hsto: {len(held['cola-hsto'])} file(s)" in out
    assert f"cola-trans: {len(trans)} file(s)" in out
    left = journal_mod.holdings(folder)
    assert list(left) == ["cola-trans"]
    assert {p: p.read_bytes() for p in left["cola-trans"]} == trans
    kinds: list[str] = []
    computed = _counting(monkeypatch, kinds=kinds)
    evaluate_tiny(root / "cola-hsto", data_dir, "--journal", str(folder))
    assert computed and sorted(journal_mod.holdings(folder)) == ["cola-hsto", "cola-trans"]
    assert {p: p.read_bytes() for p in journal_mod.holdings(folder)["cola-trans"]} == trans


def test_files_the_index_does_not_name_are_listed_and_dropped_as_unnamed(tmp_path, capsys):
    """A folder written before the index: its files are ``unnamed``; a name it does not hold
    is refused with what it holds, and a missing folder is named as such."""
    part = journal_mod.Part(tmp_path, "samples", "0" * 24)
    part.save(0, [0, 1], {"probs": torch.zeros(2, 2, 2)})
    part.save(1, [2], {"probs": torch.zeros(2, 1, 2)})
    assert {k: len(v) for k, v in journal_mod.holdings(tmp_path).items()} == {"unnamed": 2}
    with pytest.raises(SystemExit) as exc:
        journal_mod.main([str(tmp_path), "--drop", "cola-hsto"])
    assert exc.value.code == 2
    assert "holds no files of 'cola-hsto'; it holds: unnamed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        journal_mod.main([str(tmp_path / "nowhere")])
    assert "is not a folder" in capsys.readouterr().err
    assert journal_mod.main([str(tmp_path), "--drop", "unnamed"]) == 0
    assert journal_mod.holdings(tmp_path) == {}
