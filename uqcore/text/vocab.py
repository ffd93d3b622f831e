"""Word vocabulary, tokenizer and encoding of texts into model inputs.

Ids: ``PAD = 0`` (padding), ``UNK = 1`` (a word not in the vocabulary), ``CLS = 2`` (the
classification token that starts every sequence); real words from 3. The three are distinct, so
[CLS] can be attended and unknown words stay visible (the paper's code shared id 0 for all three).

A :class:`Vocab` is a list of words (word ``i`` has id ``i + 3``); ``len(vocab)`` counts the
specials too and is the model's ``vocab_size``. It is saved as ``vocab.json`` beside the weights.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

from uqcore.exceptions import CheckpointError, InputError
from uqcore.untrusted import check_json

PAD, UNK, CLS = 0, 1, 2
SPECIALS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]")
N_SPECIALS = len(SPECIALS)
VOCAB_FORMAT_VERSION = 1
MAX_WORDS = 2_000_000  # a vocabulary file holding more values is refused before it is parsed

_BR = re.compile(r"<\s*br\s*/?\s*>", re.IGNORECASE)
_TOKEN = re.compile(r"[\w']+|[^\w\s]")  # str patterns are unicode-aware: Arabic, CJK, emoji, ...
_WORD = re.compile(r"[\w']")
_ZWJ, _FLAGS = "\u200d", set(range(0x1F1E6, 0x1F200))  # zero-width joiner, regional indicators


def _glues(prev: str, tok: str) -> bool:
    r"""Whether ``tok``, right after ``prev``, continues the same word or visible character:
    combining marks (Devanagari vowel signs, Arabic harakat, accents) and the letters after them,
    emoji variation selectors, skin tones, ZWJ sequences, flag pairs. ``\w`` alone splits those."""
    c = tok[0]
    if prev[-1] == _ZWJ or c in "\u200d\ufe0e\ufe0f" or 0x1F3FB <= ord(c) <= 0x1F3FF:
        return True
    if unicodedata.category(c)[0] == "M" or (len(prev) == 1 and {ord(prev), ord(c)} <= _FLAGS):
        return True
    return unicodedata.category(prev[-1])[0] == "M" and bool(_WORD.match(prev) and _WORD.match(c))


def tokenize(text: str) -> list[str]:
    r"""Lower-case ``text``, turn HTML line breaks (``<br />``, ``<br/>``, ``<br>``) into spaces and
    split it with ``[\w']+|[^\w\s]``: words (letters, digits, ``_``, ``'``) and single punctuation
    marks or symbols; pieces of one visible character (see :func:`_glues`) are kept together, so an
    emoji or a Hindi / Arabic word is one token. Never raises for a str; ``""`` gives ``[]``."""
    out: list[str] = []
    end = -1
    for m in _TOKEN.finditer(_BR.sub(" ", text.lower())):
        if out and m.start() == end and _glues(out[-1], m.group()):
            out[-1] += m.group()
        else:
            out.append(m.group())
        end = m.end()
    return out


@dataclass(frozen=True)
class Encoding:
    """One text as model input.

    ``ids[0]`` is always ``CLS``; ``tokens`` are display labels aligned with ``ids`` (``"[CLS]"``
    first; an unknown word is shown as itself, its id being ``UNK``); ``is_unknown[i]`` marks those.
    ``n_words`` counts the tokens of the whole text, ``n_dropped`` those cut off because
    ``max_len`` (which counts [CLS]) was too small, and ``truncated == (n_dropped > 0)``.
    ``held``: how many positions at the start and at the end are the template's (a label-word
    prompt's, whose pieces where it meets the text depend on the text); None: the tokenizer's
    fixed ``held`` (or the word-level [CLS]).
    """

    ids: list[int]
    tokens: list[str]
    is_unknown: list[bool]
    n_words: int
    truncated: bool
    n_dropped: int
    held: tuple[int, int] | None = None

    @property
    def n_unknown(self) -> int:
        """Number of kept tokens that are not in the vocabulary."""
        return sum(self.is_unknown)


@dataclass(frozen=True)
class Batch:
    """Encoded texts padded to the longest: ``ids`` LongTensor ``[B, L]`` (``PAD`` after the end),
    ``mask`` BoolTensor ``[B, L]`` (True = real token, [CLS] included), one :class:`Encoding` per
    text."""

    ids: torch.Tensor  # [B, L] int64
    mask: torch.Tensor  # [B, L] bool
    encodings: list[Encoding]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path``, then ``os.replace`` it: readers never see a
    half-written file. Used for every checkpoint file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; checkpoints are shared files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _words_problem(words: object) -> str | None:
    """Why ``words`` cannot be a vocabulary, or None if it can."""
    if not isinstance(words, list | tuple):
        return f"'words' must be a list of strings, got {type(words).__name__}"
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w:
            return f"word #{i} is {w!r}; every word must be a non-empty string"
    counts = Counter(words)
    dups = sorted(w for w, c in counts.items() if c > 1)
    return f"{len(dups)} duplicate word(s): {', '.join(map(repr, dups[:10]))}" if dups else None


class Vocab:
    """An immutable word list: word ``words[i]`` has id ``i + 3``; ids 0-2 are PAD, UNK, CLS.

    Raises :class:`InputError` if ``words`` is not a list of distinct non-empty strings.
    """

    def __init__(self, words: Iterable[str]) -> None:
        words = list(words) if not isinstance(words, str | list | tuple) else words
        problem = _words_problem(words)
        if problem:
            raise InputError(f"Cannot build a vocabulary: {problem}.")
        self._words: tuple[str, ...] = tuple(words)
        self._ids: dict[str, int] = {w: i + N_SPECIALS for i, w in enumerate(self._words)}

    @classmethod
    def build(cls, texts: Iterable[str], max_size: int, min_freq: int = 1) -> Vocab:
        """The ``max_size`` most frequent tokens of ``texts`` seen at least ``min_freq`` times.

        Ties in frequency are broken alphabetically, so the same texts always give the same ids.
        """
        for name, value, low in (("max_size", max_size, 1), ("min_freq", min_freq, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise InputError(f"{name} must be an integer >= {low}, got {value!r}.")
        counts: Counter[str] = Counter()
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"Text #{i} is a {type(text).__name__}, not a str.")
            counts.update(tokenize(text))
        kept = (w for w, c in counts.items() if c >= min_freq)
        ranked = sorted(kept, key=lambda w: (-counts[w], w))
        return cls(ranked[:max_size])

    @property
    def words(self) -> tuple[str, ...]:
        """The real words, in id order (id = index + 3)."""
        return self._words

    def __len__(self) -> int:
        return len(self._words) + N_SPECIALS

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self._words == other._words

    def __repr__(self) -> str:
        return f"Vocab({len(self._words)} words + {N_SPECIALS} specials)"

    def id_of(self, word: str) -> int:
        """The id of ``word`` (an exact token as :func:`tokenize` makes it), ``UNK`` if unknown."""
        return self._ids.get(word, UNK)

    def word_of(self, idx: int) -> str:
        """The word of id ``idx``; specials read ``[PAD]``, ``[UNK]``, ``[CLS]``."""
        if isinstance(idx, torch.Tensor):
            idx = int(idx)
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(self):
            raise InputError(f"Token id {idx!r} is outside the vocabulary (0..{len(self) - 1}).")
        return SPECIALS[idx] if idx < N_SPECIALS else self._words[idx - N_SPECIALS]

    def encode(self, text: str, max_len: int, *, allow_all_unknown: bool = False) -> Encoding:
        """Encode one text as ``[CLS] w1 ... wn`` with at most ``max_len`` ids (``max_len >= 2``).

        Raises :class:`InputError` for a non-str, an empty text, a text without tokens, or (unless
        ``allow_all_unknown``, for evaluating datasets) a text whose kept tokens are all unknown.
        """
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 2:
            raise InputError(
                f"max_len must be an integer >= 2 (it counts [CLS] plus at least one word), "
                f"got {max_len!r}."
            )
        if not isinstance(text, str):
            raise InputError(f"The text must be a str, got {type(text).__name__}; pass a string.")
        if not text.strip():
            raise InputError("The text is empty: type a sentence (for example 'a great movie').")
        words = tokenize(text)
        if not words:
            raise InputError(
                "The text has no words once HTML line breaks are removed: type a sentence."
            )
        keep = words[: max_len - 1]
        ids = [CLS] + [self.id_of(w) for w in keep]
        unknown = [False] + [i == UNK for i in ids[1:]]
        if not allow_all_unknown and all(unknown[1:]):
            cut = any(self.id_of(w) != UNK for w in words[len(keep) :])
            where = (
                f" (its known words come after the first {len(keep)}, cut off by max_len)"
                if cut
                else ""
            )
            raise InputError(
                f"None of the words in the text is in the model's vocabulary of "
                f"{len(self._words)} words{where}; try a sentence with common English words, "
                "e.g. 'the film was great'."
            )
        n_dropped = len(words) - len(keep)
        return Encoding(
            ids=ids,
            tokens=[SPECIALS[CLS]] + keep,
            is_unknown=unknown,
            n_words=len(words),
            truncated=n_dropped > 0,
            n_dropped=n_dropped,
        )

    def encode_batch(
        self, texts: list[str], max_len: int, *, allow_all_unknown: bool = False
    ) -> Batch:
        """Encode ``texts`` with :meth:`encode` and pad them to the longest into a :class:`Batch`.

        An empty list, or any text that :meth:`encode` rejects, raises :class:`InputError` naming
        the text's position.
        """
        if isinstance(texts, str):
            raise InputError("encode_batch takes a list of texts; use encode for a single str.")
        texts = list(texts)
        if not texts:
            raise InputError("No texts to encode: pass at least one sentence.")
        encs = []
        for i, text in enumerate(texts):
            try:
                encs.append(self.encode(text, max_len, allow_all_unknown=allow_all_unknown))
            except InputError as exc:
                if len(texts) == 1:
                    raise
                raise InputError(f"Text #{i} of {len(texts)}: {exc}") from exc
        width = max(len(e.ids) for e in encs)
        ids = torch.full((len(encs), width), PAD, dtype=torch.long)  # [B, L]
        for row, e in enumerate(encs):
            ids[row, : len(e.ids)] = torch.tensor(e.ids, dtype=torch.long)
        return Batch(ids=ids, mask=ids != PAD, encodings=encs)  # mask [B, L]

    def to_dict(self) -> dict:
        """The JSON document written by :meth:`save`."""
        return {
            "format_version": VOCAB_FORMAT_VERSION,
            "specials": list(SPECIALS),
            "words": list(self._words),
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write ``vocab.json`` atomically (temp file + ``os.replace``); return the path."""
        path = Path(path)
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=0).encode())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocab:
        """Read a file written by :meth:`save`; anything else raises :class:`CheckpointError`."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(f"Vocabulary file {path} not found; save it with Vocab.save.")
        try:
            text = path.read_text(encoding="utf-8")
            check_json(text, what=path.name, max_items=MAX_WORDS, error=CheckpointError)
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{path} is not valid UTF-8 JSON ({exc}); re-save it.") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"{path} must hold a JSON object with 'words'.")
        version = data.get("format_version")
        if version != VOCAB_FORMAT_VERSION or isinstance(version, bool):
            raise CheckpointError(
                f"{path} has format_version {version!r}; this uqcore reads vocabulary "
                f"format_version {VOCAB_FORMAT_VERSION} only. Re-save it with this version."
            )
        if data.get("specials") != list(SPECIALS):
            raise CheckpointError(
                f"{path} has specials {data.get('specials')!r}; expected {list(SPECIALS)} "
                "(ids 0, 1, 2). A vocabulary with other special ids cannot be used."
            )
        problem = _words_problem(data.get("words"))
        if problem:
            raise CheckpointError(f"{path}: {problem}. Rebuild the vocabulary and re-save it.")
        return cls(data["words"])
