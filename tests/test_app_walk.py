"""Issue 24, point 5 (the walk's defects): AppTest of each fix on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)

APP = str(Path(__file__).resolve().parent.parent / "app.py")
LINK = {"ckpt": "cola-hsto", "text": "John is tall on several occasions.", "label": "0",
        "T": "5", "seed": "1"}  # fmt: skip

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def open_link(page: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_table3_puts_the_numbers_first_and_the_sentence_last():
    """Defect: on a phone (390x844) Table 3 showed no number without scrolling sideways: the
    sentence came first and each number column after it."""
    at = open_link("pages/table3.py", **LINK)
    at.multiselect[0].set_value(["cola-hsto", "cola-trans"]).run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    for frame in at.dataframe:
        columns = list(frame.value.columns)
        assert columns[-2:] == ["gold", "sentence"], columns
        assert columns[:4] == ["cola-hsto: p(gold) mean ± var", "cola-hsto: correct/T",
                               "cola-trans: p(gold) mean ± var", "cola-trans: correct/T"]
        assert frame.value.iloc[0, 0].startswith("0.")
