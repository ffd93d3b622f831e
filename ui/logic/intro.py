"""The landing's first sentence: what the visitor is looking at, said of the checkpoint open now
(its backbone, where its randomness comes from, and what a sample means), for markdown: what a
file named in it is escaped (:func:`ui.logic.format.plain`). No Streamlit here."""

from __future__ import annotations

from ui.logic.catalog import backbone_of, zero_shot
from ui.logic.format import plain
from uqcore.backbones import BACKBONES
from uqcore.config import ModelConfig
from uqcore.families import get_family
from uqcore.registry import CheckpointInfo
from uqcore.settings import resolve
from uqlab.bases import BASE_TITLES
from uqlab.catalog.tasks import task_title

READING = (
    "each sample is one plausible reading of the text, and where the samples disagree "
    "the model is unsure."
)


def _layers(cfg: dict) -> str:
    """Which attention layers draw their weights at random, as a clause."""
    layers, n = cfg.get("stochastic_layers"), int(cfg.get("n_layers", 0))
    if layers is None or sorted(layers) == list(range(n)):
        return "every attention layer samples its attention weights"
    if list(layers) == [n - 1]:
        return "the last attention layer samples its attention weights"
    shown = [str(i) for i in sorted(layers)]
    listed = f"{', '.join(shown[:-1])} and {shown[-1]}"
    return f"attention layers {listed} sample their attention weights"


def _pretrained(info: CheckpointInfo, task: str) -> str:
    """What a checkpoint on a pretrained base is, from its own config: the base's name, encoder
    or decoder (the backbone's classifier kind), and fine-tuned (the training recorded in it)
    or asked zero-shot with label words (:func:`ui.logic.catalog.zero_shot`: nothing trained;
    an instruction-tuned base is said so)."""
    base = info.training.get("config", {}).get("base")
    title = BASE_TITLES.get(base, backbone_of(info))
    name = title.split(" (")[0].split("-")[0]
    backbone = BACKBONES.get(backbone_of(info))
    kind = "decoder" if backbone is not None and backbone.classifier == "decoder" else "encoder"
    if zero_shot(info):
        words = info.training["prompt"].get("words") or []
        said = " or ".join(plain(repr(str(w)[:20])) for w in words[:4])  # a file's words: inert
        tuned = "instruction-tuned " if "instruct" in title.lower() else ""
        return (
            f"A pretrained {name} {tuned}{kind}, untrained here, asked zero-shot after each "
            f"{task} text which word answers ({said}: its next-token probabilities)"
        )
    return f"A pretrained {name} {kind} fine-tuned on {task}"


def what_you_see(info: CheckpointInfo) -> str:
    """One sentence: ``"A pretrained MiniLM encoder fine-tuned on CoLA acceptability, in which
    the last attention layer samples its attention weights (H-STO-TRANS): each sample is one
    plausible reading of the text, and where the samples disagree the model is unsure."``"""
    spec, cfg = get_family(info.family), info.config
    task = plain(task_title(info.task))  # an upload's own title: markdown-safe
    if backbone_of(info) == "word":
        model = (
            f"A small transformer trained from scratch on {task} (the paper's word-level set-up)"
        )
    elif isinstance(info.training.get("imported"), dict):
        arch = info.training["imported"].get("architecture", "Hugging Face classifier")
        model = f"A pretrained {arch} brought as it is and read as a {task} model, untrained here"
    else:
        model = _pretrained(info, task)
    title = spec.title
    if spec.ensemble:
        return (
            f"{model}, {cfg.get('ensemble_size', 'several')} times over with other seeds "
            f"({title}): each sample is one member's reading of the text, and where the "
            "members disagree the model is unsure."
        )
    if spec.mc_dropout:
        return f"{model}, with dropout kept on at inference ({title}): {READING}"
    if spec.weight_posterior:
        return (
            f"{model}, whose trained weights are drawn afresh for each sample from a Gaussian "
            f"around them ({title}, fitted after training): {READING}"
        )
    if spec.noisy(resolve(ModelConfig.from_dict(cfg))):
        return f"{model}, in which {_layers(cfg)} ({title}): {READING}"
    return (
        f"{model}, whose attention draws nothing at random ({title}): every sample gives "
        "the same prediction, what the stochastic models are compared with."
    )
