"""The examples picker of the dataset pages (ui.data_source): the visitor's labelled file."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import open_link
from ui.logic import keys as K
from ui.logic.your_data import MAX_BYTES

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_the_labelled_file_uploaders_state_the_limit_they_enforce():
    """Issue 34: the caption said 20 MB under an uploader that said "100MB per file" (the
    server's limit): the widget's limit and the caption are now the one constant's."""
    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    at.radio(key=f"{K.DATA_KIND}_results").set_value("mine").run()
    assert not at.exception, at.exception
    uploaders = at.get("file_uploader")
    assert len(uploaders) == 2  # the labelled file and the optional out-of-domain one
    mb = MAX_BYTES // 2**20
    assert all(up.proto.max_upload_size_mb == mb for up in uploaders)
    assert any(f"{mb} MB per file" in c.value for c in at.caption)
