"""Exceptions raised by uqcore.

Every message says what is wrong *and* what to do about it, so the app can show it to a
user as is. All of them subclass ``ValueError`` so callers that only know the standard
library still catch them.
"""

from __future__ import annotations

import math


class UQError(ValueError):
    """Base class of every uqcore error."""


class ConfigError(UQError):
    """A model configuration or an inference setting is invalid."""


class InputError(UQError):
    """A text or a batch given to the model cannot be used."""


class CheckpointError(UQError):
    """A checkpoint directory is missing, malformed or does not match its config."""


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as float if it is a finite number > 0, else raise :class:`ConfigError`."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number > 0, got {value!r}.") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}.")
    return v
