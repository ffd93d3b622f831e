"""The label-word prompt record (uqcore.text.prompt): a template with one {text} slot and one
bounded word per class, checked as untrusted data; a checkpoint holding a bad one is refused on load
with a message; WordPiece.prompted puts the prompt around the text as the template."""

from __future__ import annotations

import json

import pytest

from tests.hf_tiny import tiny_causal_lm_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import CheckpointError
from uqcore.readers.base_model import WEIGHTS, BaseRecord, file_sha256
from uqcore.text.prompt import MAX_TEMPLATE_CHARS, MAX_WORD_CHARS, Prompt, prompt_of


def test_a_prompt_splits_at_its_slot_and_round_trips():
    p = Prompt("Q: {text}\nA:", ("no", "yes"))
    assert (p.before, p.after) == ("Q: ", "\nA:")
    assert Prompt.from_dict(p.to_dict(), 2) == p
    assert prompt_of({}, 2) is None


@pytest.mark.parametrize(
    "doc, match",
    [
        ("a string", "an object"),
        ({"template": "no slot", "words": ["a", "b"]}, "exactly once"),
        ({"template": "{text}{text}", "words": ["a", "b"]}, "exactly once"),
        ({"template": "x" * MAX_TEMPLATE_CHARS + "{text}", "words": ["a", "b"]}, "at most"),
        ({"template": 7, "words": ["a", "b"]}, "string"),
        ({"template": "{text}", "words": ["a"]}, "one word per class"),
        ({"template": "{text}", "words": ["a", ""]}, "non-empty"),
        ({"template": "{text}", "words": ["a", "b" * (MAX_WORD_CHARS + 1)]}, "at most"),
        ({"template": "{text}", "words": "ab"}, "one word per class"),
    ],
)
def test_a_bad_prompt_is_refused_with_what_is_wrong(doc, match):
    with pytest.raises(CheckpointError, match=match):
        Prompt.from_dict(doc, 2)


def test_a_checkpoint_with_a_bad_prompt_is_refused_on_load(tmp_path):
    from uqlab.label_words import write_label_words

    folder = tiny_causal_lm_folder(tmp_path / "base")
    record = BaseRecord.for_folder(str(folder), file_sha256(folder / WEIGHTS))
    out = tmp_path / "zs"
    write_label_words(out, folder, record, "cola", Prompt("<s>{text} ?", ("no", "yes")))
    ck = load_checkpoint(out)
    enc = ck.vocab.encode("the cat", 32)
    assert enc.tokens[0] == "<s>" and enc.tokens[-1] == "?" and ck.vocab.held[0] == 1
    doc = json.loads((out / "config.json").read_text())
    doc["training"]["prompt"]["template"] = "no slot"
    (out / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="exactly once"):
        load_checkpoint(out)
