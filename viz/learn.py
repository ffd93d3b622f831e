"""The Learn page's toy figures: stochastic attention on one query over six tokens, in numpy.

Each step's builder takes the page's ``numpy.random.Generator`` and draws from it in page order
(steps 1 to 5 and 7; step 6, EM, draws nothing), so a seed gives the same pictures; usable from a
notebook (no Streamlit here).
"""

from __future__ import annotations

import numpy as np
import plotly.express as px
import plotly.graph_objects as go

from uqlab.workbench.titles import phone_titles

TOKENS = ["[CLS]", "the", "film", "was", "not", "good"]
LOGITS = np.array([0.5, 0.2, 1.4, 0.3, 1.1, 1.6])  # attention scores of one query
KEYS = np.array([[1.0, 0.2], [0.9, 1.0], [-0.8, 0.9], [-1.0, -0.6], [0.1, -1.0], [0.05, 0.1]])
CENTROIDS = np.array([[1.2, 0.6], [-1.0, 0.2], [0.0, -1.1]])
PRIOR_SCORES = np.array([0.2, -0.5, 0.8, -0.3, 0.6, 0.9])  # BAM: what the keys alone say


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gumbel(rng: np.random.Generator, shape) -> np.ndarray:
    """Gumbel(0, 1) noise, ``-log(-log(u))`` with u kept away from 0 and 1."""
    return -np.log(-np.log(rng.uniform(1e-6, 1 - 1e-6, shape)))


@phone_titles
def heat(z: np.ndarray, y: list[str], title: str, zmax: float = 1.0) -> go.Figure:
    """Rows of attention over :data:`TOKENS`, one labelled row each, values printed."""
    fig = px.imshow(
        z,
        x=TOKENS,
        y=y,
        zmin=0,
        zmax=zmax,
        color_continuous_scale="Blues",
        aspect="auto",
        text_auto=".2f",
    )
    fig.update_layout(
        title=title,
        height=120 + 28 * len(y),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        coloraxis_showscale=False,
    )
    return fig


@phone_titles
def gumbel_figure(rng: np.random.Generator, tau: float, n: int) -> go.Figure:
    """Step 1: the noise-free softmax row above ``n`` rows of softmax((s + g) / tau)."""
    draws = softmax((LOGITS + gumbel(rng, (n, LOGITS.size))) / tau)  # [n, 6]
    rows = ["softmax (no noise)"] + [f"sample {i}" for i in range(n)]
    return heat(np.vstack([softmax(LOGITS), draws]), rows, "Attention rows")


@phone_titles
def hard_figure(rng: np.random.Generator, n: int) -> go.Figure:
    """Step 2: ``n`` one-hot arg-max samples, the share of samples per token, the softmax."""
    hard = np.eye(LOGITS.size)[(LOGITS + gumbel(rng, (n, LOGITS.size))).argmax(1)]  # [n, 6]
    freq = hard.mean(0, keepdims=True)  # [1, 6]
    rows = [f"hard sample {i}" for i in range(n)] + ["share of samples", "softmax"]
    return heat(
        np.vstack([hard, freq, softmax(LOGITS)[None]]), rows, "Hard samples: one token each"
    )


