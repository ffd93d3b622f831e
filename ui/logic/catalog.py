"""What the app can offer: the checkpoints (grouped by task and family), their model cards,
their trained inference values, and preset sentences per task. No Streamlit here."""

from __future__ import annotations

from dataclasses import dataclass

from ui.logic.format import plain
from uqcore.backbones import BACKBONES, get_backbone
from uqcore.checkpoint import read_length
from uqcore.families import FAMILY_NAMES
from uqcore.families import title as family_title
from uqcore.registry import CheckpointInfo
from uqlab.bases import BASE_TITLES
from uqlab.catalog.conformal_scores import decode as decode_scores
from uqlab.catalog.presets import preset_rows
from uqlab.catalog.tasks import DOMAINS, METRICS, TASKS
from uqlab.evaluation.detection_report import matched, number
from uqlab.evaluation.paper import metric_cell
from uqlab.models.intake import UPLOAD_PREFIX

FAMILY_ORDER = FAMILY_NAMES  # the family table's order


def backbone_of(info: CheckpointInfo) -> str:
    """The checkpoint's backbone name ("word" for those saved before backbones existed)."""
    backbone = info.config.get("backbone", "word")
    return backbone if isinstance(backbone, str) else "word"


def sort_key(info: CheckpointInfo) -> tuple:
    """Grouped by task, then backbone (the table's order), then family (the table's order)."""
    family = FAMILY_ORDER.index(info.family) if info.family in FAMILY_ORDER else 99
    order = list(BACKBONES)
    backbone = order.index(backbone_of(info)) if backbone_of(info) in order else 99
    return (info.task, backbone, family, info.name)


# a family's name as the picker shows it, where its title is too long for the sidebar (the
# title stays in the model card); any other family is shown by its title
FAMILY_SHORT = {
    "trans": "Deterministic",
    "bam": "BAM",
    "probtrans": "ProbTrans (EM)",
    "laplace": "Laplace",
}
LABEL_CHARS = 29  # what the sidebar's picker (206 px, at any window width) shows of a label
# where the plain word makes a label too long ("CoLA · SmolLM2 words · STO")
COMPACT = {
    "trans": "TRANS",
    "sto": "STO",
    "hsto": "H-STO",
    "mcdropout": "MCD",
    "ensemble": "Ensemble",
}


def _short(title: str) -> str:
    """``"MiniLM-L6 (all-MiniLM-L6-v2)"`` -> ``"MiniLM"``: a base's title up to its size."""
    return title.split(" (")[0].split("-")[0]


def display_name(info: CheckpointInfo) -> str:
    """A short label that fits the sidebar: ``"CoLA · H-STO-TRANS"``; a pretrained backbone is
    named: ``"CoLA · MiniLM · BAM"``. The long names are in the model card."""
    spec = TASKS.get(info.task)
    parts = [spec.short if spec else info.task]
    if isinstance(info.training.get("imported"), dict):  # "BertForSequenceClassification"
        arch = str(info.training["imported"].get("architecture", "HF"))
        parts.append(arch.replace("ForSequenceClassification", ""))
    elif backbone_of(info) != "word":
        base = info.training.get("config", {}).get("base")
        words = " words" if zero_shot(info) else ""  # "CR · SmolLM2 words · STO"
        parts.append(_short(BASE_TITLES.get(base, backbone_of(info))) + words)
    parts.append(FAMILY_SHORT.get(info.family) or family_title(info.family))
    if len(" · ".join(parts)) > LABEL_CHARS:  # "CoLA · SmolLM2 · Deterministic": the paper's name
        parts[-1] = COMPACT.get(info.family, parts[-1])
    return " · ".join(parts)


def picker_labels(infos: list[CheckpointInfo]) -> dict[str, str]:
    """Checkpoint name -> its picker label (:func:`display_name`); where two checkpoints would
    read the same, each adds in brackets the part of its name that tells them apart
    (``imdb-sto-t1``, ``imdb-sto-t40``: "(t1)", "(t40)"); an upload is named first, as its
    visitor named it."""
    short = {i.name: display_name(i) for i in infos}
    groups: dict[str, list[str]] = {}
    for name, text in short.items():
        groups.setdefault(text, []).append(name)

    def label(name: str, text: str) -> str:
        if name.startswith(UPLOAD_PREFIX):
            return f"{name} ({text})"
        group = groups[text]
        return text if len(group) == 1 else f"{text} ({_distinct(name, group)})"

    return {name: label(name, text) for name, text in short.items()}


def _distinct(name: str, group: list[str]) -> str:
    """``name`` without the dash-separated words that every name of ``group`` starts with."""
    words = [n.split("-") for n in group]
    common = 0
    while all(len(w) > common + 1 and w[common] == words[0][common] for w in words):
        common += 1
    return "-".join(name.split("-")[common:])


def zero_shot(info: CheckpointInfo) -> bool:
    """A label-word checkpoint (:mod:`uqlab.label_words`): a prompt, nothing trained."""
    return isinstance(info.training.get("prompt"), dict)


def _words(info: CheckpointInfo) -> str:
    words = info.training["prompt"].get("words") or []
    return " / ".join(plain(repr(str(w)[:20])) for w in words[:8])  # a visitor's words: inert


