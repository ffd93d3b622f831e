"""uqlab.evaluation.stored: every shipped checkpoint's stored samples equal a live run on a seeded
sample of rows, and a file that is missing, truncated, stale or from other weights is never
trusted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers import copy_shipped
from uqcore.registry import list_checkpoints, load
from uqcore.settings import SamplingSettings, resolve
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.catalog.presets import preset_rows
from uqlab.evaluation import stored
from uqlab.workbench import compute

SHIPPED = [i.name for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR) if not i.error]
ROWS = 3  # rows recomputed per checkpoint (seeded by its name)


def _rows_for(name: str, n: int) -> list[int]:
    rng = np.random.default_rng(sum(name.encode()))
    return sorted(rng.choice(n, size=ROWS, replace=False).tolist())


@pytest.mark.parametrize("name", SHIPPED)
def test_stored_rows_equal_a_live_run(name):
    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    task = ck.training["task"]
    got, why = stored.read(ck.path, task, resolve(ck.config))
    assert got is not None, f"{name}: {why}"
    assert got.serves(stored.T_STORED, stored.SEED_STORED, resolve(ck.config)) is None
    rows = stored.bundled_rows(task)
    texts = tuple(rows[i][0] for i in _rows_for(name, len(rows)))
    live = compute.many_probs(ck, texts, stored.T_STORED, stored.SEED_STORED, SamplingSettings())
    for text, fresh in zip(texts, live, strict=True):
        logits = got.get(text, stored.T_STORED)
        assert logits is not None and not isinstance(fresh, str)
        kept = compute.from_logits(logits)
        np.testing.assert_allclose(kept.probs, fresh.probs, atol=stored.TOLERANCE, rtol=0)
        # float16 rounding of each logit: half a unit in the last place, 2^-11 relative
        np.testing.assert_allclose(kept.logits, fresh.logits, rtol=2**-10, atol=1e-3)


@pytest.mark.parametrize("name", SHIPPED)
def test_stored_example_sentences_equal_a_live_run_at_the_explorers_T(name):
    """The example sentences (what the explorer, Compare and Table 3 open on) are stored at
    T_EXAMPLES samples: two seeded ones equal a live run."""
    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    task = ck.training["task"]
    got, why = stored.read(ck.path, task, resolve(ck.config))
    assert got is not None, f"{name}: {why}"
    presets = [r[0] for r in preset_rows(task)]
    rng = np.random.default_rng(sum(name.encode()))
    texts = tuple(presets[i] for i in sorted(rng.choice(len(presets), 2, replace=False)))
    live = compute.many_probs(ck, texts, stored.T_EXAMPLES, stored.SEED_STORED, SamplingSettings())
    for text, fresh in zip(texts, live, strict=True):
        logits = got.get(text, stored.T_EXAMPLES)
        assert logits is not None and not isinstance(fresh, str)
        kept = compute.from_logits(logits)
        np.testing.assert_allclose(kept.probs, fresh.probs, atol=stored.TOLERANCE, rtol=0)


def test_the_examples_are_stored_at_the_sidebars_default_T():
    from ui.logic.state import DEFAULT_T

    assert stored.T_EXAMPLES == DEFAULT_T


def test_stored_files_fit_their_share_of_the_assets():
    total = sum((SHIPPED_CHECKPOINT_DIR / n / stored.FILE).stat().st_size for n in SHIPPED)
    assert total < 3 * 2**20, f"stored samples take {total / 2**20:.2f} MiB"


@pytest.fixture()
def copy(tmp_path):
    """A copy of the shipped cola-trans folder (its own weights) with its stored samples."""
    return copy_shipped(["cola-trans"], tmp_path) / "cola-trans"


def _read(path):
    ck = load(path.name, path.parent)
    return stored.read(path, "cola", resolve(ck.config))


def test_a_good_copy_is_read(copy):
    got, why = _read(copy)
    assert got is not None and why == ""


def test_a_missing_file_is_not_trusted(copy):
    (copy / stored.FILE).unlink()
    got, why = _read(copy)
    assert got is None and "no stored results" in why
    assert "python -m" not in why  # shown to visitors, who run no command of the server


def test_a_truncated_file_is_not_trusted(copy):
    data = (copy / stored.FILE).read_bytes()
    (copy / stored.FILE).write_bytes(data[: len(data) // 2])
    got, why = _read(copy)
    assert got is None and "does not parse" in why


def test_a_file_of_another_subset_is_not_trusted(copy, monkeypatch):
    real = stored.subset_hashes("cola")
    changed = {k: "0" * 64 for k in real}
    monkeypatch.setattr(stored, "subset_hashes", lambda task: changed)
    got, why = _read(copy)
    assert got is None and "bundled examples changed" in why


def test_a_file_from_other_weights_is_not_trusted(copy):
    doc = json.loads((copy / "config.json").read_text())
    doc["model"]["inference"] = {**doc["model"].get("inference", {}), "tau": 3.0}
    (copy / "config.json").write_text(json.dumps(doc))
    got, why = _read(copy)
    assert got is None and "other weights" in why


def test_a_request_off_the_stored_settings_is_recomputed(copy):
    got, _ = _read(copy)
    ck = load(copy.name, copy.parent)
    own = resolve(ck.config)
    assert got.serves(stored.T_STORED, 0, own) is None
    assert got.serves(stored.T_STORED + 1, 0, own) == f"stored for T up to {stored.T_STORED}"
    assert got.serves(5, 1, own) == "stored for seed 0"
    hotter = resolve(ck.config, SamplingSettings(tau=2.0))
    assert got.serves(5, 0, hotter) == "the settings differ from the checkpoint's own"
    text = stored.bundled_rows("cola")[0][0]
    assert got.get(text, 5).shape == (5, 2)
    assert got.get("a sentence that is not bundled", 5) is None

    example = preset_rows("cola")[0][0]
    assert got.get(example, stored.T_EXAMPLES).shape == (stored.T_EXAMPLES, 2)  # examples: T <= 50
    assert got.get(example, stored.T_EXAMPLES + 1) is None
    assert got.get(text, stored.T_EXAMPLES) is None  # bundled rows: T <= 10 only


def test_a_file_whose_example_sentences_changed_is_not_trusted(copy, monkeypatch):
    monkeypatch.setattr(stored, "examples_hash", lambda task: "0" * 64)
    got, why = _read(copy)
    assert got is None and "example sentences changed" in why


def test_a_file_of_format_1_serves_its_bundled_rows_only(copy):
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    with safe_open(str(copy / stored.FILE), framework="np") as fh:
        meta = dict(fh.metadata())
    tensors = load_file(str(copy / stored.FILE))
    meta["format"] = "1"
    del meta["examples"], meta["examples_T"]
    save_file({"logits": tensors["logits"]}, str(copy / stored.FILE), metadata=meta)
    got, why = _read(copy)
    assert got is not None and why == "" and got.examples is None
    assert got.get(stored.bundled_rows("cola")[0][0], 5).shape == (5, 2)
    assert got.get(preset_rows("cola")[0][0], 5) is None


def test_logits_too_large_for_float16_are_stored_in_float32():
    """A label-word head reads a language model's logits (~20): in float16 they moved p by
    0.003, over the tolerance; a trained head's small logits stay float16."""
    import numpy as np

    small = np.array([[[0.3, -0.8]], [[1.7, 0.2]]], dtype=np.float32)  # [N, T, C]
    large = np.array([[[21.3, 21.1]], [[19.87, 20.05]]], dtype=np.float32)
    assert stored.storage_dtype(small) is np.float16
    assert stored.storage_dtype(large) is np.float32
