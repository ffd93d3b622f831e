"""Learn: the ideas behind stochastic attention in five small steps, each with a live widget
and a link to the explorer where a trained model shows the same thing."""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from ui import sidebar

sidebar.ensure_router()

TOKENS = ["[CLS]", "the", "film", "was", "not", "good"]
LOGITS = np.array([0.5, 0.2, 1.4, 0.3, 1.1, 1.6])  # attention scores of one query


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gumbel(rng: np.random.Generator, shape) -> np.ndarray:
    return -np.log(-np.log(rng.uniform(1e-6, 1 - 1e-6, shape)))


def explorer(ckpt: str, **extra) -> str:
    state = {"ckpt": ckpt, "text": "John is tall on several occasions.", "label": 0, "T": 100,
             "seed": 0, **extra}  # fmt: skip
    return "/?" + urlencode(state)


def heat(z: np.ndarray, y: list[str], title: str, zmax: float = 1.0) -> go.Figure:
    fig = px.imshow(z, x=TOKENS, y=y, zmin=0, zmax=zmax, color_continuous_scale="Blues",
                    aspect="auto", text_auto=".2f")  # fmt: skip
    fig.update_layout(title=title, height=120 + 28 * len(y), margin={"l": 10, "r": 10, "t": 50,
                      "b": 10}, coloraxis_showscale=False)  # fmt: skip
    return fig


st.title("Learn: why stochastic attention tells you how unsure a model is")
seed = st.number_input("Random seed for this page", 0, 10_000, 0, key="learn_seed")
rng = np.random.default_rng(int(seed))

st.header("1. Gumbel noise and the temperature")
st.write(
    "A query scores six tokens. Ordinary attention turns the scores into one distribution "
    "with a softmax. STO-TRANS adds Gumbel noise g to the scores before the softmax, "
    "softmax((s + g) / τ): every forward pass draws a different attention row."
)
tau = st.select_slider("Temperature τ", [0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 20.0], 1.0, key="l_tau")
n = st.slider("Samples", 1, 12, 6, key="l_n")
draws = softmax((LOGITS + gumbel(rng, (n, LOGITS.size))) / tau)  # [n, 6]
st.plotly_chart(
    heat(
        np.vstack([softmax(LOGITS), draws]),
        ["softmax (no noise)"] + [f"sample {i}" for i in range(n)],
        "Attention rows",
    ),
    width="stretch",
)
st.caption(
    "Low τ: each sample picks one token, and which one changes from sample to sample. "
    "High τ: samples flatten toward uniform and agree. "
    f"[See it on a trained model]({explorer('cola-sto', tau2=0.3)})."
)

st.header("2. Soft versus hard samples")
st.write(
    "Hard samples keep only the arg-max, a one-hot row. The arg-max of s + g does not "
    "depend on τ, so in hard mode the temperature changes nothing you can see (it only "
    "shapes training gradients): the app disables the τ sliders for hard checkpoints."
)
hard = np.eye(LOGITS.size)[(LOGITS + gumbel(rng, (n, LOGITS.size))).argmax(1)]
freq = hard.mean(0, keepdims=True)
st.plotly_chart(heat(np.vstack([hard, freq, softmax(LOGITS)[None]]),
                     [f"hard sample {i}" for i in range(n)] + ["share of samples", "softmax"],
                     "Hard samples: one token each"), width="stretch")  # fmt: skip
st.caption(
    "Over many hard samples, each token is picked with its softmax probability: the "
    "Gumbel-max trick."
)

