"""Exceptions raised by uqcore.

Every message says what is wrong *and* what to do about it, so the app can show it to a
user as is. All of them subclass ``ValueError`` so callers that only know the standard
library still catch them.
"""

from __future__ import annotations


class UQError(ValueError):
    """Base class of every uqcore error."""


class ConfigError(UQError):
    """A model configuration or an inference setting is invalid."""


class InputError(UQError):
    """A text or a batch given to the model cannot be used."""


class CheckpointError(UQError):
    """A checkpoint directory is missing, malformed or does not match its config."""
