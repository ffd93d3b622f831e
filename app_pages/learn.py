"""Learn: the ideas behind stochastic attention in seven small steps (the seventh: the same
uncertainty in the weights instead), each with a live widget
and a link to the explorer where a trained model shows the same thing (the checkpoint chosen on
dev data: ui.logic.lesson), and a 20-minute lesson plan for a teacher at the top."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import sidebar
from ui.logic import keys as K
from ui.logic.lesson import LINKS, lesson_markdown
from viz import learn

sidebar.page(
    "Learn: why stochastic attention tells you how unsure a model is", needs_checkpoint=False
)


def see(step: str, words: str) -> str:
    """The markdown of a step's link (:data:`ui.logic.lesson.LINKS`): the link, where to look
    and why that checkpoint, each a short sentence (a projector's narrow column)."""
    link = LINKS[step]
    return f"[{words}]({link.url()}): look at {link.look}. {link.why()}"


with st.expander("A 20-minute lesson, for a teacher with a projector"):
    st.markdown(lesson_markdown())


seed = st.number_input("Random seed for this page", 0, 10_000, 0, key=K.LEARN_SEED)
rng = np.random.default_rng(int(seed))

st.header("1. Gumbel noise and the temperature")
st.write(
    "A query scores six tokens. Ordinary attention turns the scores into one distribution "
    "with a softmax. STO-TRANS adds Gumbel noise g to the scores before the softmax, "
    "softmax((s + g) / τ): every forward pass draws a different attention row."
)
st.latex(r"g = -\log(-\log u),\quad u \sim \mathrm{Uniform}(0, 1)")
tau = st.select_slider("Temperature τ", [0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 20.0], 1.0, key=K.L_TAU)
n = st.slider("Samples", 1, 12, 6, key=K.L_N)
st.plotly_chart(learn.gumbel_figure(rng, tau, n), width="stretch")
st.caption(
    "Low τ: each sample picks one token, and which one changes from sample to sample. "
    "High τ: samples flatten toward uniform and agree. "
    + see("gumbel", "See it on a trained model")
)

st.header("2. Soft versus hard samples")
st.write(
    "Hard samples keep only the arg-max, a one-hot row. The arg-max of s + g does not "
    "depend on τ, so in hard mode the temperature changes nothing you can see (it only "
    "shapes training gradients): the app disables the τ sliders for hard checkpoints."
)
st.plotly_chart(learn.hard_figure(rng, n), width="stretch")
st.caption(
    "Over many hard samples, each token is picked with its softmax probability: the "
    "Gumbel-max trick."
)

st.header("3. Keys pulled toward centroids (H-STO-TRANS)")
st.write(
    "H-STO-TRANS first assigns every key to a few centroids with a Gumbel-softmax at "
    "temperature τ1 and replaces the key by that mix of centroids. The centroids are learned "
    "in training, one set per attention head. The mixed key then enters the attention scores "
    "QKᵀ in place of the key: keys that sit between centroids jump between them from sample to "
    "sample, and the attention inherits that uncertainty."
)
tau1 = st.select_slider("τ1", [0.1, 0.3, 1.0, 3.0], 0.3, key=K.L_TAU1)
figure, switched = learn.centroid_figure(rng, tau1)
st.plotly_chart(figure, width="stretch")
moving = ", ".join(f"'{t}'" for t in switched) if switched else "no key"
st.caption(
    f"At τ1 = {tau1:g}, {moving} changed centroid between the 5 samples (red dots: the mixed "
    "keys, labelled with their token in the first sample). Lower τ1 makes each mix nearly one "
    "centroid, so a key either stays or jumps; higher τ1 blends centroids and pulls every key "
    "toward their middle. " + see("centroids", "Centroid view of a trained model")
)

st.header("4. Prior versus posterior attention (Bayesian Attention Modules)")
st.write(
    "BAM treats attention weights as random: a prior computed from the keys alone (which "
    "tokens matter at all), and a posterior for this query whose samples scatter around "
    "its mean. Larger Weibull shape k means tighter samples."
)
k = st.select_slider("Weibull shape k", [2.0, 5.0, 10.0, 30.0], 10.0, key=K.L_K)
st.plotly_chart(learn.bam_figure(rng, k), width="stretch")
st.caption(see("prior", "Prior vs posterior on a trained model"))

st.header("5. Keys that move toward the queries (Probabilistic Transformer)")
st.write(
    "A Probabilistic Transformer treats each key as the centre of a Gaussian and, for every "
    "input, runs a few EM steps before attending: each key moves toward the queries that "
    "attend to it (E: who attends to whom; M: the key moves to their weighted mean), pulled "
    "back to its trained position by the prior precision θ. The trained keys are the prior, "
    "the adapted keys the posterior."
)
c1, c2 = st.columns(2)
steps = c1.slider("EM steps", 0, 10, 3, key=K.L_EM)
theta = c2.select_slider("Prior precision θ", [0.1, 0.5, 1.0, 3.0, 10.0], 1.0, key=K.L_THETA)
st.plotly_chart(learn.em_figure(steps, theta), width="stretch")
st.caption(
    "Small θ: keys follow the queries far (the attention changes a lot); large θ: keys stay "
    "near where training put them. The shipped checkpoints use 3 steps and θ = 1; "
    "the link asks for 10. " + see("em", "Before and after EM on a trained model")
)

st.header("6. Averaging samples: the prediction and its uncertainty")
st.write(
    "Each sample gives class probabilities. Their average is the prediction. If samples "
    "agree, the average is as sharp as each sample; if they disagree, the average is "
    "blurred even though each sample is confident. That disagreement is the mutual "
    "information: predictive entropy minus the average entropy of the samples."
)
spread = st.slider("How much samples disagree", 0.0, 3.0, 1.0, 0.1, key=K.L_SPREAD)
d = learn.disagreement(rng, spread)
c1, c2, c3 = st.columns(3)
c1.metric("mean p(positive)", f"{d['mean']:.3f}")
c2.metric("predictive entropy", f"{d['entropy']:.3f} nats")
c3.metric("mutual information", f"{d['mi']:.3f} nats")
st.plotly_chart(learn.samples_histogram(d["p1"]), width="stretch")
st.caption(see("histogram", f"A real histogram of T = {LINKS['histogram'].view().T} samples"))

st.header("7. Uncertainty in the weights instead of the attention (Laplace)")
st.write(
    "Steps 1-5 put the randomness in the attention. A Laplace approximation puts it in the "
    "weights: around the trained weight w*, a Gaussian as wide as the training data leaves "
    "the weight free, its precision the curvature of the loss H plus a prior precision δ. "
    "Each sample runs the model with one draw of the weight. Here a classifier with one "
    "weight, p(positive | x) = sigmoid(w·x), trained on a few inputs near 0."
)
st.latex(
    r"w \sim \mathcal{N}\!\left(w^*,\ (H + \delta)^{-1}\right),"
    r"\quad H = \sum_n p_n (1 - p_n)\, x_n^2"
)
c1, c2 = st.columns(2)
n_train = c1.slider("Training texts", 2, 200, 20, key=K.L_LAPLACE_N)
prior = c2.select_slider(
    "Prior precision δ", [0.01, 0.1, 1.0, 10.0, 100.0], 1.0, key=K.L_LAPLACE_PRIOR
)
toy = learn.laplace_toy(rng, n_train, prior)
c1, c2, c3 = st.columns(3)
c1.metric("trained weight w*", f"{toy['w']:.2f} ± {toy['std']:.2f}")
c2.metric("MI near the data (x = 1)", f"{toy['mi_near']:.3f} nats")
c3.metric(f"MI far from it (x = {learn.TOY_FAR})", f"{toy['mi_far']:.3f} nats")
st.plotly_chart(learn.laplace_figure(toy), width="stretch")
st.caption(
    "More training texts: a sharper curvature, the draws agree. Far from the data the "
    "draws disagree most. On a transformer the draws move every adapter weight, so the "
    "attention maps move with them. See it beside an attention family on the Compare page "
    "for CR, where cr-minilm-laplace stands next to cr-minilm-hsto; its figures and whether "
    "its uncertainty beats 1 − max p are on the Results page."
)
