"""The explorer's glossary: one plain sentence for each unit, symbol and acronym its first screen
shows (the metrics, the sidebar's knobs, the conformal set, the model card's scores). One table,
no Streamlit: ``ui.explore_views.glossary`` draws it, tests check it covers the terms on screen."""

from __future__ import annotations

# term as the screen writes it -> one plain sentence for a classroom
GLOSSARY: dict[str, str] = {
    "T": "The number of samples: how many times the sentence goes through the model, each "
    "time with fresh randomness.",
    "p(gold)": "The probability one sample gives the gold (true) label; without a gold label, "
    "the class that the averaged prediction picks.",
    "entropy": "Predictive entropy: how spread the averaged prediction is over the classes, "
    "0 when it is sure, at most ln C for C classes (ln 2 = 0.693 for two).",
    "MI (mutual information)": "The part of the entropy that comes from the samples "
    "disagreeing with each other (model uncertainty): 0 when every sample says the same.",
    "nats": "The unit of entropy and mutual information measured with natural logarithms "
    "(1 nat = 1.44 bits).",
    "tau1": "H-STO's temperature for assigning each key to the learned centroids: low picks "
    "one centroid per key, high blends them.",
    "tau2": "The attention temperature: low makes each token attend to one token, high "
    "spreads its attention evenly over all of them.",
    "noise scale λ": "Multiplies the noise (the attention's, or how far a Laplace model's "
    "weight draws stray): 1 is as trained, 0 switches the noise off so that every sample is "
    "the same.",
    "Laplace": "A Gaussian around a trained model's weights, as wide as the training data "
    "leaves them free; each sample runs the model with one draw of its weights.",
    "LAC / conformal set": "The labels the model cannot rule out at the chosen coverage, by "
    "split-conformal prediction with the LAC score (1 minus a label's probability).",
    "MCC": "Matthews correlation coefficient, CoLA's score: from -1 to 1, 0 is chance, and "
    "it is not fooled by unbalanced labels.",
    "ECE": "Expected calibration error: the average gap between how confident the model is "
    "and how often it is right (0 = perfectly calibrated).",
    "AUROC": "Area under the ROC curve: how well a score (here the mutual information) tells "
    "out-of-domain texts from in-domain ones; 0.5 is chance, 1 is perfect.",
}


def glossary_markdown() -> str:
    """The glossary as a markdown list, one ``**term**: sentence`` line per entry."""
    return "\n".join(f"- **{term}**: {text}" for term, text in GLOSSARY.items())


# the T field of the dataset pages (Results, Error analysis), which is not the sidebar's
PAGE_T_HELP = (
    "Samples per example (paper: 10); the sidebar's Samples T is the explorer's, not this page's."
)
