"""AppTest of the sidebar (ui.sidebar) on tiny checkpoints: temperatures, unreadable
checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir, make_checkpoints  # noqa: F401 (fixtures)
from tests.helpers import open_link

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_temperatures_are_disabled_where_a_family_has_none():
    at = open_link(ckpt="cola-trans", text="nora sent the book to london")
    tau1, tau2 = (s for s in at.sidebar.select_slider)
    assert tau1.disabled and tau2.disabled
    assert "no centroids" in tau1.help and "Gumbel" in tau2.help
    assert any("deterministic" in i.value for i in at.info)


def test_an_unreadable_checkpoint_folder_is_named_in_the_sidebar(tmp_path, monkeypatch):
    root = tmp_path / "ck"
    root.mkdir()
    (root / "cola-broken").mkdir()
    (root / "cola-broken" / "config.json").write_text("{not json")
    make_checkpoints(root)
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = open_link()
    notes = [e for e in at.sidebar.expander if "could not be read" in e.label]
    assert len(notes) == 1 and notes[0].label.startswith("⚠️ 1 checkpoint")
    assert any("cola-broken" in m.value for m in notes[0].markdown)
    assert "cola-broken" not in at.sidebar.selectbox[0].options


def test_a_checkpoint_whose_own_settings_pass_the_sliders_ends_opens(tmp_path, monkeypatch):
    """cr-smollm2-words-sto ships at λ = 16 and crashed the explorer: its noise slider ended at
    5. A slider now reaches the checkpoint's own value (and a link's): λ, EM steps, dropout."""
    import json

    root = make_checkpoints(tmp_path / "ck", families=("sto", "probtrans"))
    for name, key, value in (
        ("cola-sto", "noise_scale", 16.0),
        ("cola-probtrans", "em_iterations", 40),
    ):
        path = root / name / "config.json"
        doc = json.loads(path.read_text())
        doc["model"]["inference"][key] = value
        path.write_text(json.dumps(doc))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = open_link(ckpt="cola-sto", text="nora sent the book to london")
    assert not at.exception
    noise = next(s for s in at.sidebar.slider if s.label.startswith("Noise"))
    assert noise.value == 16.0 and noise.max >= 16.0
    at = open_link(ckpt="cola-sto", text="nora sent the book to london", noise_scale="30")
    assert not at.exception
    assert next(s for s in at.sidebar.slider if s.label.startswith("Noise")).value == 30.0
    at = open_link(ckpt="cola-probtrans", text="nora sent the book to london")
    assert not at.exception
