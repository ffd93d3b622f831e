"""The explorer's glossary (ui.logic.glossary): every unit and acronym of the first screen has one
plain sentence."""

from __future__ import annotations

from ui.logic.glossary import GLOSSARY, glossary_markdown

# what the explorer's first screen shows: the metrics, the sidebar's knobs, the conformal set
# and the model card's scores (issue 34)
ON_SCREEN = (
    "nats",
    "MI",
    "mutual information",
    "entropy",
    "tau1",
    "tau2",
    "noise scale λ",
    "T",
    "p(gold)",
    "LAC",
    "conformal set",
    "MCC",
    "ECE",
    "AUROC",
)


def test_the_glossary_lists_every_term_on_the_first_screen():
    terms = " | ".join(GLOSSARY)
    missing = [t for t in ON_SCREEN if t not in terms]
    assert not missing, missing


def test_each_entry_is_one_plain_sentence():
    for term, text in GLOSSARY.items():
        assert text[0].isupper() and text.endswith(".") and text.count(". ") == 0, term
        assert 40 <= len(text) <= 200, term
        assert "$" not in text and "<" not in text  # markdown shows it as typed
    lines = glossary_markdown().splitlines()
    assert len(lines) == len(GLOSSARY) and all(line.startswith("- **") for line in lines)
