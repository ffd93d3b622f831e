"""Stochastic Attention Explorer: one page until trained checkpoints ship.

Lists the checkpoints found by ``uqcore.registry`` and runs a library demo on an *untrained* tiny
model: T stochastic samples of one sentence, their class-1 histogram, uncertainty metrics and a
mean attention map. Figures come from :mod:`viz.figures`; all numbers from :mod:`uqcore`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from uqcore.config import FAMILIES, FAMILY_TITLES, ModelConfig
from uqcore.model import build_model
from uqcore.registry import list_checkpoints
from uqcore.runtime import tune_cpu
from uqcore.sampling import Capture, sample
from uqcore.settings import TAU1_FAMILIES, TAU2_FAMILIES, SamplingSettings
from uqcore.stats import mutual_information, predictive_entropy, table3_stats
from uqcore.vocab import Vocab
from viz.figures import attention_heatmap, probability_histogram

st.set_page_config(page_title="Stochastic Attention Explorer", layout="wide")


@st.cache_resource
def _tune_cpu_once() -> dict:
    """Threads and allocator, once per server process (the script reruns on every click)."""
    return tune_cpu(2)


_tune_cpu_once()

DEFAULT_TEXT = "John is tall on several occasions."
SAMPLE_SENTENCES = (
    DEFAULT_TEXT,
    "A great movie with a moving story and fine acting.",
    "The plot was dull and the jokes fell flat.",
    "The book was read by every student in the class.",
    "She said that the weather would be better tomorrow.",
)
MAX_LEN = 64  # tokens the demo model takes, [CLS] included
ENSEMBLE_SIZE = 5


def sig(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` significant digits and no exponent: 0.00041, 0.12, 0."""
    return np.format_float_positional(x, precision=digits, fractional=False, trim="-")


