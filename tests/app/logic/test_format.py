"""The one escaper of visitor text (ui.logic.format.plain): never markdown, never a link."""

from __future__ import annotations

import pytest

from ui.logic.format import JOINER, plain


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "[sign in](https://evil.example/a)",
            "\\[sign in\\]\\(https" + JOINER + "\\://evil.example/a\\)",
        ),
        ("see www.evil.example", "see www" + JOINER + ".evil.example"),
        ("mail me@evil.example", "mail me" + JOINER + "@evil.example"),
        ("HTTP://X", "HTTP" + JOINER + "\\://X"),
        ("John is tall.", "John is tall."),
        ("negative", "negative"),
    ],
)
def test_plain_escapes_markup_and_breaks_autolinks(text, shown):
    assert plain(text) == shown
