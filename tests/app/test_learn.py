"""AppTest of the Learn page on tiny checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import on_page

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_learn_page_builds_the_ideas_in_steps():
    at = on_page("app_pages/learn.py")
    assert [h.value[:2] for h in at.header] == ["1.", "2.", "3.", "4.", "5.", "6.", "7."]
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
    charts = at.get("plotly_chart")
    weights = next(c for c in charts if "Uncertainty in the weights" in c.proto.spec)
    at.slider(key="l_laplace_n").set_value(150).run()  # step 7: more data, other draws
    assert not at.exception
    after = next(c for c in at.get("plotly_chart") if "Uncertainty in the weights" in c.proto.spec)
    assert after.proto.spec != weights.proto.spec


def test_learn_page_offers_the_lesson_and_links_each_step_to_its_measured_checkpoint():
    from ui.logic.lesson import LINKS, lesson_markdown

    at = on_page("app_pages/learn.py")
    assert [e.label for e in at.expander][0].startswith("A 20-minute lesson")
    assert any(m.value == lesson_markdown() for m in at.markdown)
    captions = " ".join(c.value for c in at.caption)
    for link in LINKS.values():
        assert f"]({link.url()})" in captions, link.step  # the link, as measured
        assert link.why() in captions