def base_line(info: CheckpointInfo) -> str | None:
    """For the model card: the pretrained base, its package and which layers are stochastic."""
    if backbone_of(info) == "word":
        return None
    base = info.training.get("config", {}).get("base")
    record = info.base or {}
    layers = info.config.get("stochastic_layers")
    where = "every layer" if layers is None else "layer(s) " + ", ".join(map(str, layers))
    imported = info.training.get("imported")
    if isinstance(imported, dict):
        kept = (
            "kept inside the checkpoint"
            if imported.get("base") == "inside"
            else "referenced by the sha256 of its weights"
        )
        return (
            f"Base: the Hugging Face folder {imported.get('folder')} "
            f"({imported.get('architecture')}), every tensor as it is, {kept}; "
            f"noise in {where}."
        )
    if zero_shot(info):
        return (
            f"Base: {BASE_TITLES.get(base, base)}, an instruction decoder asked a question after "
            f"each text; the classes are its answer words {_words(info)} (their next-token "
            f"probabilities, renormalised). Nothing trained; noise in {where}."
        )
    adapters = info.config.get("adapters") or {}
    rank = f", adapters of rank {adapters['rank']}" if "rank" in adapters else ""
    blocks = adapters.get("layers")
    if rank and blocks:
        rank += (
            f" in layers {min(blocks)}-{max(blocks)}"
            if len(blocks) > 1
            else f" in layer {blocks[0]}"
        )
    package = f" ({record['distribution']} {record['version']})" if record else ""
    kind = " (a causal decoder)" if get_backbone(backbone_of(info)).classifier == "decoder" else ""
    return (
        f"Base: {BASE_TITLES.get(base, base)}{kind}{package}{rank}; stochastic attention in "
        f"{where}."
    )


def reading(info: CheckpointInfo) -> str:
    """How many tokens the checkpoint reads a text at, and why: its training length when one
    was recorded (below the position table), else the position table."""
    positions = int(info.config.get("max_len") or 0)
    read = read_length(positions, info.training)
    if zero_shot(info):
        return f"{read} tokens, its prompt included (set when it was made; nothing trained)"
    if read < positions:
        return f"{read} tokens, the length it was trained at (its positions reach {positions})"
    return f"up to {read} tokens"


def lac_scores(metrics: dict | None) -> list[float] | None:
    """The dev split's LAC calibration scores a checkpoint's evaluation stored (for conformal
    sets at any coverage), ascending, or None when it has none or they do not parse
    (:func:`uqlab.catalog.conformal_scores.decode`)."""
    calibration = (metrics or {}).get("conformal_calibration")
    return decode_scores(calibration.get("scores") if isinstance(calibration, dict) else None)


def headline(info: CheckpointInfo) -> str:
    """One line of test metrics for the model card, or why there is none."""
    m = info.metrics
    if not m:
        return (
            "No stored test metrics: the dataset pages (Results, Error analysis, Table 3) "
            "sample it here when you press Compute."
        )
    metric = TASKS[info.task].metric_spec if info.task in TASKS else METRICS["accuracy"]

    def side(name: str) -> str:  # an upload's metrics.json may lack a figure or hold another type
        if None in (number(m, name, f"{metric.name}_mean"), number(m, name, f"{metric.name}_std")):
            return "—"
        return metric_cell(m[name], metric.name, scale=metric.card_scale, unit=metric.card_unit)

    auroc = number(m, "ood_detection", "mutual_information", "auroc")
    text = f"{metric.title}: {DOMAINS['id']} {side('id')}, "
    text += f"{DOMAINS['ood']} {side('ood')} (T = {m.get('samples')})"
    if auroc is None:  # 0.0 is a figure: MI lower on every OOD text than on any ID one
        return text + "."
    text += f"; OOD AUROC (mutual information) {auroc:.3f}"
    equal = matched(m)  # its companion with length held fixed, where measured
    return text + ("." if equal == "—" else f", with lengths matched {equal}.")


def storage_line(info: CheckpointInfo) -> str | None:
    """How the weights are stored and what that costs, from the trainer's check (or None)."""
    s = info.training.get("storage")
    figures = [number(s, k) for k in ("max_abs_log_prob_diff", "examples", "argmax_agreement")]
    if not isinstance(s, dict) or not isinstance(s.get("dtype"), str) or None in figures:
        return None  # none recorded, or not as the trainer writes it (an upload's config.json)
    return (
        f"Stored in {s['dtype']}: predictions within {s['max_abs_log_prob_diff']:.1e} in "
        f"log-probability of the float32 model on {s['examples']} dev texts "
        f"(argmax agreement {s['argmax_agreement']:.1%})."
    )


@dataclass(frozen=True)
class Preset:
    text: str
    label: int
    domain: str  # a display name of uqlab.catalog.tasks.DOMAINS

    @property
    def title(self) -> str:
        short = self.text if len(self.text) <= 70 else self.text[:67] + "…"
        return f"[{self.domain}] {short}"


def presets(task: str) -> tuple[Preset, ...]:
    """Example sentences of ``task`` (:func:`uqlab.catalog.presets.preset_rows`), domains by their
    display names."""
    return tuple(Preset(text, label, DOMAINS[domain]) for text, label, domain in preset_rows(task))
