"""A Hugging Face classifier imported as a family opens on every page (ui.routes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.hf_tiny import tiny_folder
from ui.routes import PAGES

pytest.importorskip("transformers")


APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ("bert", "roberta"):
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


def _problems(at: AppTest) -> list[str]:
    return [str(e) for e in at.exception] + [e.value for e in at.error]


@pytest.mark.parametrize("arch, family", [("roberta", "bam"), ("bert", "sto")])
def test_an_imported_model_opens_on_every_page(hf_root, tmp_path, monkeypatch, arch, family):
    from tests.app_fixtures import make_checkpoints
    from uqlab.import_hf import import_folder

    root = make_checkpoints(tmp_path / "ck", families=("trans",))
    import_folder(hf_root / f"tiny-{arch}", "mine", "cola", family=family, root=root)
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"ckpt": "mine", "T": "10", "text": "the cat sat on the mat ."})
    at.run()
    assert not _problems(at), _problems(at)
    assert at.metric, "the explorer shows no statistics for the imported model"
    if family == "bam":
        notes = [*at.caption, *at.info]  # the uniform-prior note is an info (issue 34)
        assert any("no learned prior" in c.value for c in notes), "say there is no prior"
    for script, title, _, _ in PAGES[1:]:
        at.switch_page(script).run()
        assert not _problems(at), f"{title}: {_problems(at)}"


SERVER_COMMANDS = ("python -m", "streamlit run", "bash scripts")  # what a visitor cannot run
EXPLORER = PAGES[0][0]


def _shown(at: AppTest) -> list[str]:
    """Everything the page shows, as text: each element's and block's message (markdown,
    captions, info, warnings, errors, labels, help), main area and sidebar."""
    out = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and not isinstance(proto, bytes):
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    return out


def _commands(at: AppTest) -> list[str]:
    return [t[:300] for t in _shown(at) for c in SERVER_COMMANDS if c in t]


@pytest.fixture(scope="module")
def walked(hf_root, tmp_path_factory) -> dict[tuple[str, str], list[str]]:
    """(how the model came, page) -> the server commands its page shows a visitor: a model the
    operator imported (``uqlab.import_hf``, never evaluated) and one a visitor added on the
    upload page from the operator's Hugging Face folders."""
    from tests.app_fixtures import make_checkpoints
    from ui.logic import keys as K
    from uqlab.import_hf import import_folder
    from uqlab.models.intake import HF_DIR_ENV

    root = make_checkpoints(tmp_path_factory.mktemp("ck"), families=("trans",))
    import_folder(hf_root / "tiny-bert", "mine", "cola", family="sto", root=root)
    found = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UQ_CHECKPOINT_DIR", str(root))
        mp.setenv(HF_DIR_ENV, str(hf_root))
        for how in ("imported", "uploaded"):
            at = AppTest.from_file(APP, default_timeout=300)
            at.query_params.update({"ckpt": "mine", "T": "5", "text": "the cat sat on the mat ."})
            at.run()
            if how == "uploaded":
                at.switch_page("app_pages/upload.py").run()
                at.selectbox(key=K.UP_HF).set_value("tiny-roberta")
                at.radio(key=f"{K.UP_FAMILY}_server").set_value("mcdropout").run()
                at.button(key=K.UP_HF_GO).click().run()
                assert any("upload-tiny-roberta" in s.value for s in at.success), _problems(at)
            for script, _, _, _ in PAGES:
                at.switch_page(script).run()
                if script != EXPLORER:  # the explorer's own tests check it opens
                    assert not at.exception, (how, script, at.exception)
                found[how, script] = _commands(at)
    return found


def test_no_page_tells_a_visitor_of_an_added_model_to_run_a_server_command(walked):
    """Issue 34: an imported or uploaded model's dataset pages told the visitor to "run python
    -m uqlab.evaluate", a command of the server; they say what the visitor can do instead."""
    assert {key: texts for key, texts in walked.items() if texts and key[1] != EXPLORER} == {}


def test_the_explorer_tells_a_visitor_of_an_added_model_no_server_command(walked):
    assert {key: texts for key, texts in walked.items() if texts and key[1] == EXPLORER} == {}
