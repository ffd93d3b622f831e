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
        assert any("no learned prior" in c.value for c in at.caption), "say there is no prior"
    for script, title, _, _ in PAGES[1:]:
        at.switch_page(script).run()
        assert not _problems(at), f"{title}: {_problems(at)}"
