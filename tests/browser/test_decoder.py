"""A SmolLM2 (decoder) checkpoint in Chromium at a desk and on a projector: the explorer's
histogram, causal attention maps (the keys after each query left empty: no cell drawn there),
the centroids, the why views' salience, and Error analysis with its stored results; the
zero-shot label-word checkpoint with its prompt in the maps; nothing wider than the window.
Screenshots go to ``$UQ_SCREENSHOTS``."""

from __future__ import annotations

import pytest

from tests.browser.test_browser import chart_titles, open_view, settle, wait_title

pytestmark = pytest.mark.browser
HSTO = "cola-smollm2-hsto"
LINK = f"/?ckpt={HSTO}&text=Bill%20and%20Mary%20washed%20himself.&T=20&seed=1"
WORDS = "cr-smollm2-words-sto"  # uqlab.label_words: a prompt, nothing trained


@pytest.fixture(autouse=True)
def base_installed(served_folder):
    from uqcore.exceptions import ConfigError
    from uqlab.bases import get_base

    if not (served_folder / HSTO / "config.json").is_file():
        pytest.skip("the SmolLM2 checkpoints are not served")
    try:
        get_base("smollm2").path()
    except ConfigError as exc:
        pytest.skip(str(exc))


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def _empty_upper_cells(page) -> bool:
    """Whether the first attention heat map's z has nulls exactly above its diagonal."""
    return page.evaluate(
        """() => {
        const plots = [...document.querySelectorAll('.js-plotly-plot')];
        const maps = plots.filter(p => p.data && p.data[0] && p.data[0].type === 'heatmap'
            && String(p.data[0].hovertemplate || '').startsWith('query'));
        if (!maps.length) return false;
        const z = maps[0].data[0].z;
        for (let i = 0; i < z.length; i++)
            for (let j = 0; j < z[i].length; j++)
                if ((j > i) !== (z[i][j] === null || Number.isNaN(z[i][j]))) return false;
        return true;
    }"""
    )


@pytest.mark.parametrize(("width", "height"), [(1400, 1000), (1024, 768)])
def test_the_explorer_and_error_analysis_on_a_decoder(chrome, server, shots, width, height):
    context = chrome.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(240_000)
    try:
        open_view(page, server, LINK)
        wait_title(page, "Attention, layer 29", 240)
        titles = chart_titles(page)
        assert any(t.startswith("p(acceptable) per sample") for t in titles), titles
        assert "Centroid assignments of the keys" in titles, titles
        assert _empty_upper_cells(page)
        ticks = page.locator(".js-plotly-plot .ytick text").all_text_contents()
        assert any(t.endswith("<|im_start|>") for t in ticks), ticks[:12]
        assert _no_sideways_scroll(page)
        page.screenshot(path=str(shots / f"decoder-explore-{width}x{height}.png"), full_page=True)
        maps = page.locator('[data-testid="stHorizontalBlock"]').filter(
            has=page.locator(".gtitle", has_text="Attention, layer 29")
        )
        maps.last.scroll_into_view_if_needed()
        maps.last.screenshot(path=str(shots / f"decoder-attention-{width}x{height}.png"))

        page.get_by_text("Explain this prediction").first.click()
        settle(page)
        wait_title(page, "Salience", 240)
        assert _no_sideways_scroll(page)
        page.screenshot(path=str(shots / f"decoder-why-{width}x{height}.png"), full_page=True)

        page.goto(server + f"/errors?ckpt={HSTO}")
        page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=240_000)
        settle(page)
        assert _no_sideways_scroll(page)
        page.screenshot(path=str(shots / f"decoder-errors-{width}x{height}.png"), full_page=True)
    finally:
        context.close()


def test_the_zero_shot_checkpoint_shows_its_prompt(chrome, server, served_folder, shots):
    if not (served_folder / WORDS / "config.json").is_file():
        pytest.skip(f"{WORDS} is not served")
    context = chrome.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(240_000)
    try:
        open_view(page, server, f"/?ckpt={WORDS}&text=The%20battery%20died%20in%20a%20day.&T=20")
        wait_title(page, "Attention, layer 29", 240)
        titles = chart_titles(page)
        assert any(t.startswith(("p(pos) per sample", "p(neg) per sample")) for t in titles)
        assert _empty_upper_cells(page)
        ticks = page.locator(".js-plotly-plot .ytick text").all_text_contents()
        assert any(t.endswith(":negative") for t in ticks), ticks[:40]  # the prompt's question
        assert any(t.endswith(":↵") for t in ticks), ticks[:40]  # its newlines, shown as such
        assert "words" in page.locator('[data-testid="stSidebar"]').inner_text()
        assert _no_sideways_scroll(page)
        page.screenshot(path=str(shots / "decoder-words-1024x768.png"), full_page=True)
    finally:
        context.close()
