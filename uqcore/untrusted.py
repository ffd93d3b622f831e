"""One reader for JSON and JSON lines that someone else wrote: an upload, a file on a command line.

Contract: :func:`load_json`, :func:`read_json_file` and :func:`iter_jsonl` either return what the
standard library's parser returns, or raise ``error`` (a :class:`uqcore.exceptions.UQError`, hence a
``ValueError``; :class:`InputError` unless the caller names its own) with one line that names
``what`` (a file name, never a folder of the server) and says what to do. Never a
``RecursionError``, a ``MemoryError`` or a ``UnicodeDecodeError``. In this order, before the
parser allocates anything:

- size: more than ``max_bytes`` bytes is refused unread (a file: never more than that is read);
- encoding: UTF-8 only (a leading byte-order mark is allowed);
- width: more than ``max_items`` values in containers (:data:`MAX_ITEMS`; counted as commas plus
  opening brackets outside strings: an upper bound, so memory stays bounded) is refused;
- depth: ``[`` / ``{`` nested more than ``max_depth`` levels (:data:`MAX_DEPTH`) is refused,
  found by a linear scan of the text with its strings removed (escapes honoured), so a deep
  file never reaches the parser, which recurses once per level;
- constants: ``NaN`` / ``Infinity`` (not JSON) are refused unless ``allow_nan``.

JSON lines (:func:`iter_jsonl`): each line is a document bounded in depth; ``max_items`` and
``max_lines`` bound the whole file. :func:`check_json`: the width and depth checks alone, for a
caller that parses the text itself. Pure: the standard library and :mod:`uqcore.exceptions` only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from uqcore.exceptions import InputError, UQError

MAX_DEPTH = 64  # levels of [ ] / { }: configs and task files use under 8; the parser recurses
MAX_ITEMS = 200_000  # values in one document: a config has hundreds, metrics.json ~5,000

# A string, its escapes honoured; it ends at its closing quote, a newline (never inside a valid
# string: JSON lines stay aligned) or the end. Never backtracks: linear in the text.
_STRING = re.compile(r'"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*(?:"|\\?(?=\n)|\\?\Z)')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_BOM = "\ufeff"


class _Constant(Exception):
    """NaN / Infinity met by the parser (raised through it, turned into ``error``)."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


def _size(n: int) -> str:
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def _text(data: bytes | bytearray | str, what: str, max_bytes: int, error: type[UQError]) -> str:
    """``data`` as text within ``max_bytes`` (a str: its characters are counted)."""
    if len(data) > max_bytes:
        raise error(
            f"{what} is over {_size(max_bytes)}, the most read for it; give a smaller file."
        )
    if isinstance(data, str):
        return data.removeprefix(_BOM)
    try:
        return bytes(data).decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError:
        raise error(f"{what} is not UTF-8 text; save it as UTF-8.") from None


def _too_deep(skeleton: str, max_depth: int) -> bool:
    """Whether the brackets of ``skeleton`` (strings removed) nest deeper than ``max_depth``."""
    opens = skeleton.count("[") + skeleton.count("{")
    if opens <= max_depth:
        return False
    # The parser stops at the first closing bracket without an opening one, so it never reads
    # past the first 2 * opens + 1 brackets: a run of "]" costs nothing.
    brackets = _NOT_BRACKET.sub("", skeleton)[: 2 * opens + 1]
    return any(map(max_depth.__lt__, accumulate(map(_STEP.__getitem__, brackets))))  # C loops


def _items(skeleton: str) -> int:
    """An upper bound of the values inside containers: commas, plus one per container."""
    return skeleton.count(",") + skeleton.count("[") + skeleton.count("{")


def _skeleton(text: str, what: str, max_depth: int, max_items: int, error: type[UQError]) -> str:
    """``text`` without its strings, once the width is checked ("" when the brackets and
    commas of the whole text, strings included, are within both bounds: nothing to scan)."""
    if _items(text) <= max_items and text.count("[") + text.count("{") <= max_depth:
        return ""
    skeleton = _STRING.sub("", text)
    if _items(skeleton) > max_items:
        raise _wide(what, max_items, error)
    return skeleton


def _deep(what: str, max_depth: int, error: type[UQError]) -> UQError:
    return error(
        f"{what} is nested too deeply (over {max_depth} levels of [ ] or {{ }}); it is "
        "not a file this app reads."
    )


