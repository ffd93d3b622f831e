"""Tokenizer, vocabulary, encoding and vocab.json round trip (uqcore.text.vocab)."""

from __future__ import annotations

import json

import pytest
import torch

from uqcore.exceptions import CheckpointError, InputError
from uqcore.text.vocab import CLS, PAD, UNK, Vocab, tokenize

TEXTS = ["The film was great.", "The plot was bad!", "great great acting"]


@pytest.fixture
def vocab() -> Vocab:
    return Vocab.build(TEXTS, max_size=100)


# ----------------------------------------------------------------------------- tokenize
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Great movie!<br /><br />I LOVED it<br/>ok<BR>end", "great movie ! i loved it ok end"),
        ("Don't stop... now", "don't stop . . . now"),
        ("I ❤️ it 😀👍🏽!", "i ❤️ it 😀 👍🏽 !"),
        ("family 👨\u200d👩\u200d👧 flags 🇫🇷🇩🇪", "family 👨\u200d👩\u200d👧 flags 🇫🇷 🇩🇪"),
        ("مَرْحَبًا بالعالم، كيف حالك؟", "مَرْحَبًا بالعالم ، كيف حالك ؟"),
        ("हिन्दी भाषा।", "हिन्दी भाषा ।"),
        ("שלום עולם", "שלום עולם"),
        ("Cafe\u0301 naïve 日本語です。", "cafe\u0301 naïve 日本語です 。"),
        ("", ""),
        ("   \n\t", ""),
    ],
)
def test_tokenize(text: str, expected: str) -> None:
    assert tokenize(text) == expected.split()


# ----------------------------------------------------------------------------- building
def test_specials_are_distinct_and_words_start_at_3(vocab: Vocab) -> None:
    assert (PAD, UNK, CLS) == (0, 1, 2)
    assert [vocab.word_of(i) for i in range(3)] == ["[PAD]", "[UNK]", "[CLS]"]
    assert len(vocab) == len(vocab.words) + 3
    assert vocab.id_of(vocab.words[0]) == 3
    assert all(vocab.word_of(vocab.id_of(w)) == w for w in vocab.words)
    assert vocab.id_of("zebra") == UNK


