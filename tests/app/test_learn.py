"""AppTest of the Learn page on tiny checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import on_page

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_learn_page_builds_the_ideas_in_steps():
    at = on_page("app_pages/learn.py")
    assert [h.value[:2] for h in at.header] == ["1.", "2.", "3.", "4.", "5.", "6."]
    assert any("log" in x.value for x in at.get("latex"))  # g = -log(-log u), written out
    em = next(c for c in at.get("plotly_chart") if "EM step" in c.proto.spec)
    at.slider(key="l_em").set_value(8).run()
    assert not at.exception
    assert (
        next(c for c in at.get("plotly_chart") if "EM step" in c.proto.spec).proto.spec
        != em.proto.spec
    )
    before = [m.value for m in at.metric]
    at.slider(key="l_spread").set_value(2.5).run()
    assert [m.value for m in at.metric] != before
