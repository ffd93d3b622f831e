"""The dataset pages read a checkpoint's stored samples at its defaults and recompute otherwise,
saying which in one line; a broken stored file is never trusted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import make_checkpoints
from uqcore.registry import load
from uqlab.evaluation import stored

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def stored_dir(tmp_path_factory) -> Path:
    """Tiny cola-hsto and cola-trans checkpoints with stored samples of the bundled examples."""
    root = make_checkpoints(tmp_path_factory.mktemp("stored"), families=("hsto", "trans"))
    for name in ("cola-hsto", "cola-trans"):
        stored.write(load(name, root))
    return root


@pytest.fixture(autouse=True)
def _point_at(stored_dir, monkeypatch):
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(stored_dir))


def _errors(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in {"ckpt": "cola-hsto", **params}.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("app_pages/errors.py").run()
    assert not at.exception, at.exception
    return at


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_error_analysis_opens_from_stored_samples_without_a_click():
    at = _errors()
    assert "Read from the stored samples" in _captions(at)
    table = at.dataframe[0].value
    assert len(table) > 2000  # every bundled CoLA example, at once
    # fewer samples are the stored ones' first T: still read
    at.number_input(key="err_T").set_value(5).run()
    assert "Read from the stored samples" in _captions(at)


def test_a_changed_knob_recomputes_and_says_why():
    at = _errors(seed="3")
    (info,) = [i.value for i in at.info]
    assert "Press Compute" in info and "Recomputed (stored for seed 0" in info


def test_stored_and_live_rows_agree(stored_dir):
    from uqcore.settings import SamplingSettings, resolve
    from uqlab.workbench import compute, dataset

    ck = load("cola-hsto", stored_dir)
    got, _ = stored.read(ck.path, "cola", resolve(ck.config))
    rows = dataset.pick("cola", 20, seed=1)
    live = compute.many_probs(ck, tuple(r[0] for r in rows), 10, 0, SamplingSettings())
    for r, fresh in zip(rows, live, strict=True):
        kept = compute.from_logits(got.get(r[0], 10))
        np.testing.assert_allclose(kept.probs, fresh.probs, atol=stored.TOLERANCE, rtol=0)


def test_a_truncated_stored_file_is_recomputed_with_its_reason(stored_dir, tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "ck"
    shutil.copytree(stored_dir, root)
    data = (root / "cola-hsto" / stored.FILE).read_bytes()
    (root / "cola-hsto" / stored.FILE).write_bytes(data[:100])
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = _errors()
    assert "Recomputed: the stored results file does not parse" in at.info[0].value
    at.button(key="err_go").click().run()
    assert not at.exception and len(at.dataframe[0].value) > 2000


def test_stories_come_from_stored_samples_at_once_without_a_model(stored_dir, tmp_path):
    """A checkpoint whose stored samples hold its bundled examples tells its three stories on a
    first view with no sampling (no model loaded); without stored samples nothing is sampled
    unless asked for, and then only a small sample."""
    from ui import cached
    from ui.logic import landing

    cached.models().clear()
    cached._stories().clear()
    tales = cached.stories("cola-hsto", str(stored_dir), "cola")
    # a tiny net may be sure of nothing: then its surest sentence is told as such (SURE_P rule,
    # tested in tests/app/logic/test_landing.py)
    assert tales[0].title in ("Sure of it", "Its surest")
    assert [t.title for t in tales][1:] == ["Unsure", "Out of domain"]
    assert not cached.models().keys()  # read from the file: no model was loaded
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["ckpt"] = "cola-hsto"
    at.run()  # a bare link on this checkpoint: the landing
    assert not at.exception, at.exception
    assert len([b for b in at.button if b.key and b.key.startswith("landing_story")]) == 3
    assert not [b for b in at.button if b.key == "landing_find"]

    bare = make_checkpoints(tmp_path, prefix="bare", families=("trans",))  # no stored samples
    sampled: list[int] = []
    probe = cached._many

    def counting(name, folder, version, texts, *args, **kwargs):
        sampled.append(len(texts))
        return probe(name, folder, version, texts, *args, **kwargs)

    try:
        cached._many = counting
        assert cached.stories("bare-trans", str(bare), "cola") is None and not sampled
        rows = []
        found = cached.stories("bare-trans", str(bare), "cola", live=True, on_rows=rows.append)
    finally:
        cached._many = probe
    assert sum(sampled) == 2 * landing.STORY_LIVE_PER_DOMAIN == sum(rows)  # 16 per domain
    assert len(found) == 3 and cached.stories("bare-trans", str(bare), "cola") == found
