"""The one typed reader of a Hugging Face ``config.json`` someone else wrote.

A parsed config is a dict of anything: ``n_head: 0``, ``rope_theta: "abc"``, ``sliding_window:
[1]`` or ``model_type: {}`` are valid JSON. Every field a layout reads goes through
:class:`HFFields`, which returns a value of the type and range asked for or raises
:class:`~uqcore.exceptions.CheckpointError` with one line naming the field (``config.json's
n_head``, ``config.json's rope_parameters.rope_type``) and what it must be: never a ``TypeError``,
``ZeroDivisionError`` or ``ValueError`` from arithmetic on a wrong-typed value, and never the
value itself at length (:func:`shown` cuts it to :data:`SHOWN_CHARS`).

Conventions: a field that is absent or ``null`` takes its ``default`` (a required field has
none: :meth:`HFFields.need` names every missing one at once); an integer is a JSON integer
(``4.0``, ``"4"`` and ``true`` are not); a number is an integer or a finite float. Pure: the
standard library and :mod:`uqcore.exceptions` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from uqcore.exceptions import CheckpointError

SHOWN_CHARS = 40  # a wrong value is quoted up to this many characters
_REQUIRED = object()


def shown(value: Any) -> str:
    """``repr(value)`` cut to :data:`SHOWN_CHARS` characters (a value may be a megabyte)."""
    if isinstance(value, dict | list) and len(value) > SHOWN_CHARS:
        return f"a {type(value).__name__} of {len(value):,} items"
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _span(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """``a number > 0``, ``a number in [0, 1)``..."""
    if high == math.inf:
        return f"a number {'>' if low_open else '>='} {low:g}"
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    return f"a number in {left}{low:g}, {high:g}{right}"


class HFFields:
    """Typed reads of the fields of one config object ``doc``; ``where`` names it in messages
    (``config.json``, or ``config.json's rope_parameters`` for a nested object)."""

    def __init__(self, doc: Any, where: str = "config.json") -> None:
        if not isinstance(doc, dict):
            raise CheckpointError(f"{where} must be a JSON object; got {shown(doc)}.")
        self.doc = doc
        self.where = where

    def _name(self, key: str) -> str:
        return f"{self.where}'s {key}"

    def _bad(self, key: str, must: str, value: Any) -> CheckpointError:
        return CheckpointError(f"{self._name(key)} must be {must}; got {shown(value)}.")

    def _get(self, key: str, default: Any) -> Any:
        value = self.doc.get(key)
        if value is None:
            if default is _REQUIRED:
                raise CheckpointError(
                    f"{self.where} lacks {key}; save the model again with save_pretrained."
                )
            return default
        return value

    def need(self, *keys: str) -> None:
        """Raise naming every key of ``keys`` that is absent or null."""
        missing = [k for k in keys if self.doc.get(k) is None]
        if missing:
            raise CheckpointError(
                f"{self.where} lacks {', '.join(missing)}; save the model again with "
                "save_pretrained."
            )

    def integer(self, key: str, *, low: int = 1, default: Any = _REQUIRED) -> int:
        """An integer >= ``low`` (``default`` when absent or null; required without one)."""
        value = self._get(key, default)
        if value is default and default is not _REQUIRED:
            return value
        if not _is_int(value) or value < low:
            raise self._bad(key, f"an integer >= {low}", value)
        return value

    def optional_integer(self, key: str, *, low: int = 1) -> int | None:
        """An integer >= ``low``, or None when absent or null."""
        return self.integer(key, low=low, default=None)

    def number(
        self,
        key: str,
        *,
        low: float,
        high: float = math.inf,
        low_open: bool = False,
        high_open: bool = False,
        default: Any = _REQUIRED,
    ) -> float:
        """A finite number in ``[low, high]`` (``low_open`` / ``high_open``: that end
        excluded), as a float; ``default`` when absent or null."""
        value = self._get(key, default)
        if value is default and default is not _REQUIRED:
            return value
        ok = _is_number(value) and (
            (value > low if low_open else value >= low)
            and (value < high if high_open else value <= high)
        )
        if not ok:
            raise self._bad(key, _span(low, high, low_open, high_open), value)
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        """``true`` or ``false``; ``default`` when absent or null."""
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false", value)
        return value

    def text(self, key: str, default: Any = _REQUIRED) -> Any:
        """A string; ``default`` (which may be None) when absent or null."""
        value = self._get(key, default)
        if value is default and default is not _REQUIRED:
            return value
        if not isinstance(value, str):
            raise self._bad(key, "a string", value)
        return value

    def one_of(self, key: str, allowed: Iterable[Any], runs: str) -> Any:
        """The value of ``key`` (the first of ``allowed`` when absent or null), which must be one
        of ``allowed``: else "the decoder runs ``runs`` only"."""
        allowed = tuple(allowed)
        value = self._get(key, allowed[0])
        if type(value) not in {type(a) for a in allowed} or value not in allowed:
            raise CheckpointError(
                f"{self._name(key)} is {shown(value)}; this app runs {runs} only."
            )
        return value

    def section(self, key: str) -> HFFields | None:
        """The object under ``key`` as a reader of its own, or None when absent or null."""
        value = self.doc.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self._bad(key, "an object or null", value)
        return HFFields(value, self._name(key))
