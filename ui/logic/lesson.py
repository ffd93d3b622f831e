"""The Learn page's links and its 20-minute lesson, as data. No Streamlit here.

Each step's link opens the explorer on the checkpoint, settings and sentence where that step's
idea shows most, chosen on dev data by ``python -m uqlab.evaluation.lesson_links`` (its docstring
says what is measured and how the winner is picked); :data:`LINKS` records the choice with the
numbers that command printed (``--rows 40 --T 20 --seed 0 --link-T 50``, data from
``$UQ_DATA_DIR``). ``tests/app/logic/test_lesson.py`` checks that every link's checkpoint is
shipped, that its family draws the map the step is about, and that each sentence's number is
reproduced."""

from __future__ import annotations

from dataclasses import dataclass, field

from ui.logic.state import ViewState, explorer_url

LINK_T = 50  # samples a link asks for: the explorer's default, quick for a class at once
LINK_SEED = 0
MEASURE_CMD = "python -m uqlab.evaluation.lesson_links --rows 40 --T 20 --seed 0 --link-T 50"


@dataclass(frozen=True)
class StepLink:
    """One Learn step's link. ``step``: the key of ``uqlab.evaluation.lesson_links.CANDIDATES``;
    ``ckpt``, ``knobs`` (``ViewState`` knob fields), ``text`` and its gold ``label``: what the link
    opens (the sentence is one of the checkpoint's task's example sentences); ``look``: where to
    look in the explorer; ``quantity``: what was measured, in words; ``dev``: its mean over the dev
    rows; ``runner_up``: the next candidate and its number; ``on_text``: the number on ``text``
    at ``LINK_T`` samples."""

    step: str
    ckpt: str
    text: str
    label: int
    look: str
    quantity: str
    dev: float
    runner_up: str
    on_text: float
    knobs: dict = field(default_factory=dict)

    def view(self) -> ViewState:
        """The explorer's view this link opens."""
        return ViewState(
            ckpt=self.ckpt, text=self.text, label=self.label, T=LINK_T, seed=LINK_SEED, **self.knobs
        )

    def url(self, **knobs) -> str:
        """The link; ``knobs`` (``ViewState`` knob fields) set more of the view, e.g. the
        lesson's τ1 = 0.1 on the centroid step's checkpoint."""
        return explorer_url(self.view().replace(**knobs))

    def why(self) -> str:
        """One short line: why this checkpoint, with the measured number."""
        return f"Chosen on dev data: {self.quantity} {self.dev:.3f} (next best: {self.runner_up})."


LINKS: dict[str, StepLink] = {
    link.step: link
    for link in (
        StepLink(
            step="gumbel",
            ckpt="cola-sto",
            knobs={"tau2": 0.1},
            text="kim is eager to recommend.",
            label=0,
            look="the attention map's sample slider and its orange std map",
            quantity="mean std of the attention weights over the samples",
            dev=0.076,
            runner_up="cola-sto at τ2 = 0.3, 0.068",
            on_text=0.207,
        ),
        StepLink(
            step="centroids",
            ckpt="cola-minilm-hsto",
            text="sandy had read how many papers ? !",
            label=1,
            look="the centroid view: keys whose share of samples splits between centroids",
            quantity="share of samples in which a key leaves its usual centroid",
            dev=0.333,
            runner_up="imdb-hsto, 0.327",
            on_text=0.432,
        ),
        StepLink(
            step="prior",
            ckpt="cola-minilm-bam",
            text="which book did each author recommend ?",
            label=1,
            look="the prior bars (uneven: learned) beside the posterior and its samples",
            quantity="prior's distance from uniform",
            dev=0.244,
            runner_up="imdb-minilm-bam, 0.134; cola-bam 0.013",
            on_text=0.287,
        ),
        StepLink(
            step="em",
            ckpt="cola-probtrans",
            knobs={"em_iterations": 10},
            text="nora sent the book to london",
            label=1,
            look="the 'difference' panel and p after EM against the trained keys",
            quantity="attention moved by EM (total variation per row)",
            dev=0.212,
            runner_up="cola-probtrans at 3 steps, 0.179",
            on_text=0.365,
        ),
        StepLink(
            step="histogram",
            ckpt="cola-bam",
            text="sandy had read how many papers ? !",
            label=1,
            look="the histogram of p: how wide, and whether samples vote both ways",
            quantity="share of sentences whose histogram is wider than a bar",
            dev=0.375,
            runner_up="cola-hsto, 0.375, less accurate",
            on_text=0.145,
        ),
    )
}