def centroid_figure(
    rng: np.random.Generator, tau1: float, samples: int = 5
) -> tuple[go.Figure, list[str]]:
    """Step 3: 2-D keys, three centroids and the keys replaced by their Gumbel-softmax mix of
    centroids at temperature ``tau1``, ``samples`` times; each mixed key is labelled with its
    token. Also returns the tokens whose nearest centroid changes between the samples."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=CENTROIDS[:, 0],
            y=CENTROIDS[:, 1],
            mode="markers+text",
            name="centroids (learned)",
            text=[f"C{j}" for j in range(len(CENTROIDS))],
            textposition="top center",
            marker={"size": 18, "symbol": "diamond", "color": "#e09f3e"},
        )
    )
    picks = []
    for s in range(samples):
        p = softmax((KEYS @ CENTROIDS.T + gumbel(rng, (len(KEYS), 3))) / tau1)  # [6, 3]
        picks.append(p.argmax(1))
        moved = p @ CENTROIDS  # [6, 2]
        fig.add_trace(
            go.Scatter(
                x=moved[:, 0],
                y=moved[:, 1],
                mode="markers",
                showlegend=s == 0,
                name=f"mixed keys ({samples} samples)",
                text=TOKENS,
                hoverinfo="text",
                marker={"color": "#d1495b", "opacity": 0.5, "size": 8},
            )
        )
        if s == 0:  # the first sample's tokens, one label per place (keys often share a centroid)
            spots, names = label_groups(moved, TOKENS)
            fig.add_trace(
                go.Scatter(
                    x=spots[:, 0],
                    y=spots[:, 1],
                    mode="text",
                    text=names,
                    showlegend=False,
                    textposition=["top left" if x > 0.6 else "top right" for x in spots[:, 0]],
                    textfont={"color": "#d1495b", "size": 10},
                    hoverinfo="skip",
                )
            )
    fig.add_trace(
        go.Scatter(
            x=KEYS[:, 0],
            y=KEYS[:, 1],
            mode="markers+text",
            name="keys",
            text=TOKENS,
            textposition="bottom center",
            marker={"size": 10, "color": "#1f5fbf"},
        )
    )
    fig.update_layout(
        height=420,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.08},  # the plot keeps the width
        xaxis={"range": [-1.6, 1.6]},
        yaxis={"range": [-1.6, 1.6], "scaleanchor": "x"},
    )
    chosen = np.stack(picks)  # [samples, 6]
    switched = [t for j, t in enumerate(TOKENS) if len(set(chosen[:, j])) > 1]
    return fig, switched


LABEL_GAP = 0.15  # points closer than this (axis units) share one label


def label_groups(points: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """One label per place: ``points [n, 2]`` within :data:`LABEL_GAP` of an earlier group's
    first point join its label ("film, was"), so labels of keys mixed onto the same centroid do
    not print over each other. -> ``(spots [g, 2], labels [g])``"""
    spots: list[np.ndarray] = []
    labels: list[list[str]] = []
    for point, name in zip(points, names, strict=True):
        near = [g for g, spot in enumerate(spots) if np.linalg.norm(point - spot) < LABEL_GAP]
        if near:
            labels[near[0]].append(name)
        else:
            spots.append(point)
            labels.append([name])
    return np.array(spots), [", ".join(group) for group in labels]


@phone_titles
def bam_figure(rng: np.random.Generator, k: float, samples: int = 4) -> go.Figure:
    """Step 4: a BAM prior row, the posterior mean and ``samples`` Weibull(k) samples around it."""
    prior = softmax(PRIOR_SCORES)
    post = softmax(LOGITS)
    u = rng.uniform(1e-6, 1 - 1e-6, (samples, LOGITS.size))
    draws = softmax(np.log(post) + np.log(-np.log(u)) / k)  # [samples, 6]
    rows = ["prior", "posterior mean"] + [f"sample {i}" for i in range(samples)]
    return heat(np.vstack([prior, post, draws]), rows, "BAM attention")


QUERIES = np.array([[0.9, 0.7], [0.7, 0.9], [1.0, 0.5], [-0.2, -0.9], [-0.9, 0.4], [0.8, 0.8]])


def em_keys(iterations: int, theta: float, alpha: float = 2.0) -> list[np.ndarray]:
    """Step 6: the keys after 0..``iterations`` EM steps (the library's update,
    ``uqcore.kernels.em``): ``xi_k <- (theta xi_k^0 + alpha sum_i w_ik q_i) /
    (theta + alpha sum_i w_ik)`` with ``w = softmax(alpha q xi^T)``. -> ``[6, 2]`` per step"""
    out, xi = [KEYS], KEYS
    for _ in range(iterations):
        w = softmax(alpha * QUERIES @ xi.T)  # [queries, keys]
        xi = (theta * KEYS + alpha * w.T @ QUERIES) / (theta + alpha * w.sum(0))[:, None]
        out.append(xi)
    return out


@phone_titles
def em_figure(iterations: int, theta: float) -> go.Figure:
    """Step 6: the queries of one input, the trained keys and the path EM moves each key on."""
    path = np.stack(em_keys(iterations, theta))  # [n + 1, 6, 2]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=QUERIES[:, 0],
            y=QUERIES[:, 1],
            mode="markers",
            name="queries",
            marker={"size": 11, "symbol": "x", "color": "#2e8b57"},
        )
    )
    for j in range(len(TOKENS)):
        fig.add_trace(
            go.Scatter(
                x=path[:, j, 0],
                y=path[:, j, 1],
                mode="lines",
                line={"color": "#d1495b", "width": 1},
                showlegend=False,
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=KEYS[:, 0],
            y=KEYS[:, 1],
            mode="markers+text",
            text=TOKENS,
            name="trained keys (prior)",
            textposition="bottom center",
            marker={"size": 10, "color": "#1f5fbf"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=path[-1, :, 0],
            y=path[-1, :, 1],
            mode="markers",
            name=f"keys after {iterations} EM step(s)",
            marker={"size": 10, "color": "#d1495b"},
        )
    )
    fig.update_layout(
        height=420,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.08},  # the plot keeps the width
        xaxis={"range": [-1.6, 1.6]},
        yaxis={"range": [-1.6, 1.6], "scaleanchor": "x"},
    )
    return fig


def binary_entropy(p):
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def disagreement(rng: np.random.Generator, spread: float, samples: int = 200) -> dict:
    """Step 5: ``samples`` values of p(positive) whose logits spread by ``spread``; their mean,
    the predictive entropy of the mean and the mutual information (nats)."""
    z = 1.0 + spread * rng.standard_normal(samples)
    p1 = 1 / (1 + np.exp(-z))  # [samples]
    mean = p1.mean()
    entropy = binary_entropy(mean)
    return {"p1": p1, "mean": mean, "entropy": entropy, "mi": entropy - binary_entropy(p1).mean()}


@phone_titles
def samples_histogram(p1: np.ndarray) -> go.Figure:
    """Step 5: the histogram of p(positive) over the samples."""
    return px.histogram(
        x=p1, nbins=40, range_x=[0, 1], height=300, labels={"x": "p(positive) of one sample"}
    )


TOY_SLOPE = 2.0  # the toy's true p(positive | x) = sigmoid(2 x)
TOY_GRID = np.linspace(-4.0, 4.0, 81)  # where the curves are drawn
TOY_FAR = 3.5  # the input far from the data (the training texts lie in [-1.5, 1.5])


def laplace_toy(rng: np.random.Generator, n: int, prior: float, samples: int = 20) -> dict:
    """Step 7: a one-weight classifier ``p(positive | x) = sigmoid(w x)`` trained on ``n``
    inputs in [-1.5, 1.5] (labels drawn from ``sigmoid(2 x)``), its Laplace posterior
    ``N(w*, 1 / (H + prior))`` with ``H = sum p (1 - p) x^2`` (the GGN, exact here), and
    ``samples`` weight draws. Returns ``x``, ``y``, ``w``, ``std``, the drawn weights, their
    curves ``[samples, grid]`` and the mutual information (nats) near the data (x = 1) and far
    from it (:data:`TOY_FAR`)."""
    x = rng.uniform(-1.5, 1.5, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-TOY_SLOPE * x))).astype(float)
    w = 0.0
    for _ in range(50):  # Newton's method on the penalised log-likelihood (1-D, concave)
        p = 1 / (1 + np.exp(-w * x))
        grad = np.sum((y - p) * x) - prior * w
        hess = np.sum(p * (1 - p) * x**2) + prior
        w += grad / hess
    p = 1 / (1 + np.exp(-w * x))
    std = 1 / np.sqrt(np.sum(p * (1 - p) * x**2) + prior)
    draws = w + std * rng.standard_normal(samples)  # [samples]
    curves = 1 / (1 + np.exp(-np.outer(draws, TOY_GRID)))  # [samples, grid]

    def mi(at: float) -> float:
        q = 1 / (1 + np.exp(-draws * at))
        return float(binary_entropy(q.mean()) - binary_entropy(q).mean())

    return {"x": x, "y": y, "w": w, "std": std, "draws": draws, "curves": curves,
            "mi_near": mi(1.0), "mi_far": mi(TOY_FAR)}  # fmt: skip


@phone_titles
def laplace_figure(toy: dict) -> go.Figure:
    """Step 7: the training points, the curve of each weight draw and of the trained weight."""
    fig = go.Figure()
    for i, curve in enumerate(toy["curves"]):
        fig.add_trace(
            go.Scatter(
                x=TOY_GRID, y=curve, mode="lines", line={"color": "rgba(31,119,180,0.35)"},
                name="one weight draw", showlegend=i == 0, legendgroup="draws",
            )
        )  # fmt: skip
    trained = 1 / (1 + np.exp(-toy["w"] * TOY_GRID))
    fig.add_trace(
        go.Scatter(x=TOY_GRID, y=trained, mode="lines", name="trained weight w*",
                   line={"color": "#e09f3e", "width": 3})
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(x=toy["x"], y=toy["y"], mode="markers", name="training texts",
                   marker={"color": "#333", "size": 8, "symbol": "x"})
    )  # fmt: skip
    fig.add_vline(x=TOY_FAR, line_dash="dot", annotation_text="far from the data")
    fig.update_layout(
        title="Uncertainty in the weights: one curve per draw of w",
        height=360,
        xaxis_title="input x",
        yaxis={"title": "p(positive)", "range": [-0.05, 1.05]},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
