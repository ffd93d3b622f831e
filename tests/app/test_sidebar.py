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


def _copy(at, knob: str):
    """The explorer's in-page copy of the sidebar's ``knob`` (``ui.sidebar.knob_row``)."""
    from ui.logic import keys as K

    return next(
        w
        for w in (*at.main.select_slider, *at.main.number_input)
        if (w.key or "").startswith(f"{K.MAIN_KNOB}{knob}=")
    )


def test_an_in_page_copy_keeps_its_widget_while_it_drives_and_a_sidebar_move_redraws_it():
    """Issue 45 item 12: a phone's arrow presses on the in-page tau2 lost 3 of 4 presses: the
    copy's key was its value, so each press drew another widget and the focused thumb was
    unmounted. The copy now keeps its key while it holds the sidebar's value (it drove), and is
    drawn afresh, at the new value, only when the sidebar's value moved on its own."""
    at = open_link(ckpt="cola-hsto", text="nora sent the book to london", tau2="0.2")
    first = _copy(at, "tau2")
    assert first.value == 0.2
    for value in (0.5, 1.0, 5.0):  # presses on the copy (2 is cola-hsto's own: no tau2 in the link)
        _copy(at, "tau2").set_value(value).run()
        assert not at.exception
        assert _copy(at, "tau2").key == first.key
        side = next(s for s in at.sidebar.select_slider if s.label.startswith("tau2"))
        assert side.value == value and at.query_params["tau2"] in (repr(value), [repr(value)])
    side.set_value(20.0).run()  # the sidebar moved: a fresh copy at its value
    assert _copy(at, "tau2").key != first.key and _copy(at, "tau2").value == 20.0
    assert at.query_params["tau2"] in ("20.0", ["20.0"])
