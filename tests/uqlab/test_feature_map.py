"""The dataset map's stored file (uqlab.feature_map): written, read, refused when stale."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import torch

from tests.app_fixtures import make_checkpoints
from uqcore.registry import load
from uqlab import feature_map


def test_dataset_map_is_written_read_and_refused_when_stale(tmp_path):
    src = make_checkpoints(tmp_path / "src", families=("trans",))
    ck = load("cola-trans", src)
    told: list[float] = []
    path = feature_map.write(ck, bar=told.append)  # the evaluation's map bar reads these
    assert told and told == sorted(told) and told[-1] == 1.0
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


def test_identical_features_project_to_zeros_not_nan():
    """A model whose pooled features do not depend on the text (seen on a tiny imported one)
    has no variance to explain: the map is the origin and its share 0, where scikit-learn's
    ratio is 0/0 and the page printed "nan% of the variance"."""
    feats = np.tile(np.arange(6, dtype=np.float32), (20, 1))
    feats[5] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the RuntimeWarning of 0/0 would fail here
        xy, explained = feature_map.project(feats)
    assert explained == [0.0, 0.0]
    assert np.isnan(xy[5]).all() and (np.delete(xy, 5, 0) == 0).all()


def test_every_shipped_map_is_trusted_and_one_is_recomputed_the_same():
    from uqcore.checkpoint import load_checkpoint
    from uqcore.registry import list_checkpoints
    from uqlab.catalog.paths import checkpoint_dir
    from uqlab.catalog.task_file import register_from_training
    from uqlab.catalog.tasks import TASKS

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
    # stored in float16: within its resolution (2^-11 relative) of what this machine computes
    np.testing.assert_allclose(xy, stored, rtol=1e-3, atol=1e-3, equal_nan=True)


def test_coordinates_past_float16s_range_are_kept_in_float32():
    """A visitor's model with huge features must not plot as infinities."""
    from safetensors.numpy import load

    small = np.array([[1.5, -2.0], [np.nan, np.nan]], dtype=np.float32)
    huge = np.array([[1e6, 3.0], [np.nan, np.nan]], dtype=np.float32)
    assert load(feature_map._encoded(small, {}))["xy"].dtype == np.float16
    back = load(feature_map._encoded(huge, {}))["xy"]
    assert back.dtype == np.float32 and back[0, 0] == 1e6