def _wide(what: str, max_items: int, error: type[UQError]) -> UQError:
    return error(f"{what} holds more than {max_items:,} values; it is not a file this app reads.")


def _parse(text: str, what: str, allow_nan: bool, error: type[UQError], line: bool = False) -> Any:
    """``json.loads`` with every failure as ``error`` (``line``: ``what`` names a line)."""
    hook = {} if allow_nan else {"parse_constant": _refuse_constant}
    try:
        return json.loads(text, **hook)
    except _Constant as exc:
        raise error(
            f"{what} holds {exc}, which JSON does not allow; write finite numbers."
        ) from None
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if line else f"line {exc.lineno}, column {exc.colno}"
        raise error(f"{what} is not valid JSON ({where}: {exc.msg}); fix or re-save it.") from None
    except ValueError:  # a number of more than 4,300 digits
        raise error(
            f"{what} is not valid JSON (a number too long to read); fix or re-save it."
        ) from None
    except (RecursionError, MemoryError):  # kept out by the bounds; said, should one get past
        raise error(
            f"{what} is too large or too deeply nested to read; it is not a file this app reads."
        ) from None


def check_json(
    text: str,
    *,
    what: str,
    max_depth: int = MAX_DEPTH,
    max_items: int = MAX_ITEMS,
    error: type[UQError] = InputError,
) -> None:
    """Raise ``error`` if the text of one JSON document nests deeper than ``max_depth`` or holds
    more than ``max_items`` values: for a caller that parses it itself, right after."""
    if _too_deep(_skeleton(text, what, max_depth, max_items, error), max_depth):
        raise _deep(what, max_depth, error)


def load_json(
    data: bytes | bytearray | str,
    *,
    what: str,
    max_bytes: int,
    max_depth: int = MAX_DEPTH,
    max_items: int = MAX_ITEMS,
    allow_nan: bool = False,
    error: type[UQError] = InputError,
) -> Any:
    """One JSON document from ``data`` (bytes, or text), within the bounds of the module's
    contract; ``error`` names ``what`` when it cannot be read."""
    text = _text(data, what, max_bytes, error)
    check_json(text, what=what, max_depth=max_depth, max_items=max_items, error=error)
    return _parse(text, what, allow_nan, error)


def read_json_file(
    path: str | Path,
    *,
    max_bytes: int,
    what: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_items: int = MAX_ITEMS,
    allow_nan: bool = False,
    error: type[UQError] = InputError,
) -> Any:
    """:func:`load_json` of the file at ``path`` (``what``: its name by default), of which at
    most ``max_bytes + 1`` bytes are read. ``OSError`` (a missing file...) is the caller's."""
    path = Path(path)
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    return load_json(
        data,
        what=what or path.name,
        max_bytes=max_bytes,
        max_depth=max_depth,
        max_items=max_items,
        allow_nan=allow_nan,
        error=error,
    )


def iter_jsonl(
    data: bytes | bytearray | str,
    *,
    what: str,
    max_bytes: int,
    max_depth: int = MAX_DEPTH,
    max_items: int = MAX_ITEMS,
    max_lines: int | None = None,
    allow_nan: bool = False,
    error: type[UQError] = InputError,
) -> Iterator[tuple[int, Any]]:
    """``(line number, document)`` for each non-blank line of JSON lines ``data``, lines split at
    ``\\n`` only. Size, encoding, ``max_lines`` (non-blank lines), ``max_items`` (values in the
    whole file) and every line's depth are checked before the first line is parsed."""
    text = _text(data, what, max_bytes, error)
    lines = text.split("\n")
    if max_lines is not None and len(lines) > max_lines:
        if sum(1 for s in lines if s.strip()) > max_lines:
            raise error(
                f"{what} has more than {max_lines:,} lines; at most {max_lines:,} here: "
                "sample it down."
            )
    skeleton = _skeleton(text, what, max_depth, max_items, error)
    if skeleton.count("[") + skeleton.count("{") > max_depth:  # strings never cross a newline:
        for n, shape in enumerate(skeleton.split("\n"), start=1):  # its lines are the lines'
            if _too_deep(shape, max_depth):
                raise _deep(f"line {n} of {what}", max_depth, error)
    del skeleton
    for n, line in enumerate(lines, start=1):
        if line.strip():
            yield n, _parse(line, f"line {n} of {what}", allow_nan, error, line=True)
