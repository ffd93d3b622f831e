"""The tokenizer wall (uqcore.text.wordpiece) and the published tokenizers (issue 45, items 9 and
3): the Split regexes of Llama 3 and Qwen2 and Llama 2's Metaspace / Prepend / Replace are accepted
as their exact objects, and tokenizers built with them read as transformers'
PreTrainedTokenizerFast; one character more and the pattern is the file's own, refused; the accepted
patterns hold no nested repetition and run in linear time on adversarial text (a generous bound:
figures from ``python -m tools.bench_tokenizers``); BPE dropout and a post-processor of thousands of
special tokens are refused."""

from __future__ import annotations

import json
import re

import pytest

from tests.hf_tiny import CORPUS
from tools.bench_tokenizers import ADVERSARIAL, best_time, components
from uqcore.exceptions import CheckpointError
from uqcore.text.wordpiece import (
    LLAMA3_SPLIT,
    MAX_TEMPLATE_SPECIALS,
    PUBLISHED,
    QWEN2_SPLIT,
    WordPiece,
    check_tokenizer_json,
)

TEXTS = [*CORPUS, "I'LL pay 12345 for it, won't you?\n\nNext  line\t tab", "naïve café 😀 中文"]


def _trained(folder, pre_tokenizer=None, normalizer=None, byte_fallback=False):
    """A small BPE tokenizer.json (trained on CORPUS) with these components, in ``folder``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=byte_fallback))
    tok.pre_tokenizer = pre_tokenizer
    tok.normalizer = normalizer
    alphabet = pre_tokenizers.ByteLevel.alphabet() if not byte_fallback else []
    specials = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256) if byte_fallback]
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials, initial_alphabet=alphabet
    )
    tok.train_from_iterator(CORPUS * 3, trainer)
    tok.save(str(folder / "tokenizer.json"))
    return folder


def _qwen2(folder):
    from tokenizers import Regex, normalizers, pre_tokenizers

    split = pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return _trained(folder, pre_tokenizers.Sequence([split, byte_level]), normalizers.NFC())


def _llama2(folder):
    from tokenizers import normalizers

    legacy = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    return _trained(folder, normalizer=legacy, byte_fallback=True)


def _llama2_metaspace(folder):
    from tokenizers import pre_tokenizers

    meta = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    return _trained(folder, pre_tokenizer=meta, byte_fallback=True)


MAKERS = {"qwen2": _qwen2, "llama2": _llama2, "llama2-metaspace": _llama2_metaspace}


def test_the_accepted_split_patterns_are_exactly_the_published_ones():
    pytest.importorskip("transformers")
    from transformers.models.qwen2 import tokenization_qwen2

    assert tokenization_qwen2.PRETOKENIZE_REGEX == QWEN2_SPLIT
    from tests.llama3 import llama3_tokenizer_dir

    doc = json.loads((llama3_tokenizer_dir() / "tokenizer.json").read_text(encoding="utf-8"))
    split, byte_level = doc["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"]["Regex"] == LLAMA3_SPLIT and split in PUBLISHED["pre_tokenizer"]
    check_tokenizer_json(doc)  # the real file passes the wall whole


@pytest.mark.parametrize("kind", MAKERS)
def test_published_tokenizers_load_and_read_as_transformers(kind, tmp_path):
    tf = pytest.importorskip("transformers")
    folder = MAKERS[kind](tmp_path / kind)
    tok = WordPiece.from_folder(folder, ("<unk>", None, None, "<unk>"))
    ref = tf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    for text in TEXTS:
        assert tok.encode(text, 512).ids == ref(text)["input_ids"], text


def _variant(regex: str) -> dict:
    return {
        "type": "Split",
        "pattern": {"Regex": regex},
        "behavior": "Isolated",
        "invert": False,
    }


@pytest.mark.parametrize(
    "slot, part",
    [
        ("pre_tokenizer", _variant(LLAMA3_SPLIT.replace("{1,3}", "{1,4}"))),  # one char more
        ("pre_tokenizer", _variant(QWEN2_SPLIT + "|x")),
        ("pre_tokenizer", _variant(r"(\w+\s?)+$")),  # backtracks for hours
        ("pre_tokenizer", {**_variant(LLAMA3_SPLIT), "behavior": "Removed"}),
        ("normalizer", {"type": "Replace", "pattern": {"String": " "}, "content": "▁" * 4096}),
        ("normalizer", {"type": "Replace", "pattern": {"Regex": " "}, "content": "▁"}),
        ("normalizer", {"type": "Prepend", "prepend": "x" * 1000}),
        ("decoder", {"type": "Replace", "pattern": {"Regex": "(a+)+$"}, "content": ""}),
    ],
)
def test_any_other_pattern_is_refused_with_a_message(slot, part):
    doc = {"model": {"type": "BPE", "vocab": {}, "merges": []}, slot: part}
    with pytest.raises(CheckpointError, match="is not accepted") as info:
        check_tokenizer_json(doc)
    assert "the published" in str(info.value) and "\n" not in str(info.value)


def test_the_accepted_patterns_hold_no_nested_repetition():
    """The source of catastrophic backtracking is a repeated group that repeats inside; neither
    published regex has one (and the refused backtracking one has)."""
    nested = re.compile(r"\)[*+?{]")  # a group closed and then repeated
    for regex in (LLAMA3_SPLIT, QWEN2_SPLIT):
        assert not nested.search(regex.replace("(?!\\S)", ""))
    assert nested.search(r"(\w+\s?)+$")


N = 10_000
QUICK = (
    "spaces then a letter",
    "space-newline pairs",
    "one digit",
    "apostrophe s",
    "space punctuation",
    "mixed classes",
    "no-break spaces",
)


@pytest.mark.parametrize("name", list(components()))
def test_each_published_component_runs_in_linear_time_on_adversarial_text(name):
    """4x the characters may cost at most 12x the time plus 0.1 s: a quadratic pattern costs 16x
    (and a catastrophic one far more) once it costs anything; the 0.1 s absorbs the machine's
    cache steps (a text of 40,000 characters leaves the CPU's cache: up to x30 measured at
    sizes that take a few milliseconds). Figures: python -m tools.bench_tokenizers."""
    run = components()[name]
    for text in QUICK:
        make = ADVERSARIAL[text]
        small, large = best_time(run, make(N), 3), best_time(run, make(4 * N), 3)
        assert large < 12 * small + 0.1, f"{name} on {text}: {small:.4f} s -> {large:.4f} s"


def test_bpe_dropout_is_refused():
    for dropout in (0.9, 0.1, True, "x"):
        doc = {"model": {"type": "BPE", "vocab": {}, "merges": [], "dropout": dropout}}
        with pytest.raises(CheckpointError, match="dropout"):
            check_tokenizer_json(doc)
    for off in (None, 0, 0.0):
        check_tokenizer_json({"model": {"type": "BPE", "vocab": {}, "merges": [], "dropout": off}})


def test_a_post_processor_of_thousands_of_special_tokens_is_refused():
    def template(n: int, single: int = 2) -> dict:
        specials = {
            f"<t{i}>": {"id": f"<t{i}>", "ids": [i], "tokens": [f"<t{i}>"]} for i in range(n)
        }
        piece = {"SpecialToken": {"id": "<t0>", "type_id": 0}}
        return {
            "type": "TemplateProcessing",
            "single": [piece] * (single - 1) + [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [],
            "special_tokens": specials,
        }

    model = {"type": "BPE", "vocab": {}, "merges": []}
    check_tokenizer_json({"model": model, "post_processor": template(2)})
    for bad in (template(5000), template(MAX_TEMPLATE_SPECIALS + 1), template(2, single=5000)):
        with pytest.raises(CheckpointError, match="post-processor TemplateProcessing"):
            check_tokenizer_json({"model": model, "post_processor": bad})
    seq = {"type": "Sequence", "processors": [{"type": "ByteLevel"}, template(5000)]}
    with pytest.raises(CheckpointError, match="special tokens"):
        check_tokenizer_json({"model": model, "post_processor": seq})
