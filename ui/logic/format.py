"""How the app writes numbers: one function per kind of cell, used by every page."""

from __future__ import annotations

import re


def sig(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` significant digits, short: 0.0046, 0.12, 4.1e-06, 0."""
    return "0" if x == 0 else f"{x:.{digits}g}"


def mean_pm_var(mean: float, var: float) -> str:
    """How every page writes a Table 3 pair: ``"0.198 ± 0.0028"``."""
    return f"{mean:.3f} ± {sig(var)}"


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#|<>~:$&])")  # markup anywhere in a line
_LEADING = re.compile(r"^(\s*\d*)([-+=>.)])")  # a list, quote or heading at the start
# What GitHub-flavoured markdown turns into a link without any markup (its autolink literals:
# a scheme, "www." or an e-mail address), matched after the escapes. Streamlit finds them in the
# text *after* the escapes are read, so escaping cannot stop them: a word joiner (U+2060,
# invisible, no line break) between "https" and "://", "www" and ".", a name and "@" does.
_AUTOLINK = re.compile(r"(?i)(?:\b(?:https?|ftp|mailto|www|xmpp)(?=\\?[:.]))|(?=@)")
JOINER = "\u2060"


def plain(text: object) -> str:
    """``text`` with every character that Streamlit's markdown would interpret escaped (links,
    emphasis, headings, HTML, ``:color[...]`` directives, LaTeX) and its bare URLs and e-mail
    addresses broken by an invisible word joiner, so text that came from a visitor (a link, a
    pasted line, an uploaded file's names) shows as typed and is never live markup or a link.
    For markdown only: tables and charts take the text itself (charts:
    :mod:`uqlab.workbench.inert`)."""
    escaped = _MARKDOWN.sub(r"\\\1", str(text)).replace("\n", " ")
    escaped = _LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped)
    return _AUTOLINK.sub(lambda m: m.group(0) + JOINER, escaped)
