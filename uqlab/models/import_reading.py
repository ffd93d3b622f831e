"""How an imported model reads: the length it reads a text at, where that length came from, and
one probe pass showing that it runs at all.

:func:`reading_length` picks the tokens an imported classifier reads a text at, from the first
of: ``--max-len`` (:mod:`uqlab.import_hf`), the task's description (``train_defaults.max_len``
of a task that is not built in: a ``--task-file``), the length an export recorded
(``uq_family.json``, :mod:`uqlab.export_hf`), the folder's ``tokenizer_config.json``
``model_max_length`` (transformers' "no limit", about 1e30, counts as unset), else the model's
positions. Every length is bounded by those positions (a learned table's rows; RoPE's bound
:data:`uqcore.readers.hf_decoder_layouts.ROTARY_MAX_LEN`, or its sliding window): ``--max-len`` past
them is refused, a file's is capped, and the source says so. The checkpoint keeps the length
and its source in ``training.config`` (``max_len``, ``max_len_from``), which
:attr:`uqcore.checkpoint.Checkpoint.read_len` reads and the export writes.

:func:`probe` runs one forward pass of a freshly written checkpoint on :data:`PROBE_TEXT`: a
config that validates but can never run (weights that overflow, a norm that divides by zero)
gives NaN or infinite probabilities on every text, and is refused at import and at upload
instead of on each text afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from uqcore.checkpoint import Checkpoint
from uqcore.exceptions import CheckpointError, UQError
from uqcore.inference.sampling import sample
from uqcore.readers.hf_fields import HFFields
from uqcore.untrusted import read_json_file

TOKENIZER_CONFIG = "tokenizer_config.json"
TOKENIZER_CONFIG_BYTES = 1 << 20  # as an upload's tokenizer_config.json
NO_LIMIT = 10**18  # transformers writes int(1e30) for "no limit"
PROBE_TEXT = "A short probe sentence, read once to show that the model runs."
MIN_LEN = 2


@dataclass(frozen=True)
class ReadingLength:
    """``tokens`` a text is read at (specials included) and ``source``, in words
    (``"--max-len"``, ``"tokenizer_config.json model_max_length 131072, capped at the model's
    8192 positions"``...)."""

    tokens: int
    source: str

    def training(self) -> dict[str, Any]:
        """What the checkpoint keeps in ``training.config``."""
        return {"max_len": self.tokens, "max_len_from": self.source}


def check_max_len(value: Any, positions: int) -> int:
    """``--max-len`` as given: an integer from :data:`MIN_LEN` to the model's ``positions``;
    :class:`CheckpointError` in one line otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_LEN <= value:
        raise CheckpointError(f"--max-len must be an integer >= {MIN_LEN}; got {value!r}.")
    if value > positions:
        raise CheckpointError(
            f"--max-len {value:,} is more than the {positions:,} tokens this model reads at most "
            "(its positions); give at most that."
        )
    return value


def _tokenizer_max(folder: Path) -> int | None:
    """``model_max_length`` of the folder's tokenizer_config.json, None when absent or "no
    limit"; read within the bounds of :mod:`uqcore.untrusted`, typed by :class:`HFFields`."""
    path = folder / TOKENIZER_CONFIG
    if path.is_symlink():
        raise CheckpointError(f"{TOKENIZER_CONFIG} is a link; links are not followed.")
    if not path.is_file():
        return None
    try:
        doc = read_json_file(path, max_bytes=TOKENIZER_CONFIG_BYTES, error=CheckpointError)
    except OSError:
        raise CheckpointError(f"{TOKENIZER_CONFIG} cannot be read; save it again.") from None
    n = HFFields(doc, TOKENIZER_CONFIG).number("model_max_length", low=MIN_LEN, default=None)
    if n is None or n >= NO_LIMIT:
        return None
    if n != int(n):
        raise CheckpointError(
            f"{TOKENIZER_CONFIG}'s model_max_length must be an integer; got {n!r}."
        )
    return int(n)


def _task_max(description: dict | None) -> int | None:
    """``train_defaults.max_len`` of a task description, when it gives one."""
    defaults = (description or {}).get("train_defaults")
    if defaults is None:
        return None
    where = "the task description's train_defaults"
    return HFFields(defaults, where).integer("max_len", low=MIN_LEN, default=None)


def _export_max(side: dict | None) -> int | None:
    """The length an export recorded in ``uq_family.json`` (``training.config.max_len``)."""
    training = (side or {}).get("training")
    if training is None:
        return None
    config = HFFields(training, "uq_family.json's training").section("config")
    return None if config is None else config.integer("max_len", low=MIN_LEN, default=None)


def reading_length(
    folder: Path,
    positions: int,
    *,
    max_len: int | None = None,
    task: dict | None = None,
    side: dict | None = None,
) -> ReadingLength:
    """The tokens an import of ``folder`` reads a text at, and from where (module doc):
    ``max_len`` (``--max-len``), ``task`` (the description of a task that is not built in),
    ``side`` (an export's ``uq_family.json``), the folder's tokenizer config, else
    ``positions`` (the most the model reads)."""
    if max_len is not None:
        return ReadingLength(check_max_len(max_len, positions), "--max-len")
    found = (
        ("the task file's train_defaults.max_len", _task_max(task)),
        ("the export's uq_family.json", _export_max(side)),
        (f"{TOKENIZER_CONFIG} model_max_length", _tokenizer_max(folder)),
    )
    for source, n in found:
        if n is not None:
            if n > positions:
                source = f"{source} {n:,}, capped at the model's {positions:,} positions"
            return ReadingLength(min(n, positions), source)
    return ReadingLength(positions, "the model's positions (none given)")


def probe(ck: Checkpoint) -> None:
    """One forward pass of ``ck`` on :data:`PROBE_TEXT` at its reading length and trained
    settings (one sample, seed 0); :class:`CheckpointError` in one line when the text cannot be
    read at that length or the probabilities are not finite."""
    try:
        enc = ck.vocab.encode(PROBE_TEXT, ck.read_len)
    except UQError as exc:
        raise CheckpointError(
            f"The model cannot read a probe text at {ck.read_len} tokens ({exc}); give a "
            "longer --max-len."
        ) from None
    ids = torch.tensor([enc.ids])  # [1, L]
    mask = torch.ones_like(ids, dtype=torch.bool)
    with torch.no_grad():
        probs = sample(ck.model, ids, mask, 1, seed=0).probs  # [1, 1, C]
    if not bool(torch.isfinite(probs).all()):
        raise CheckpointError(
            "The model gives NaN or infinite probabilities on a probe text: its config and "
            "weights validate but cannot run (check rope_theta, the norms' epsilon and the "
            "weights' scale)."
        )
