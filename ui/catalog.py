"""What the app can offer: the checkpoints (grouped by task and family), their model cards,
their trained inference values, and preset sentences per task. No Streamlit here."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from uqcore.config import FAMILY_TITLES
from uqcore.registry import CheckpointInfo
from uqlab.data import load_eval_subset
from uqlab.evaluate import PAPER_TABLE3

TASK_TITLES = {"imdb": "IMDB sentiment", "cola": "CoLA acceptability"}
FAMILY_ORDER = ("trans", "mcdropout", "ensemble", "sto", "hsto", "bam", "bayesformer",
                "probtrans")  # fmt: skip
DEFAULT_LABEL_NAMES = {"imdb": ("negative", "positive"), "cola": ("unacceptable", "acceptable")}


def sort_key(info: CheckpointInfo) -> tuple:
    family = FAMILY_ORDER.index(info.family) if info.family in FAMILY_ORDER else 99
    return (info.task, family, info.name)


def display_name(info: CheckpointInfo) -> str:
    """``"CoLA acceptability · H-STO-TRANS (cola-hsto)"``."""
    task = TASK_TITLES.get(info.task, info.task)
    return f"{task} · {FAMILY_TITLES.get(info.family, info.family)} ({info.name})"


def label_names(info: CheckpointInfo) -> tuple[str, ...]:
    names = info.training.get("label_names")
    if isinstance(names, list | tuple) and names and all(isinstance(n, str) for n in names):
        return tuple(names)
    return DEFAULT_LABEL_NAMES.get(info.task, ("class 0", "class 1"))


def headline(info: CheckpointInfo) -> str:
    """One line of test metrics for the model card, or why there is none."""
    m = info.metrics
    if not m:
        return "Not evaluated yet (`python -m uqlab.evaluate --ckpt " + info.name + "`)."
    key = "mcc" if info.task == "cola" else "accuracy"
    scale, unit = (1, "") if key == "mcc" else (100, " %")

    def side(s: dict) -> str:
        return f"{scale * s[f'{key}_mean']:.2f} ± {scale * s[f'{key}_std']:.2f}{unit}"

    auroc = m.get("ood_detection", {}).get("mutual_information", {}).get("auroc")
    text = f"{key.upper() if key == 'mcc' else 'Accuracy'}: in-domain {side(m['id'])}, "
    text += f"out-of-domain {side(m['ood'])} (T = {m['samples']})"
    return text + (f"; OOD AUROC (mutual information) {auroc:.3f}." if auroc else ".")


def storage_line(info: CheckpointInfo) -> str | None:
    """How the weights are stored and what that costs, from the trainer's check (or None)."""
    s = info.training.get("storage")
    if not isinstance(s, dict):
        return None
    return (f"Stored in {s['dtype']}: predictions within {s['max_abs_log_prob_diff']:.1e} in "
            f"log-probability of the float32 model on {s['examples']} dev texts "
            f"(argmax agreement {s['argmax_agreement']:.1%}).")  # fmt: skip


@dataclass(frozen=True)
class Preset:
    text: str
    label: int
    domain: str  # "in-domain" or "out-of-domain"

    @property
    def title(self) -> str:
        short = self.text if len(self.text) <= 70 else self.text[:67] + "…"
        return f"[{self.domain}] {short}"


@lru_cache(maxsize=4)
def presets(task: str) -> tuple[Preset, ...]:
    """Example sentences of ``task``: the paper's Table 3 sentences for CoLA; for IMDB the
    shortest reviews of the bundled IMDB test sample and CR test set (offline, from assets/)."""
    if task == "cola":
        return tuple(
            Preset(text, label, "in-domain" if domain == "id" else "out-of-domain")
            for text, label, domain in PAPER_TABLE3
        )
    if task == "imdb":
        out = []
        for subset, domain in (("imdb_test_sample", "in-domain"), ("cr_test", "out-of-domain")):
            split = load_eval_subset(subset)
            order = sorted(range(len(split.texts)), key=lambda i: (len(split.texts[i]), i))
            picked = {0: 0, 1: 0}
            for i in order:
                label = int(split.labels[i])
                if picked[label] < 3 and len(split.texts[i]) >= 40:
                    out.append(Preset(split.texts[i], label, domain))
                    picked[label] += 1
        return tuple(out)
    return ()
