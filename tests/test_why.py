"""ui.logic.why and uqlab.feature_map: occlusion is the sampler's, the edit view's alignment, the
dataset map's stored file and its checks."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from tests.app_fixtures import make_checkpoints
from ui.logic import compute, why
from uqcore.registry import load
from uqcore.sampling import sample
from uqcore.settings import SamplingSettings
from uqlab import feature_map

TEXT = "the film was dull and the movie was great"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("why"), families=("hsto", "mcdropout",
                                                                      "trans"))  # fmt: skip


@pytest.mark.parametrize("family", ["hsto", "mcdropout"])
def test_occlusion_equals_t_separate_calls(root, family):
    """Every word removed in turn, all in one batched call; each shortened text's mean p and
    MI are those of T single-sample calls on it alone (sample t = first_sample t)."""
    ck = load(f"cola-{family}", root)
    T, seed = 6, 5  # noqa: N806
    probs = compute.explore(ck, TEXT, T, seed, SamplingSettings()).probs  # [T, C]
    calls = []

    def sampler(texts):
        calls.append(len(texts))
        return compute.many_probs(ck, texts, T, seed, SamplingSettings())

    table = why.occlusion(TEXT, probs, sampler, 1, 0, len(TEXT.split()))
    assert calls == [len(TEXT.split())]  # one call for all the occlusions
    for i, variant in enumerate(why.occluded_texts(TEXT, 0, len(TEXT.split()))):
        enc = ck.vocab.encode(variant, ck.config.max_len)
        ids = torch.tensor([enc.ids])
        mask = torch.ones_like(ids, dtype=torch.bool)
        with torch.inference_mode():
            alone = torch.cat([sample(ck.model, ids, mask, 1, seed, first_sample=t).probs[:, 0]
                               for t in range(T)]).numpy()  # [T, C]  # fmt: skip
        row = table.iloc[i]
        assert row["word"] == TEXT.split()[i]
        assert abs(row["p without"] - alone[:, 1].mean()) < 1e-5
        assert abs(row["shift of p"] - (alone[:, 1].mean() - probs[:, 1].mean())) < 1e-5
        from uqcore.stats import mutual_information

        assert abs(row["MI without"] - mutual_information(alone[:, None])[0]) < 1e-5


def test_occlusion_of_a_single_word_text_leaves_nothing(root):
    ck = load("cola-trans", root)
    probs = compute.explore(ck, "film dull", 3, 0, SamplingSettings()).probs
    table = why.occlusion("film dull", probs, lambda texts: compute.many_probs(
        ck, texts, 3, 0, SamplingSettings()), 0, 0, 2)  # fmt: skip
    assert len(table) == 2 and table["se"].fillna(0).eq(0).all()  # deterministic: no spread


def test_occlusion_window_of_a_long_text():
    assert why.occlusion_window(10, 5) == (0, 10)
    assert why.occlusion_window(100, 30) == (30, 30 + why.MAX_OCCLUDED)
    assert why.occlusion_window(100, 99) == (100 - why.MAX_OCCLUDED, 100)


def test_salience_record_of_the_app(root):
    ck = load("cola-hsto", root)
    a = why.salience(ck, TEXT, 5, 0, SamplingSettings(), 1, "integrated_gradients", 16)
    assert a.prob.shape == (5, len(a.tokens)) and a.tokens[0] == "[CLS]"
    table = a.table()
    assert list(table["token"]) == TEXT.split()
    assert abs(table["top share"].sum() - 1) < 1e-9  # every sample has one top token
    np.testing.assert_allclose(table["mean"], a.prob[:, 1:].mean(0))
    explored = compute.explore(ck, TEXT, 5, 0, SamplingSettings())
    np.testing.assert_allclose(a.probs, explored.probs, atol=1e-5)  # the explorer's samples


def test_edit_alignment_and_attention_difference():
    a = ["[CLS]", "the", "cat", "slept"]
    b = ["[CLS]", "the", "old", "cat", "slept"]
    pairs = why.aligned(a, b)
    assert pairs == [(0, 0), (1, 1), (2, 3), (3, 4)]
    ma, mb = np.eye(4), np.full((5, 5), 0.2)
    diff = why.attention_difference(ma, mb, pairs)
    assert diff.shape == (4, 4)
    np.testing.assert_allclose(diff, 0.2 - np.eye(4))


def test_dataset_map_is_written_read_and_refused_when_stale(tmp_path):
    src = make_checkpoints(tmp_path / "src", families=("trans",))
    ck = load("cola-trans", src)
    path = feature_map.write(ck)
    got, why_not = feature_map.read(ck.path, "cola")
    assert why_not == "" and got[0].shape[1] == 2 and np.isfinite(got[0]).any()
    xy, explained = got
    assert 0 < sum(explained) <= 1 + 1e-9
    assert feature_map.read(ck.path, "imdb")[0] is None  # another task
    other = make_checkpoints(tmp_path / "other", families=("trans",))
    shutil.copy(path, other / "cola-trans" / feature_map.FILE)
    (other / "cola-trans" / "model.safetensors").write_bytes(b"x" * 10)  # weights changed
    assert "other weights" in feature_map.read(other / "cola-trans", "cola")[1]
    path.write_bytes(b"not a safetensors file")
    assert "does not parse" in feature_map.read(ck.path, "cola")[1]


def test_projection_keeps_unreadable_rows_out():
    feats = np.random.default_rng(0).normal(size=(20, 6)).astype(np.float32)
    feats[3] = np.nan
    xy, explained = feature_map.project(feats)
    assert np.isnan(xy[3]).all() and np.isfinite(np.delete(xy, 3, 0)).all()
    assert explained[0] >= explained[1] > 0


def test_every_shipped_map_is_trusted_and_one_is_recomputed_the_same():
    from uqcore.checkpoint import load_checkpoint
    from uqcore.registry import list_checkpoints
    from uqlab.paths import checkpoint_dir
    from uqlab.task_file import register_from_training
    from uqlab.tasks import TASKS

    infos = [i for i in list_checkpoints(checkpoint_dir()) if not i.error]
    assert len(infos) >= 27
    for info in infos:
        assert info.task in TASKS, info.name
        got, why_not = feature_map.read(info.path, info.task)
        assert got is not None, f"{info.name}: {why_not}"
    ck = load_checkpoint(checkpoint_dir() / "cola-hsto")
    register_from_training(ck.training)
    texts = [r[0] for r in feature_map.bundled_rows("cola")]
    with torch.inference_mode():
        xy, _ = feature_map.project(feature_map.features(ck, texts))
    stored, _ = feature_map.read(ck.path, "cola")[0]
    np.testing.assert_allclose(xy, stored, atol=1e-3, equal_nan=True)
