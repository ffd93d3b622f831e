"""A label-word prompt: an instruction decoder used as a zero-shot classifier.

A text is put in ``template`` at ``{text}``; class ``c``'s score is the model's next-token logit,
after the whole prompt, of the first token of ``words[c]``; the probabilities are those logits'
softmax (the words' probabilities renormalised over the words). On a decoder classifier that is
a head like any other: its rows are the rows of the language-model head (the tied embedding, for
SmolLM2) at the words' tokens, read at the last token after the final norm. So every family's
noise, the sampler, salience and every view work unchanged on it.

The prompt is part of the input's template (:meth:`uqcore.text.wordpiece.WordPiece.prompted`): kept
whole when a text is cut to the reading length, held (never perturbed) by salience, shown as
the template's tokens are. A checkpoint records it in ``training["prompt"]``
(:meth:`Prompt.to_dict`); it is data (two strings and a word list, bounded here), read from an
untrusted config as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from uqcore.exceptions import CheckpointError

SLOT = "{text}"
MAX_TEMPLATE_CHARS = 2000  # an instruction and a chat format: far less
MAX_WORD_CHARS = 40


@dataclass(frozen=True)
class Prompt:
    """``template`` holds ``{text}`` exactly once; ``words`` one per class, in label order."""

    template: str
    words: tuple[str, ...]

    @property
    def before(self) -> str:
        """What goes before the text."""
        return self.template.split(SLOT)[0]

    @property
    def after(self) -> str:
        """What goes after the text (the chat format's answer turn, say)."""
        return self.template.split(SLOT)[1]

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "words": list(self.words)}

    @classmethod
    def from_dict(cls, doc: Any, n_classes: int) -> Prompt:
        """Check a recorded prompt (a string template with one ``{text}``, within
        :data:`MAX_TEMPLATE_CHARS`; one non-empty word per class, each within
        :data:`MAX_WORD_CHARS`); :class:`CheckpointError` says what is wrong."""
        if not isinstance(doc, dict):
            raise CheckpointError("training.prompt must be an object with template and words.")
        template, words = doc.get("template"), doc.get("words")
        if not isinstance(template, str) or len(template) > MAX_TEMPLATE_CHARS:
            raise CheckpointError(
                f"training.prompt.template must be a string of at most {MAX_TEMPLATE_CHARS} "
                "characters."
            )
        if template.count(SLOT) != 1:
            raise CheckpointError(
                f"training.prompt.template must hold {SLOT} exactly once (where the text goes)."
            )
        if (
            not isinstance(words, list)
            or len(words) != n_classes
            or not all(isinstance(w, str) and 0 < len(w) <= MAX_WORD_CHARS for w in words)
        ):
            raise CheckpointError(
                f"training.prompt.words must list one word per class ({n_classes}), each a "
                f"non-empty string of at most {MAX_WORD_CHARS} characters."
            )
        return cls(template, tuple(words))


def prompt_of(training: dict[str, Any], n_classes: int) -> Prompt | None:
    """The prompt a checkpoint's training record holds, checked; None without one."""
    doc = training.get("prompt") if isinstance(training, dict) else None
    return None if doc is None else Prompt.from_dict(doc, n_classes)