st.header("3. Keys pulled toward centroids (H-STO-TRANS)")
st.write(
    "H-STO-TRANS first assigns every key to a few learned centroids with a Gumbel-softmax "
    "at temperature τ1 and replaces the key by that mix. Keys that sit between centroids "
    "jump between them from sample to sample: the attention inherits that uncertainty."
)
tau1 = st.select_slider("τ1", [0.1, 0.3, 1.0, 3.0], 0.3, key="l_tau1")
keys = np.array([[1.0, 0.2], [0.9, 1.0], [-0.8, 0.9], [-1.0, -0.6], [0.1, -1.0], [0.05, 0.1]])
cents = np.array([[1.2, 0.6], [-1.0, 0.2], [0.0, -1.1]])
fig = go.Figure()
fig.add_trace(
    go.Scatter(
        x=cents[:, 0],
        y=cents[:, 1],
        mode="markers+text",
        name="centroids",
        text=[f"C{j}" for j in range(3)],
        textposition="top center",
        marker={"size": 18, "symbol": "diamond", "color": "#e09f3e"},
    )
)
for s in range(5):
    p = softmax((keys @ cents.T + gumbel(rng, (len(keys), 3))) / tau1)  # [6, 3]
    moved = p @ cents  # [6, 2]
    fig.add_trace(go.Scatter(x=moved[:, 0], y=moved[:, 1], mode="markers", showlegend=s == 0,
                             name="new keys (5 samples)", marker={"color": "#d1495b",
                             "opacity": 0.5, "size": 8}))  # fmt: skip
fig.add_trace(go.Scatter(x=keys[:, 0], y=keys[:, 1], mode="markers+text", name="keys",
                         text=TOKENS, textposition="bottom center",
                         marker={"size": 10, "color": "#1f5fbf"}))  # fmt: skip
fig.update_layout(
    height=420,
    margin={"l": 10, "r": 10, "t": 30, "b": 10},
    xaxis={"range": [-1.6, 1.6]},
    yaxis={"range": [-1.6, 1.6], "scaleanchor": "x"},
)
st.plotly_chart(fig, width="stretch")
st.caption(
    "The key in the middle ('good') lands on a different centroid in each sample. "
    f"[Centroid view of a trained model]({explorer('cola-hsto')})."
)

st.header("4. Prior versus posterior attention (Bayesian Attention Modules)")
st.write(
    "BAM treats attention weights as random: a prior computed from the keys alone (which "
    "tokens matter at all), and a posterior for this query whose samples scatter around "
    "its mean. Larger Weibull shape k means tighter samples."
)
k = st.select_slider("Weibull shape k", [2.0, 5.0, 10.0, 30.0], 10.0, key="l_k")
prior = softmax(np.array([0.2, -0.5, 0.8, -0.3, 0.6, 0.9]))
post = softmax(LOGITS)
samples = softmax(np.log(post) + np.log(-np.log(rng.uniform(1e-6, 1 - 1e-6, (4, 6)))) / k)
st.plotly_chart(
    heat(
        np.vstack([prior, post, samples]),
        ["prior", "posterior mean"] + [f"sample {i}" for i in range(4)],
        "BAM attention",
    ),
    width="stretch",
)
st.caption(f"[Prior vs posterior on a trained model]({explorer('cola-bam')}).")

st.header("5. Averaging samples: the prediction and its uncertainty")
st.write(
    "Each sample gives class probabilities. Their average is the prediction. If samples "
    "agree, the average is as sharp as each sample; if they disagree, the average is "
    "blurred even though each sample is confident. That disagreement is the mutual "
    "information: predictive entropy minus the average entropy of the samples."
)
spread = st.slider("How much samples disagree", 0.0, 3.0, 1.0, 0.1, key="l_spread")
z = 1.0 + spread * rng.standard_normal(200)
p1 = 1 / (1 + np.exp(-z))  # [200]
mean = p1.mean()


def h(p):
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


c1, c2, c3 = st.columns(3)
c1.metric("mean p(positive)", f"{mean:.3f}")
c2.metric("predictive entropy", f"{h(mean):.3f} nats")
c3.metric("mutual information", f"{h(mean) - h(p1).mean():.3f} nats")
st.plotly_chart(
    px.histogram(
        x=p1, nbins=40, range_x=[0, 1], height=300, labels={"x": "p(positive) of one sample"}
    ),
    width="stretch",
)
st.caption(f"[A real histogram of T = 100 samples]({explorer('cola-hsto')}).")
