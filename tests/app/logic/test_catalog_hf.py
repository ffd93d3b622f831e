"""An imported Hugging Face classifier is named for what it is (ui.logic.catalog,
ui.logic.intro)."""

from __future__ import annotations

import pytest

from tests.hf_tiny import tiny_folder

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ("bert", "roberta"):
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


def test_an_imported_model_is_named_for_what_it_is(hf_root, tmp_path):
    from ui.logic.catalog import base_line, display_name
    from ui.logic.intro import what_you_see
    from uqcore.registry import list_checkpoints
    from uqlab.import_hf import import_folder

    import_folder(hf_root / "tiny-roberta", "mine", "cola", family="sto", root=tmp_path)
    (info,) = list_checkpoints(tmp_path)
    assert display_name(info) == "CoLA · Roberta · STO-TRANS"
    assert "RobertaForSequenceClassification brought as it is" in what_you_see(info)
    assert "referenced by the sha256" in base_line(info) and "layer(s) 1" in base_line(info)
