"""The caches and run slots of ui.cached: pages give their slot back, uploads are keyed apart."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir, make_checkpoints  # noqa: F401 (fixtures)
from tests.helpers import on_page
from uqcore.settings import SamplingSettings
from uqlab.models.intake import install

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_a_page_gives_its_run_slot_back_when_it_stops_early():
    """At most PAGE_SLOTS page runs at once; one that ends in st.stop (error analysis before
    Compute) or a rerun must release its slot, or the server would lock up after a few."""
    from ui import cached

    for _ in range(cached.PAGE_SLOTS + 1):
        at = on_page("app_pages/errors.py")  # stops at "Press Compute"
        assert any("Press Compute" in i.value for i in at.info)
    busy = cached.gate().snapshot()
    assert busy["pages_used"] == 0 and not busy["running"] and not busy["waiting"], busy


def test_uploading_again_under_the_same_name_serves_the_new_model(tmp_path):
    """Defect: the second upload's card came with the first upload's cached model (the caches
    were keyed by name and folder), and the BAM view then failed with KeyError 'prior'."""
    from ui import cached

    shipped = make_checkpoints(tmp_path / "shipped")
    folder = tmp_path / "session"
    folder.mkdir()
    for family in ("hsto", "bam"):
        files = {f.name: f.read_bytes() for f in (shipped / f"cola-{family}").iterdir()}
        assert install(files, "mine", folder) == "upload-mine"
        ck = cached.checkpoint("upload-mine", str(folder))
        assert ck.config.family == family
        own = SamplingSettings()  # the checkpoint's trained settings
        res = cached.explore("upload-mine", str(folder), "john is tall", 5, 0, own, None)
        assert (res.maps[0].prior is not None) == (family == "bam")


def test_a_grid_keeps_each_setting_where_one_setting_is_looked_for():
    """The sweep samples its values together (many_grid); each value is then kept under the
    key many() reads, so another page asking for one of them samples nothing."""
    from ui import cached

    name = "cola-hsto"
    folder = cached.where(name)
    texts = ("a great movie", "the film was dull", "")
    grid = tuple(SamplingSettings(tau2=t) for t in (0.7, 7.0))
    rows = []
    got = cached.many_grid(name, folder, texts, 3, 11, grid, rows.append)
    assert sum(rows) == 2 * 2  # two readable texts, two settings
    for s, part in zip(grid, got, strict=True):
        assert isinstance(part[2], str)
        again = cached.many(name, folder, texts, 3, 11, s, lambda n: pytest.fail("resampled"))
        assert again is part
    assert cached.many_grid(name, folder, texts, 3, 11, grid, rows.append) == got
    assert sum(rows) == 4  # all kept: nothing sampled the second time
