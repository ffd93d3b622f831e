"""Adapter checkpoints of the shipped MiniLM models upload (uqlab.models.intake); a missing base is
named."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.helpers import use_shipped
from uqcore.checkpoint import load_checkpoint
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.models.intake import UploadError, files_from_zip, install

HSTO, BAM = "cola-minilm-hsto", "cola-minilm-bam"


@pytest.fixture(autouse=True)
def shipped(monkeypatch, minilm_base):
    use_shipped(monkeypatch, HSTO)


def _zip(folder: Path, config: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.iterdir()):
            if f.is_file():
                data = json.dumps(config) if config and f.name == "config.json" else f.read_bytes()
                z.writestr(f"{folder.name}/{f.name}", data)
    return buf.getvalue()


def test_an_adapter_checkpoint_uploads_and_a_missing_base_is_named(tmp_path):
    source = SHIPPED_CHECKPOINT_DIR / HSTO
    assert install(files_from_zip(_zip(source)), HSTO, tmp_path) == f"upload-{HSTO}"
    assert load_checkpoint(tmp_path / f"upload-{HSTO}").config.backbone == "bert"
    doc = json.loads((source / "config.json").read_text())
    doc["base"] = {**doc["base"], "package": "no_such_base_xyz", "distribution": "no-such-base"}
    with pytest.raises(UploadError, match="pip install no-such-base"):
        install(files_from_zip(_zip(source, doc)), "other", tmp_path)
    assert not (tmp_path / "upload-other").exists()