def test_build_orders_by_frequency_then_alphabetically() -> None:
    v = Vocab.build(TEXTS, max_size=4)
    # great: 3, the: 2, was: 2 -> then "!" "." "acting" ... with count 1, alphabetically
    assert v.words == ("great", "the", "was", "!")
    assert Vocab.build(list(reversed(TEXTS)), max_size=4) == v
    assert Vocab.build(TEXTS, max_size=100, min_freq=2).words == ("great", "the", "was")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"max_size": 0}, "max_size"), ({"max_size": 5, "min_freq": 0}, "min_freq")],
)
def test_build_rejects_bad_sizes(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        Vocab.build(TEXTS, **kwargs)


def test_constructor_rejects_duplicates_and_non_strings() -> None:
    with pytest.raises(InputError, match="duplicate"):
        Vocab(["a", "b", "a"])
    with pytest.raises(InputError, match="non-empty string"):
        Vocab(["a", 3])
    with pytest.raises(InputError, match="outside the vocabulary"):
        Vocab(["a"]).word_of(4)


# ----------------------------------------------------------------------------- encode
def test_encode_ids_tokens_and_unknown_words(vocab: Vocab) -> None:
    enc = vocab.encode("The FILM was Superb", max_len=16)
    assert enc.ids[0] == CLS
    assert enc.ids[1:] == [vocab.id_of("the"), vocab.id_of("film"), vocab.id_of("was"), UNK]
    assert enc.tokens == ["[CLS]", "the", "film", "was", "superb"]  # unknown shown as itself
    assert enc.is_unknown == [False, False, False, False, True]
    assert enc.n_unknown == 1
    assert (enc.n_words, enc.truncated, enc.n_dropped) == (4, False, 0)


def test_encode_reports_truncation(vocab: Vocab) -> None:
    enc = vocab.encode("the film was great and the plot was bad", max_len=4)
    assert len(enc.ids) == 4 and enc.tokens == ["[CLS]", "the", "film", "was"]
    assert (enc.n_words, enc.truncated, enc.n_dropped) == (9, True, 6)
    exact = vocab.encode("the film was", max_len=4)
    assert (exact.truncated, exact.n_dropped, len(exact.ids)) == (False, 0, 4)


def test_encode_punctuation_only_is_tokens(vocab: Vocab) -> None:
    assert vocab.encode("!!", max_len=8).ids == [CLS, vocab.id_of("!"), vocab.id_of("!")]


@pytest.mark.parametrize(
    ("text", "max_len", "match"),
    [
        (42, 8, "must be a str"),
        (None, 8, "must be a str"),
        ("", 8, "The text is empty: type a sentence"),
        ("   \n ", 8, "The text is empty: type a sentence"),
        ("<br /><br/>", 8, "no words"),
        ("zebra quokka", 8, r"None of the words .* vocabulary of \d+ words; try"),
        ("zebra quokka the", 3, "cut off by max_len"),
        ("the film", 1, "max_len must be an integer >= 2"),
        ("the film", 2.5, "max_len must be an integer >= 2"),
    ],
)
def test_encode_errors(vocab: Vocab, text: object, max_len: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        vocab.encode(text, max_len)  # type: ignore[arg-type]


def test_all_unknown_allowed_on_request(vocab: Vocab) -> None:
    enc = vocab.encode("zebra quokka", 8, allow_all_unknown=True)
    assert enc.ids == [CLS, UNK, UNK] and enc.n_unknown == 2


# ----------------------------------------------------------------------------- batch
def test_encode_batch_pads_and_masks(vocab: Vocab) -> None:
    batch = vocab.encode_batch(["the film", "great acting was bad", "!"], max_len=4)
    assert batch.ids.dtype == torch.long and batch.mask.dtype == torch.bool
    assert batch.ids.shape == batch.mask.shape == (3, 4)
    assert batch.ids[0].tolist() == [CLS, vocab.id_of("the"), vocab.id_of("film"), PAD]
    assert batch.mask.sum(1).tolist() == [3, 4, 2]
    assert (batch.ids[~batch.mask] == PAD).all()
    assert batch.encodings[1].truncated and batch.encodings[1].n_dropped == 1
    assert batch.ids[:, 0].eq(CLS).all()


def test_encode_batch_errors(vocab: Vocab) -> None:
    with pytest.raises(InputError, match="No texts"):
        vocab.encode_batch([], max_len=8)
    with pytest.raises(InputError, match="list of texts"):
        vocab.encode_batch("the film", max_len=8)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="Text #1 of 2: The text is empty"):
        vocab.encode_batch(["the film", " "], max_len=8)


# ----------------------------------------------------------------------------- files
def test_save_load_round_trip(vocab: Vocab, tmp_path) -> None:
    path = vocab.save(tmp_path / "vocab.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == 1 and data["specials"] == ["[PAD]", "[UNK]", "[CLS]"]
    loaded = Vocab.load(path)
    assert loaded == vocab and len(loaded) == len(vocab)
    text = "the film was great"
    assert loaded.encode(text, 8) == vocab.encode(text, 8)
    emoji = Vocab.build(["héllo 😀 مرحبا"], max_size=10)
    assert Vocab.load(emoji.save(tmp_path / "u.json")) == emoji
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves no temp file behind


SPECIALS = ["[PAD]", "[UNK]", "[CLS]"]


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ("{not json", "not valid UTF-8 JSON"),
        ([1, 2], "JSON object"),
        ({"format_version": 99, "specials": SPECIALS, "words": []}, "format_version 99.*version 1"),
        ({"specials": SPECIALS, "words": []}, "format_version None"),
        ({"format_version": 1, "specials": ["[PAD]"], "words": []}, "specials"),
        ({"format_version": 1, "specials": SPECIALS, "words": ["a", "a"]}, "duplicate word"),
        ({"format_version": 1, "specials": SPECIALS, "words": ["a", 1]}, "non-empty string"),
        ({"format_version": 1, "specials": SPECIALS, "words": "abc"}, "list of strings"),
    ],
)
def test_load_rejects_bad_files(tmp_path, doc: object, match: str) -> None:
    path = tmp_path / "vocab.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    with pytest.raises(CheckpointError, match=match):
        Vocab.load(path)


def test_load_missing_file(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="not found"):
        Vocab.load(tmp_path / "nope.json")
