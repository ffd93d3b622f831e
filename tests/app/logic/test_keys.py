"""The list of session-state keys (ui.logic.keys): every key the app spells is listed, none is
dead."""

from __future__ import annotations

import re
from pathlib import Path

from ui.logic import keys

ROOT = Path(__file__).resolve().parents[3]
FILES = [
    ROOT / "app.py",
    *sorted((ROOT / "ui").rglob("*.py")),
    *sorted((ROOT / "app_pages").glob("*.py")),
]
LITERAL = r"""["']([^"'{}]+)["']"""
PATTERNS = (
    re.compile(r"session_state\[\s*" + LITERAL + r"\s*\]"),  # st.session_state["k"]
    re.compile(r"session_state\.(?:get|pop|setdefault)\(\s*" + LITERAL),  # .get("k"), ...
    re.compile(r"\bkey=" + LITERAL),  # widget keys
)


def _sources() -> dict[Path, str]:
    return {p: p.read_text() for p in FILES if p.name != "keys.py"}


def test_no_file_spells_a_key_as_a_literal() -> None:
    """Every session-state and widget key goes through a ui.logic.keys constant."""
    sample = 'st.session_state["view"]; st.session_state.get("x"); st.slider("a", key="t")'
    assert [m.group(1) for pattern in PATTERNS for m in pattern.finditer(sample)] == [
        "view",
        "x",
        "t",
    ]  # the patterns do find literals
    used = sorted(
        (p.relative_to(ROOT).as_posix(), m.group(1))
        for p, text in _sources().items()
        for pattern in PATTERNS
        for m in pattern.finditer(text)
    )
    assert not used, f"use the ui.logic.keys constants (add new keys there): {used}"


def test_every_listed_key_is_used() -> None:
    """A key nobody reads or writes is dead: remove it from the list (and from the code)."""
    text = "\n".join(_sources().values())
    names = {k: v for k, v in vars(keys).items() if k.isupper() and isinstance(v, str)}

    def spelled(v: str) -> bool:
        if v in keys.PREFIXES:  # used as f"{prefix}{name}"
            return f'f"{v}' in text
        return f'"{v}"' in text or f"'{v}'" in text

    dead = sorted(
        k
        for k, v in names.items()
        if f"K.{k}" not in text and f"keys.{k}" not in text and not spelled(v)
    )
    assert not dead, dead
    assert "res_frames" not in keys.ALL  # the dead one this list replaced


def test_keys_are_unique_and_internal_ones_are_marked() -> None:
    values = [v for k, v in vars(keys).items() if k.isupper() and isinstance(v, str)]
    assert len(values) == len(set(values))
    assert keys.PREFIXES == (keys.FIGURE_PREFIX, keys.WORK_CANCEL, keys.WORK_AGAIN)
    assert not set(keys.PREFIXES) & keys.ALL
    assert set(keys.SIDEBAR) <= keys.ALL
    assert all(not k.startswith("_") for k in keys.SIDEBAR)