@dataclass(frozen=True)
class PartLink:
    """A lesson part's own link: ``words`` shown, the :data:`LINKS` ``step`` whose view it
    opens, and ``knobs`` it sets on top (the value the part asks the class to try)."""

    words: str
    step: str
    knobs: dict = field(default_factory=dict)

    def url(self) -> str:
        return LINKS[self.step].url(**self.knobs)


@dataclass(frozen=True)
class LessonStep:
    """One part of the 20-minute lesson: ``minutes``, the Learn ``section`` it uses, what to
    ``do`` (click or move), the ``ask`` put to the class, what they should ``see``, and its own
    ``links`` to the explorer (each setting the view the part is about, so a teacher opens it
    from the plan without scrolling to the step)."""

    minutes: int
    title: str
    section: str
    do: str
    ask: str
    see: str
    links: tuple[PartLink, ...] = ()


LESSON: tuple[LessonStep, ...] = (
    LessonStep(
        3,
        "One answer is not enough",
        "step 6",
        "Move *How much samples disagree* from 0 to 3.",
        "Each sample is confident. Is the average?",
        "The histogram splits; mutual information rises from 0.",
        (PartLink("a trained model's histogram", "histogram"),),
    ),
    LessonStep(
        4,
        "Noise in the attention",
        "step 1",
        "Set τ to 0.1, then 20, with 12 samples. Open the link.",
        "At which τ do the samples disagree?",
        "Low τ: one token per sample, a different one each time. On the model: a dark std map.",
        (
            PartLink("the model at τ2 = 0.1", "gumbel", {"tau2": 0.1}),
            PartLink("at τ2 = 20", "gumbel", {"tau2": 20.0}),
        ),
    ),
    LessonStep(
        4,
        "Keys that jump",
        "step 3",
        "Try τ1 = 0.1 and 3. Open the link.",
        "Which words cannot make up their mind?",
        "Keys between two centroids switch from sample to sample.",
        (
            PartLink("the model at τ1 = 0.1", "centroids", {"tau1": 0.1}),
            PartLink("at τ1 = 3", "centroids", {"tau1": 3.0}),
        ),
    ),
    LessonStep(
        4,
        "What the model expected",
        "step 4",
        "Try k = 2, then 30. Open the link.",
        "Which words matter before the query looks?",
        "Small k scatters the samples; the learned prior is uneven.",
        (PartLink("a trained model's prior and posterior", "prior"),),
    ),
    LessonStep(
        5,
        "Would you trust it?",
        "step 6's link",
        "Open it, then type a sentence from the class.",
        "How many of the 50 samples vote each way?",
        "A wide histogram and a high MI: the model is unsure.",
        (PartLink("step 6's link", "histogram"),),
    ),
)


def lesson_markdown() -> str:
    """The lesson as short markdown lines (no table: readable on a 1024x768 projector)."""
    total = sum(s.minutes for s in LESSON)
    parts = [f"Five parts, {total} minutes. Each uses a step below and its own explorer link."]
    for i, s in enumerate(LESSON, 1):
        opens = " · ".join(f"[{link.words}]({link.url()})" for link in s.links)
        parts.append(
            f"**{i}. {s.title}** ({s.minutes} min, {s.section})  \n"
            f"Do: {s.do}  \nAsk: *{s.ask}*  \nThey see: {s.see}"
            + (f"  \nOpen: {opens}" if opens else "")
        )
    return "\n\n".join(parts)