@st.cache_resource(max_entries=16, show_spinner=False)
def demo_model(family: str, vocab_size: int) -> torch.nn.Module:
    """A tiny untrained model with weights from seed 0 (the global RNG is left untouched)."""
    cfg = ModelConfig(
        family=family,
        vocab_size=vocab_size,
        n_layers=2,
        n_heads=4,
        d_model=32,
        d_ff=64,
        max_len=MAX_LEN,
        ensemble_size=ENSEMBLE_SIZE if family == "ensemble" else 1,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return build_model(cfg)


@st.cache_data(max_entries=64, show_spinner=False)
def run_demo(
    family: str, text: str, T: int, seed: int, tau1: float | None, tau2: float | None
) -> dict:
    """Sample the demo model T times on ``text``; plain numpy/python results for caching."""
    vocab = Vocab.build([*SAMPLE_SENTENCES, text], max_size=10_000)
    batch = vocab.encode_batch([text], max_len=MAX_LEN)  # ids [1, L]
    result = sample(
        demo_model(family, len(vocab)),
        batch.ids,
        batch.mask,
        T=T,
        seed=seed,
        settings=SamplingSettings(tau1=tau1, tau2=tau2),
        capture=Capture(layers=(0,), heads=(0,)),
    )
    probs = result.probs.numpy()  # [T, 1, 2]
    stats = table3_stats(probs, np.array([1]))
    return {
        "p1": probs[:, 0, 1],  # [T]
        "mean": float(stats.p_gold_mean[0]),
        "var": float(stats.p_gold_var[0]),
        "n_class1": int(stats.n_correct[0]),
        "entropy": float(predictive_entropy(probs)[0]),
        "mi": float(mutual_information(probs)[0]),
        "attention": result.attention[0][:, 0, 0].mean(0).numpy(),  # [L, L], head 0, mean over T
        "tokens": batch.encodings[0].tokens,
        "n_dropped": batch.encodings[0].n_dropped,
        "stochastic": result.stochastic,
    }


st.title("Stochastic Attention Explorer")
st.write(
    "Transformers whose attention is stochastic give, for one input, a distribution of "
    "predictions and of attention maps instead of a single answer. This app samples them "
    "to show how uncertain a model is and where its attention wavers."
)


def checkpoint_row(c) -> dict:
    """One table row: identity and, when evaluated, accuracy on each side."""
    m = c.metrics or {}

    def acc(side: str) -> str:
        s = m.get(side) or {}
        return f"{100 * s['accuracy_mean']:.2f} ± {100 * s['accuracy_std']:.2f}" if s else "—"

    return {
        "name": c.name, "family": FAMILY_TITLES.get(c.family, c.family), "task": c.task,
        "T": m.get("samples", "—"), "ID accuracy %": acc("id"), "OOD accuracy %": acc("ood"),
        "status": c.error or ("evaluated" if m else "not evaluated"),
    }  # fmt: skip


st.header("Checkpoints")
checkpoints = list_checkpoints()
if not checkpoints:
    st.info(
        "No trained checkpoints in this folder. `python -m uqcore.train` trains a model family "
        "and saves it under `assets/checkpoints/`, where this page lists it."
    )
else:
    st.dataframe(pd.DataFrame(checkpoint_row(c) for c in checkpoints), hide_index=True)
    st.caption(
        "Accuracy: mean ± std over the T sampled runs of `python -m uqcore.evaluate` on the "
        "in-domain test split and the out-of-domain set. The pages that explore these "
        "checkpoints sentence by sentence come next; the demo below uses an untrained model."
    )

st.header("Library demo on an untrained model")
st.warning(
    "**Untrained model:** random weights, so its predictions mean nothing. This demo shows the "
    "sampling machinery only: T forward passes of one sentence, drawn in one batched call from a "
    "reproducible seed, with the uncertainty statistics computed from them."
)

family = st.selectbox(
    "Model family", FAMILIES, index=FAMILIES.index("hsto"), format_func=FAMILY_TITLES.get
)
title = FAMILY_TITLES[family]
with st.form("demo"):
    text = st.text_input("Sentence", value=DEFAULT_TEXT, max_chars=500)
    c1, c2, c3, c4 = st.columns(4)
    T = c1.slider("Samples T", 1, 1000, 50, help="Stochastic forward passes of the sentence.")
    seed = c2.number_input(
        "Seed", 0, 2**31 - 1, 0, step=1, help="Same seed, same samples: runs are reproducible."
    )
    uses_tau1, uses_tau2 = family in TAU1_FAMILIES, family in TAU2_FAMILIES
    tau1 = c3.slider(
        "tau1 (keys → centroids)",
        0.05,
        5.0,
        1.0,
        step=0.05,
        key="tau1",
        disabled=not uses_tau1,
        help="Temperature of the Gumbel-softmax that assigns keys to centroids; lower = harder."
        if uses_tau1
        else f"Disabled: {title} has no centroids; only H-STO-TRANS uses tau1.",
    )
    tau2 = c4.slider(
        "tau2 (attention over values)",
        0.05,
        5.0,
        1.0,
        step=0.05,
        key="tau2",
        disabled=not uses_tau2,
        help="Temperature of softmax((QKᵀ + λ·g) / tau2), the Gumbel-softmax over values; "
        "lower = closer to one-hot samples."
        if uses_tau2
        else f"Disabled: {title} has no Gumbel-softmax attention; "
        "only STO-TRANS and H-STO-TRANS use tau2.",
    )
    if st.form_submit_button("Sample", type="primary"):
        st.session_state.demo_submitted = True

if not st.session_state.get("demo_submitted"):
    st.caption("Press **Sample** to draw T samples of the sentence.")
    st.stop()
# Widgets in a form return their last *submitted* values, so after the first submit, changing
# the family re-samples the submitted sentence and settings with the new family.
request = {
    "family": family,
    "text": text,
    "T": int(T),
    "seed": int(seed),
    "tau1": float(tau1) if uses_tau1 else None,
    "tau2": float(tau2) if uses_tau2 else None,
}

try:
    out = run_demo(**request)
except ValueError as exc:  # every uqcore error (UQError) is a ValueError with a helpful message
    st.error(str(exc))
    st.stop()

taus = "".join(f" · {k} = {request[k]:g}" for k in ("tau1", "tau2") if request[k] is not None)
st.subheader(f"{title} · T = {request['T']} · seed {request['seed']}{taus}")
if out["n_dropped"]:
    st.warning(
        f"The sentence was cut to its first {MAX_LEN - 1} tokens: {out['n_dropped']} dropped."
    )
if family == "ensemble":
    st.info(
        f"A deep ensemble's samples are its {ENSEMBLE_SIZE} members (sample t is member "
        f"t mod {ENSEMBLE_SIZE}), so the seed does not change them."
    )
elif not out["stochastic"]:
    st.info(
        "This family is deterministic: all T samples are identical, so the variance and the "
        "mutual information are 0."
    )

m1, m2, m3, m4 = st.columns(4)
m1.metric(
    "p(class 1), mean ± variance",
    f"{out['mean']:.3f} ± {sig(out['var'])}",
    help="Mean and population variance over the T samples (the paper's Table 3).",
)
m2.metric("Samples predicting class 1", f"{out['n_class1']} / {request['T']}")
m3.metric(
    "Predictive entropy",
    f"{out['entropy']:.4f} nats",
    help="Entropy of the mean prediction: total uncertainty (at most ln 2 ≈ 0.693).",
)
m4.metric(
    "Mutual information",
    f"{sig(out['mi'])} nats",
    help="Predictive entropy minus the mean per-sample entropy: the part due to the model's "
    "own randomness (epistemic).",
)

left, right = st.columns(2)
with left:
    st.plotly_chart(probability_histogram(out["p1"]), width="stretch")
    st.caption(
        "Each sample is one stochastic forward pass (for an ensemble, one member); the spread "
        "shows how much the samples disagree."
    )
with right:
    st.plotly_chart(
        attention_heatmap(
            out["attention"], out["tokens"], "Layer 0, head 0: attention averaged over T"
        ),
        width="stretch",
    )
    st.caption("Row = the token that attends, column = the token attended to; rows sum to 1.")
