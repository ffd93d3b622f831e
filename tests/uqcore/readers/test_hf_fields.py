"""The typed reader of a Hugging Face config.json (uqcore.readers.hf_fields): each read returns the
type and range asked for, or raises CheckpointError in one line naming the field; absent and null
take the default; a huge wrong value is never quoted at length."""

from __future__ import annotations

import math

import pytest

from uqcore.exceptions import CheckpointError
from uqcore.readers.hf_fields import SHOWN_CHARS, HFFields, shown


def _refused(read, *words: str) -> str:
    with pytest.raises(CheckpointError) as err:
        read()
    text = str(err.value)
    assert "\n" not in text and len(text) < 300, text
    for word in words:
        assert word in text, text
    return text


@pytest.mark.parametrize("value", ["4", 4.0, True, 0, -2, [4], {"n": 4}])
def test_an_integer_is_a_json_integer_at_or_above_its_floor(value):
    c = HFFields({"n_head": value})
    _refused(lambda: c.integer("n_head"), "config.json's n_head", "integer >= 1")


def test_an_integer_reads_and_defaults():
    c = HFFields({"a": 7, "b": None})
    assert c.integer("a") == 7 and c.integer("b", default=3) == 3
    assert c.optional_integer("b") is None and c.optional_integer("zz") is None
    assert c.integer("a", low=7) == 7
    _refused(lambda: c.integer("zz"), "lacks zz")


@pytest.mark.parametrize("value", ["abc", [1.0], True, math.inf, -math.inf, math.nan, 0.5, 2e12])
def test_a_number_is_finite_and_in_its_range(value):
    c = HFFields({"rope_theta": value})
    _refused(
        lambda: c.number("rope_theta", low=1.0, high=1e12, low_open=True),
        "rope_theta",
        "a number in (1, 1e+12]",
    )


def test_a_number_reads_ints_and_floats_as_float_and_its_ends():
    c = HFFields({"a": 10000, "b": 0.0, "c": 1.0})
    assert c.number("a", low=1.0, low_open=True) == 10000.0
    assert isinstance(c.number("a", low=1.0), float)
    assert c.number("b", low=0.0, high=1.0, high_open=True) == 0.0
    _refused(lambda: c.number("b", low=0.0, low_open=True), "a number > 0")
    _refused(lambda: c.number("c", low=0.0, high=1.0, high_open=True), "[0, 1)")
    assert c.number("zz", low=0.0, default=None) is None


@pytest.mark.parametrize("value", ["x", 1, 0, [True]])
def test_a_flag_is_true_or_false(value):
    _refused(lambda: HFFields({"attention_bias": value}).flag("attention_bias", False), "true")


def test_text_one_of_and_sections():
    c = HFFields({"act": "relu", "kind": ["silu"], "rope": {"rope_type": 3}, "bad": "yarn"})
    assert c.text("act") == "relu" and c.text("zz", None) is None
    _refused(lambda: c.one_of("act", ("silu",), "SiLU"), "act is 'relu'", "runs SiLU only")
    _refused(lambda: c.one_of("kind", ("silu",), "SiLU"), "['silu']")
    assert c.one_of("zz", ("silu",), "SiLU") == "silu"
    _refused(lambda: c.section("rope").text("rope_type"), "config.json's rope's rope_type")
    _refused(lambda: c.section("bad"), "an object or null")
    assert c.section("zz") is None
    _refused(lambda: HFFields([1, 2]), "must be a JSON object")


def test_a_true_is_not_one_of_the_integers_1_or_0():
    _refused(lambda: HFFields({"x": 1}).one_of("x", (True,), "scaled scores"), "x is 1")
    assert HFFields({"x": True}).one_of("x", (True,), "scaled scores") is True


def test_a_huge_wrong_value_is_never_quoted_at_length():
    assert shown(list(range(10**6))) == "a list of 1,000,000 items"
    assert len(shown("x" * 10**6)) == SHOWN_CHARS
    text = _refused(lambda: HFFields({"n_head": "9" * 10**6}).integer("n_head"), "n_head")
    assert len(text) < 200
