"""A hostile visitor, in Chromium against a real server: an upload is data, never a description
of where the server should read, and what it names is shown as text (issue 31)."""

from __future__ import annotations

import pytest

from tests.browser.test_browser import csv_rows, goto, open_view, settle
from tests.helpers import zip_folder

pytestmark = pytest.mark.browser
SECRET = "SECRET-ROW of the server"
DROP = '[data-testid="stFileUploaderDropzoneInput"]'


def described_zip(folder, task: str, labels: list[str], **spec) -> bytes:
    """The checkpoint ``folder`` zipped, its ``training.task`` = ``task`` described by ``spec``."""

    def describe(doc: dict) -> dict:
        doc["training"] |= {
            "task": task,
            "label_names": labels,
            "task_spec": {"name": task, "label_names": labels, "text_column": "text", **spec},
        }
        return doc

    return zip_folder(folder, {"config.json": describe})


def upload_zip(tab, name: str, data: bytes) -> None:
    goto(tab, "Your checkpoint")
    tab.locator(DROP).first.set_input_files(
        {"name": name, "mimeType": "application/zip", "buffer": data}
    )
    settle(tab)
    tab.get_by_role("button", name="Validate and add").first.click()
    tab.get_by_text("Added upload-", exact=False).wait_for()
    settle(tab)


def test_an_uploaded_checkpoint_cannot_make_the_server_read_a_file(
    tab, server, served_folder, tmp_path, shots
):
    """A zip whose task description names a CSV of the server (absolute path and climbing out
    of the data folder): uploaded through the page, Error analysis computed on the visitor's
    own file; no row of the server's file in the table, the map or the download."""
    secret = tmp_path / "secret.csv"
    secret.write_text("text,label\n" + "".join(f"{SECRET} {i},acceptable\n" for i in range(8)))
    climb = "${data}/" + "../" * 12 + str(secret).lstrip("/")
    spec = {
        "data": {"file": str(secret), "split": {"dev": 0.2, "test": 0.2}},
        "examples": {"id": str(secret), "ood": climb},
    }
    open_view(tab, server, "/?ckpt=tiny-trans")
    upload_zip(
        tab,
        "leak.zip",
        described_zip(served_folder / "tiny-trans", "leak", ["unacceptable", "acceptable"], **spec),
    )
    tab.get_by_text("so they were left out", exact=False).wait_for()
    goto(tab, "Error analysis")
    tab.get_by_text("no bundled examples", exact=False).wait_for()
    assert tab.get_by_text("the bundled", exact=False).count() == 0
    mine = "text,label\nthe cat sat on the mat,acceptable\ncat the on sat mat the,unacceptable\n"
    tab.locator(DROP).first.set_input_files(
        {"name": "mine.csv", "mimeType": "text/csv", "buffer": mine.encode()}
    )
    settle(tab)
    tab.get_by_role("button", name="Compute").click()
    tab.get_by_text("examples.", exact=False).first.wait_for()
    settle(tab)
    tab.screenshot(path=str(shots / "hostile-task-errors.png"), full_page=True)
    assert SECRET not in tab.content()  # the table, the map (its points' texts), every caption
    with tab.expect_download() as got:
        tab.get_by_role("button", name="Download these rows (CSV)").click()
    rows = csv_rows(got.value.path())
    assert {r["text"] for r in rows} == {"the cat sat on the mat", "cat the on sat mat the"}
    with tab.expect_download() as got:
        tab.get_by_role("button", name="The map's points (CSV)").click()
    assert SECRET not in open(got.value.path(), encoding="utf-8").read()


def test_two_sessions_with_one_task_name_each_see_their_own(chrome, server, served_folder):
    """Two visitors at once upload a task named ``mine`` with other labels: each explorer offers
    its own labels (on main the second session got the first one's description)."""
    tabs = []
    for labels in (["cat", "dog"], ["red", "blue"]):
        context = chrome.new_context(viewport={"width": 1400, "height": 1400})
        tab = context.new_page()
        tab.set_default_timeout(90_000)
        open_view(tab, server, "/?ckpt=tiny-trans")
        upload_zip(tab, "mine.zip", described_zip(served_folder / "tiny-trans", "mine", labels))
        tabs.append((context, tab, labels))
    for context, tab, labels in tabs:
        goto(tab, "Explore a sentence")
        gold = tab.locator('[data-testid="stRadio"]', has_text="Gold label")
        for label in labels:
            assert gold.get_by_text(label, exact=True).count() == 1
        others = {"cat", "dog", "red", "blue"} - set(labels)
        assert not any(gold.get_by_text(o, exact=True).count() for o in others)
        context.close()


EVIL = "https://evil.example"
HOSTILE_LABELS = [f"[sign in]({EVIL}/a)", f"<a href='{EVIL}'>b</a>"]  # 40 chars at most


def live_links(tab) -> list[str]:
    """Every link on the page (HTML or a chart's SVG) that leads to the hostile site."""
    return tab.locator('a[href*="evil.example"], [href*="evil.example"]').evaluate_all(
        "els => els.map(e => e.outerHTML.slice(0, 120))"
    )


def test_what_a_visitor_names_is_shown_as_text_never_a_link(tab, server, served_folder, shots):
    """Label names, a task's title, a file's and its columns' names and a link's values that
    hold markdown links, HTML anchors and bare URLs: on every page they are text, and no
    element links to the site they name."""
    ckpt = f"[Click here]({EVIL}/login)"
    open_view(tab, server, "/?ckpt=" + ckpt.replace("[", "%5B").replace("]", "%5D"))
    tab.get_by_text("in the link is not available here", exact=False).wait_for()
    assert not live_links(tab), live_links(tab)
    spec = {"title": f"[t]({EVIL}/t) www.evil.example", "short": f"<a href='{EVIL}/s'>s</a>"}
    upload_zip(
        tab, "evil.zip", described_zip(served_folder / "tiny-hsto", "evil", HOSTILE_LABELS, **spec)
    )
    assert not live_links(tab), live_links(tab)
    goto(tab, "Explore a sentence")
    tab.locator('[data-testid="stMetricValue"]').first.wait_for()
    settle(tab)
    tab.screenshot(path=str(shots / "hostile-names-explore.png"), full_page=True)
    assert not live_links(tab), live_links(tab)
    goto(tab, "Compare methods")
    assert not live_links(tab), live_links(tab)
    goto(tab, "Error analysis")
    name = f"[f]({EVIL}/f) www.evil.example.csv"
    data = f'"[text]({EVIL}/c)",label\nthe cat sat,{HOSTILE_LABELS[0]}\nsat cat the,0\n'
    tab.locator(DROP).first.set_input_files(
        {"name": name, "mimeType": "text/csv", "buffer": data.encode()}
    )
    settle(tab)
    tab.screenshot(path=str(shots / "hostile-names-errors.png"), full_page=True)
    assert not live_links(tab), live_links(tab)
    goto(tab, "Temperature sweep")
    assert not live_links(tab), live_links(tab)
