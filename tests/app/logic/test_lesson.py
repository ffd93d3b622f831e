"""The Learn page's links and lesson (ui.logic.lesson): each link opens a shipped checkpoint
whose family shows the step's idea, on one of its task's example sentences, and the numbers
recorded beside it are the ones ``uqlab.evaluation.lesson_links`` measures."""

from __future__ import annotations

from functools import cache

import pytest

from ui.logic.lesson import LESSON, LINK_SEED, LINK_T, LINKS, lesson_markdown
from uqcore.registry import list_checkpoints, load
from uqcore.settings import resolve
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

# the map (a LayerMaps field) or knob each step's family must have to show its idea
NEEDS = {
    "gumbel": ("knob", "tau2"),
    "centroids": ("map", "centroids"),
    "prior": ("map", "prior"),
    "em": ("map", "attention_before_em"),
    "histogram": ("noisy", None),
}


@cache
def shipped(name: str):
    return load(name, SHIPPED_CHECKPOINT_DIR)


def test_every_step_with_a_link_is_a_step_the_lab_measures():
    from uqlab.evaluation.lesson_links import CANDIDATES

    assert set(LINKS) == set(CANDIDATES) == set(NEEDS)
    for step, link in LINKS.items():
        assert link.step == step
        assert any(c.ckpt == link.ckpt and c.knobs == link.knobs for c in CANDIDATES[step])


@pytest.mark.parametrize("step", sorted(LINKS))
def test_each_link_opens_a_shipped_checkpoint_whose_family_shows_the_idea(step):
    link = LINKS[step]
    names = {i.name for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR) if not i.error}
    assert link.ckpt in names
    cfg = shipped(link.ckpt).config
    spec, (kind, what) = cfg.spec, NEEDS[step]
    settings = resolve(cfg, link.view().overrides())
    if step == "em":  # EM draws nothing at random: it adapts the keys, before vs after
        assert spec.needs_every_query(settings) and settings.em_iterations > 0
    else:
        assert spec.noisy(settings), f"{link.ckpt} draws nothing at random with {link.knobs}"
    if kind == "knob":
        assert spec.reads(what) and not settings.hard  # hard samples hide the temperature
    if kind == "map":
        assert what in spec.maps


@pytest.mark.parametrize("step", sorted(LINKS))
def test_each_sentence_is_an_example_of_the_checkpoints_task_with_its_gold_label(step):
    from uqlab.catalog.presets import preset_rows

    link = LINKS[step]
    task = shipped(link.ckpt).training["task"]
    assert (link.text, link.label) in {(t, y) for t, y, _ in preset_rows(task)}


@pytest.mark.parametrize("step", sorted(LINKS))
def test_the_number_recorded_on_each_sentence_is_the_one_measured(step):
    """``on_text`` is :func:`uqlab.evaluation.lesson_links.sentence_quantity` at the link's T and
    seed."""
    from uqlab.evaluation.lesson_links import sentence_quantity

    link = LINKS[step]
    got = sentence_quantity(step, shipped(link.ckpt), link.text, LINK_T, LINK_SEED, link.knobs)
    assert got == pytest.approx(link.on_text, abs=5e-4)


def test_the_prior_link_shows_a_learned_prior_where_the_explorer_looks_first():
    """The explorer's own computation and its own test (``uniform_prior``, the last layer):
    the linked prior is learned; cola-bam's, the one linked before, is uniform there."""
    from uqlab.workbench.compute import explore, uniform_prior

    link = LINKS["prior"]
    for name, uniform in ((link.ckpt, False), ("cola-bam", True)):
        ck = shipped(name)
        res = explore(ck, link.text, 2, LINK_SEED, link.view().overrides())
        prior = res.maps[ck.config.n_layers - 1].prior[0]  # [H, n]
        assert uniform_prior(prior) is uniform, name


def test_the_lesson_fills_twenty_minutes_in_five_short_parts():
    assert len(LESSON) == 5 and sum(s.minutes for s in LESSON) == 20
    for s in LESSON:
        for line in (s.title, s.do, s.ask, s.see):
            assert 0 < len(line) <= 90, line  # short lines for a projector's column
    text = lesson_markdown()
    assert "|" not in text  # no table: it would be too wide at 1024x768
    assert text.count("Ask:") == 5 and "20 minutes" in text


def test_each_link_says_why_with_its_number():
    for link in LINKS.values():
        assert f"{link.dev:.3f}" in link.why() and link.runner_up in link.why()
        assert link.url().startswith("/?") and f"ckpt={link.ckpt}" in link.url()


def test_each_lesson_part_has_its_own_links_that_set_the_view_it_asks_for():
    """Issue 45: the plan's parts had no links of their own (they were further down, by the
    steps) and part 3's asked for τ1 = 0.1 and 3 with a link that set no τ1. Each part now
    links from the plan; where a part names values, its links set them, on a checkpoint that
    reads that knob (not in hard mode, where a temperature changes nothing to see)."""
    from urllib.parse import parse_qs, urlparse

    from ui.logic.state import parse

    said = lesson_markdown()
    for part in LESSON:
        assert part.links, part.title
        for link in part.links:
            url = link.url()
            assert f"[{link.words}]({url})" in said
            query = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
            view, notes = parse(query, [LINKS[link.step].ckpt], None)
            assert not notes and view.ckpt == LINKS[link.step].ckpt
            for knob, value in link.knobs.items():
                assert getattr(view, knob) == value
                settings = resolve(shipped(view.ckpt).config, view.overrides())
                assert shipped(view.ckpt).config.spec.reads(knob) and not settings.hard
    keys = next(p for p in LESSON if p.title == "Keys that jump")
    assert [link.knobs for link in keys.links] == [{"tau1": 0.1}, {"tau1": 3.0}]
