"""WordPiece input for BERT-family backbones, through the ``tokenizers`` library (never by hand).

:class:`WordPiece` wraps the ``tokenizer.json`` of a Hugging Face folder and encodes one text as
``[CLS] pieces... [SEP]`` into the same :class:`uqcore.text.vocab.Encoding` the word-level
vocabulary gives, so the sampler, the app and the evaluation treat both alike. A text longer than
``max_len`` keeps its first ``max_len - 2`` pieces (``n_dropped`` says how many were cut); a text
of unknown pieces only still runs (as ``[UNK]``), since the pieces cover every character BERT
normalises to. Display labels: continuation pieces keep BERT's ``##`` prefix (``play ##ing``), the
same on every axis; an unknown piece shows the characters it stands for (``😀``), not ``[UNK]``,
and ``is_unknown`` flags it.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

from uqcore.exceptions import CheckpointError, InputError
from uqcore.text.vocab import Encoding
from uqcore.untrusted import load_json

TOKENIZER_FILE = "tokenizer.json"


BERT_SPECIALS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]")  # (pad, first, last, unknown)
# (pad, first, last, unknown): token names or ids; no unknown (None) for a byte-level BPE
Specials = tuple[str | int, str | int | None, str | int | None, str | int | None]
MAX_TOKENIZER_BYTES = 64 * 2**20  # a tokenizer.json larger than this is refused unread
MAX_TOKENIZER_VALUES = 4_000_000  # ... and one of more values (RoBERTa's: ~200,000)
MAX_ENCODE_CHARS = 100_000  # a longer text is cut before the tokenizer sees it (the app: 20,000)
MAX_WORD_CHARS = 200  # WordPiece's max_input_chars_per_word above this is refused (BERT: 100)
MAX_SEQUENCE_DEPTH = 3  # Sequence components nested deeper than this are refused
MAX_SEQUENCE_ITEMS = 16  # ... and so are Sequences of more components

MAX_TEMPLATE_SPECIALS = 16  # special tokens a post-processor's template names (BERT: 2)
MAX_TEMPLATE_ITEMS = 16  # ... and pieces in its single / pair template (BERT's pair: 5)
MAX_PROMPT_TOKENS = 256  # a label-word prompt's own tokens (the built-in ones: ~30)
MAX_PROMPT_SPECIALS = 16  # ... of which special tokens (SmolLM2's chat format: 3)

# The components of tokenizer.json that BERT / DistilBERT (WordPiece), RoBERTa, GPT-2 and SmolLM
# (byte-level BPE; SmolLM splits digits first) and Llama 2 (Metaspace, byte fallback) ship, plus
# the plain ones around them: no pattern of the file's own (a Split or Replace regex can
# backtrack for hours or panic inside the Rust library), nothing else.
ACCEPTED = {
    "normalizer": (
        "BertNormalizer",
        "Lowercase",
        "NFC",
        "NFD",
        "NFKC",
        "NFKD",
        "StripAccents",
        "Strip",
    ),
    "pre_tokenizer": (
        "BertPreTokenizer",
        "ByteLevel",
        "Digits",
        "Whitespace",
        "WhitespaceSplit",
        "Metaspace",
    ),
    "model": ("WordPiece", "BPE"),
    "post_processor": ("TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel"),
    "decoder": ("WordPiece", "ByteLevel", "BPEDecoder", "Metaspace", "ByteFallback", "Fuse"),
}
# The published components that hold a pattern, accepted only as these exact objects (one
# character more and the pattern is the file's own, refused): the Split regexes of Llama 3 and
# of Qwen2 (their tokenizer.json as saved by tokenizers 0.2x), Llama 2's normalizer (a space
# becomes "▁", one "▁" put first) and decoder. A literal String pattern is a plain search; the
# two regexes are alternations of character classes without nested repetition, each branch
# anchored on a class the next cannot start with, so one pass over a text is linear in it
# (tests/uqcore/text/test_wordpiece_published.py measures it on adversarial text; ``python -m
# tools.bench_tokenizers`` prints the figures).
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_SPLIT = LLAMA3_SPLIT.replace(r"\p{N}{1,3}", r"\p{N}")  # one digit a piece


def _split(regex: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


PUBLISHED = {
    "normalizer": (
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    ),
    "pre_tokenizer": (_split(LLAMA3_SPLIT), _split(QWEN2_SPLIT)),
    "decoder": (
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ),
}
SEQUENCE_KEYS = {
    "normalizer": "normalizers",
    "pre_tokenizer": "pretokenizers",
    "post_processor": "processors",
    "decoder": "decoders",
}


def _refuse(slot: str, kind: object, why: str = "") -> CheckpointError:
    name = slot.replace("_", "-")
    shown = repr(kind)[:60] if not isinstance(kind, str) else kind[:60]
    kinds = sorted({part["type"] for part in PUBLISHED.get(slot, ())})
    published = f", the published {' and '.join(kinds)} exactly" if kinds else ""
    return CheckpointError(
        f"{TOKENIZER_FILE}: the {name} {shown}{why} is not accepted; this app reads the "
        f"{name}s BERT, DistilBERT, RoBERTa, GPT-2, SmolLM, Llama 2 and 3 and Qwen2 ship "
        f"({', '.join(ACCEPTED[slot])}{published}, or none"
        f"{'' if slot == 'model' else ', or a short Sequence of them'}): save the model's own "
        "tokenizer (AutoTokenizer.from_pretrained(...).save_pretrained(folder))."
    )


def _check_component(slot: str, part: object, depth: int = 0) -> None:
    """Refuse ``part`` (one component of ``slot``) unless it is an accepted type."""
    if part is None and slot != "model":
        return
    if not isinstance(part, dict):
        raise _refuse(slot, type(part).__name__, " (not an object)")
    kind = part.get("type")
    if slot == "model" and kind is None:  # files of tokenizers < 0.10 name no model type
        kind = (
            "BPE"
            if "merges" in part
            else "WordPiece"
            if "max_input_chars_per_word" in part
            else None
        )
    if kind == "Sequence" and slot in SEQUENCE_KEYS:
        items = part.get(SEQUENCE_KEYS[slot])
        if depth >= MAX_SEQUENCE_DEPTH:
            raise _refuse(slot, kind, f" nested {depth + 1} deep (at most {MAX_SEQUENCE_DEPTH})")
        if not isinstance(items, list) or len(items) > MAX_SEQUENCE_ITEMS:
            raise _refuse(slot, kind, f" (not a list of at most {MAX_SEQUENCE_ITEMS})")
        for item in items:
            _check_component(slot, item, depth + 1)
        return
    if part in PUBLISHED.get(slot, ()):
        return  # exactly as Llama 2 / Llama 3 / Qwen2 publish it
    if kind not in ACCEPTED[slot]:
        why = " (a pattern of the file's own)" if kind in ("Split", "Replace") else ""
        raise _refuse(slot, kind, why)
    if kind == "BPE" and slot == "model":
        dropout = part.get("dropout")
        if dropout is not None and (isinstance(dropout, bool) or dropout != 0):
            raise _refuse(
                slot,
                kind,
                f" with dropout {dropout!r} (BPE dropout draws a random tokenization on every "
                "read, so the same text would give other numbers: set it to null)",
            )
    if kind == "TemplateProcessing":
        _check_template(part)
    if kind == "WordPiece" and slot == "model":
        limit = part.get("max_input_chars_per_word", 100)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_WORD_CHARS:
            raise _refuse(
                slot, kind, f" with max_input_chars_per_word {limit!r} (at most {MAX_WORD_CHARS})"
            )


def _check_template(part: dict) -> None:
    """A post-processor's template: at most :data:`MAX_TEMPLATE_SPECIALS` special tokens of at
    most as many ids each, single and pair templates of at most :data:`MAX_TEMPLATE_ITEMS`
    pieces (every text is read with them: 5,000 would leave no room for the text)."""
    specials = part.get("special_tokens", {})
    items = [part.get("single", []), part.get("pair", [])]
    sized = isinstance(specials, dict | list) and all(isinstance(t, list) for t in items)
    if not sized or len(specials) > MAX_TEMPLATE_SPECIALS:
        raise _refuse(
            "post_processor",
            "TemplateProcessing",
            f" with {f'{len(specials):,}' if sized else 'unreadable'} special tokens (at most "
            f"{MAX_TEMPLATE_SPECIALS})",
        )
    values = specials.values() if isinstance(specials, dict) else specials
    ids = [v.get("ids") if isinstance(v, dict) else None for v in values]
    if any(not isinstance(i, list) or len(i) > MAX_TEMPLATE_ITEMS for i in ids) or any(
        len(t) > MAX_TEMPLATE_ITEMS for t in items
    ):
        raise _refuse(
            "post_processor",
            "TemplateProcessing",
            f" with a template or special token of more than {MAX_TEMPLATE_ITEMS} pieces",
        )


def check_tokenizer_json(doc: object) -> None:
    """Refuse a ``tokenizer.json`` document (parsed) with any component outside
    :data:`ACCEPTED`: a :class:`CheckpointError` names the component and what is accepted.

    Every folder goes through this (uploads, an operator's Hugging Face folders, and the
    installed base package, which passes): a tokenizer is untrusted input, and this allow-list
    is the real defence: a pattern that backtracks runs inside Rust, where no Python time
    limit can interrupt it."""
    if not isinstance(doc, dict):
        raise CheckpointError(
            f"{TOKENIZER_FILE} is not a JSON object; save the model's own "
            "tokenizer with save_pretrained."
        )
    for slot in ACCEPTED:
        _check_component(slot, doc.get(slot))


def _check_loaded(tokenizer) -> None:
    """The model the library built is the one the document was checked as (a file that names
    no model type is read by trying each)."""
    kind = type(tokenizer.model).__name__
    if kind not in ACCEPTED["model"]:
        raise _refuse("model", kind)


def guarded_encode(tokenizer, text: str, add_special_tokens: bool = True):
    """``tokenizer.encode(text, add_special_tokens=...)``, its failures as :class:`InputError`:
    an exception of the
    library, and a Rust panic (``pyo3_runtime.PanicException``, a ``BaseException`` that
    Streamlit does not catch, so the page would spin forever). KeyboardInterrupt and SystemExit
    pass through. Defence in depth only: a catastrophically backtracking pattern is not a
    panic, and a Rust call cannot be interrupted by a Python time limit; the allow-list of
    :func:`check_tokenizer_json` keeps such patterns out."""
    try:
        return tokenizer.encode(text, add_special_tokens=add_special_tokens)
    except Exception as exc:  # tokenizers raises its own exception types
        raise InputError(
            f"The tokenizer could not read this text ({str(exc)[:160]}); try "
            "another text or another checkpoint."
        ) from None
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise InputError(
            f"The tokenizer crashed on this text ({str(exc)[:160]}); this "
            "checkpoint's tokenizer.json is faulty: use another checkpoint."
        ) from None


class WordPiece:
    """A subword tokenizer of a Hugging Face folder (BERT's WordPiece, RoBERTa's and SmolLM's
    byte-level BPE): ``len()`` is its vocabulary size; ``pad_id``, ``cls_id`` (the first token:
    BERT's ``[CLS]``, RoBERTa's ``<s>``, SmolLM2's ``<|im_start|>``), ``sep_id`` (the last) and
    ``unk_id`` (-1: none) are its special ids, named or numbered by ``specials`` (the backbone's
    layout, or a decoder folder's config:
    :func:`uqcore.readers.decoder_weights.decoder_specials`)."""

    def __init__(self, tokenizer, specials: Specials = BERT_SPECIALS) -> None:
        tokenizer.no_truncation()  # we cut ourselves, so the [SEP] stays and n_dropped is known
        tokenizer.no_padding()
        self._tok = tokenizer
        ids = {
            str(name): name
            if isinstance(name, int) or name is None
            else tokenizer.token_to_id(name)
            for name in specials
        }
        size = tokenizer.get_vocab_size()
        missing = [
            name
            for name, i in ids.items()
            if (i is None and name != "None") or (i is not None and not 0 <= i < size)
        ]
        if missing:
            raise CheckpointError(
                f"The tokenizer has no {', '.join(missing)} token; this model's tokenizer needs "
                f"{', '.join(map(str, specials))} (save the model's own tokenizer with "
                "save_pretrained)."
            )
        self.pad_id, self.cls_id, self.sep_id, unk = (
            name if isinstance(name, int) or name is None else ids[name] for name in specials
        )  # a decoder may have no first or last token (None)
        self.unk_id = -1 if unk is None else unk  # byte-level BPE has no unknown piece
        self._byte_level = specials != BERT_SPECIALS  # RoBERTa: "Ġ" marks a leading space
        self._template: tuple[list[int], list[str], list[int], list[str]] | None = None
        self._prompt: tuple[str, str] | None = None  # a label-word prompt (prompted)

    def template(self) -> tuple[list[int], list[str], list[int], list[str]]:
        """``(ids, labels)`` the tokenizer's own template puts before the pieces, then after
        them, found once by encoding a probe with and without it: BERT ``[CLS]`` / ``[SEP]``,
        RoBERTa ``<s>`` / ``</s>``, Llama ``<s>`` / nothing, GPT-2 and Qwen2 nothing."""
        if self._template is None:
            full = guarded_encode(self._tok, "a")
            bare = guarded_encode(self._tok, "a", add_special_tokens=False).ids
            n = len(bare)
            at = next(
                (i for i in range(len(full.ids) - n + 1) if full.ids[i : i + n] == bare), None
            )
            if not n or at is None:
                raise InputError(
                    "This tokenizer's template changes the text's own pieces; save the "
                    "model's own tokenizer (save_pretrained) and import it again."
                )
            labels = list(full.tokens)
            self._template = (
                list(full.ids[:at]),
                labels[:at],
                list(full.ids[at + n :]),
                labels[at + n :],
            )
        return self._template

    def pieces(self, text: str) -> tuple[list[int], list[str]]:
        """``(ids, labels)`` of ``text``'s pieces without the template (special tokens written
        in it, such as ``<|im_start|>``, are read as themselves); labels as :meth:`encode`
        shows them."""
        enc = guarded_encode(self._tok, text, add_special_tokens=False)
        return list(enc.ids), self._labels(enc.tokens)

    def _labels(self, tokens) -> list[str]:
        """Pieces as a reader sees them: a byte-level BPE's ``Ġ`` (a leading space) dropped,
        its ``Ċ`` / ``ĉ`` (the bytes of a newline and a tab: never typed characters there)
        shown as ``↵`` / ``⇥``."""
        if not self._byte_level:
            return list(tokens)
        out = [t[1:] if t.startswith("Ġ") and len(t) > 1 else t for t in tokens]
        return [t.replace("Ċ", "↵").replace("ĉ", "⇥") for t in out]

    def prompted(self, before: str, after: str, read_len: int | None = None) -> WordPiece:
        """This tokenizer with ``before`` and ``after`` (a label-word prompt,
        :mod:`uqcore.text.prompt`) as its template instead of its own: :meth:`encode` then reads
        ``before + text + after`` as the tokenizer reads that whole string (the pieces where
        the text meets the prompt are the tokenizer's, not those of each part alone: the
        ``"\\n\\n"`` before a text is two pieces there, one alone); the prompt's pieces are
        kept whole when a text is cut and held by salience, as ``[CLS]`` / ``[SEP]`` are.
        :meth:`template` and :attr:`held` give the prompt's parts encoded alone.

        :class:`CheckpointError` for a prompt of more than :data:`MAX_PROMPT_TOKENS` tokens,
        more than :data:`MAX_PROMPT_SPECIALS` special tokens, or (``read_len``, the reading
        length) one that leaves no room for a text: every text would fail."""
        out = copy.copy(self)
        first, first_labels = self.pieces(before) if before else ([], [])
        last, last_labels = self.pieces(after) if after else ([], [])
        n = len(first) + len(last)
        specials = set(self.special_ids())
        n_special = sum(i in specials for i in (*first, *last))
        if n > MAX_PROMPT_TOKENS or n_special > MAX_PROMPT_SPECIALS:
            raise CheckpointError(
                f"The label-word prompt is {n:,} tokens, {n_special:,} of them special; a "
                f"prompt may hold at most {MAX_PROMPT_TOKENS} tokens and {MAX_PROMPT_SPECIALS} "
                "special tokens: shorten its template."
            )
        if read_len is not None and n >= read_len:
            raise CheckpointError(
                f"The label-word prompt is {n} tokens, which leaves no room for a text at the "
                f"reading length {read_len}: shorten the template or read longer texts."
            )
        out._template = (first, first_labels, last, last_labels)
        out._prompt = (before, after)
        return out

    def special_ids(self) -> list[int]:
        """The ids of the tokenizer's special added tokens, ascending (a byte-level BPE's
        ``<|endoftext|>``, ``<|im_start|>``...; BERT's ``[CLS]``, ``[PAD]``...)."""
        added = self._tok.get_added_tokens_decoder()
        return sorted(i for i, token in added.items() if token.special)

    @property
    def held(self) -> tuple[int, int]:
        """How many positions the template holds before and after the pieces."""
        before, _, after, _ = self.template()
        return len(before), len(after)

    @classmethod
    def from_folder(
        cls, folder: str | os.PathLike, specials: Specials = BERT_SPECIALS
    ) -> WordPiece:
        """Load ``folder/tokenizer.json``; :class:`CheckpointError` if missing, a link, over
        :data:`MAX_TOKENIZER_BYTES`, unreadable, or holding a component outside the allow-list
        of :func:`check_tokenizer_json` (checked before the library builds anything)."""
        from tokenizers import Tokenizer  # late: only BERT-family checkpoints need it

        path = Path(folder) / TOKENIZER_FILE
        if path.is_symlink():
            raise CheckpointError(
                f"{TOKENIZER_FILE} is a link; links are not followed: copy the file in."
            )
        if not path.is_file():
            raise CheckpointError(
                f"No {TOKENIZER_FILE} in the model folder: save the model's fast tokenizer there "
                "(AutoTokenizer.from_pretrained(...).save_pretrained(folder)); a base package's "
                "folder lacking it is incomplete: reinstall the package."
            )
        if path.stat().st_size > MAX_TOKENIZER_BYTES:
            raise CheckpointError(
                f"{TOKENIZER_FILE} is over {MAX_TOKENIZER_BYTES >> 20} MB; "
                "that is not a tokenizer this app reads."
            )
        try:
            text = path.read_text(encoding="utf-8")
            doc = load_json(
                text,
                what=TOKENIZER_FILE,
                max_bytes=MAX_TOKENIZER_BYTES,
                max_items=MAX_TOKENIZER_VALUES,
                error=CheckpointError,
            )
        except CheckpointError:  # uqcore.untrusted's bounds: too deep, too many values...
            raise
        except (OSError, ValueError, RecursionError) as exc:
            raise CheckpointError(
                f"{TOKENIZER_FILE} is not readable JSON ({str(exc)[:200]})."
            ) from None
        check_tokenizer_json(doc)
        try:
            tok = Tokenizer.from_str(text)
            _check_loaded(tok)
        except CheckpointError:
            raise
        except Exception as exc:  # tokenizers raises its own exception type
            raise CheckpointError(
                f"{TOKENIZER_FILE} is not a readable tokenizer ({str(exc)[:200]})."
            ) from None
        return cls(tok, specials)

    def __len__(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str, max_len: int, *, allow_all_unknown: bool = True) -> Encoding:
        """The tokenizer's template around the text's pieces (``[CLS] pieces [SEP]`` for BERT,
        ``<s> pieces`` for Llama, the pieces alone for GPT-2), at most ``max_len`` ids: the
        first pieces are kept and the template stays whole.

        Raises :class:`InputError` for a non-str, an empty text, a text without pieces or a
        ``max_len`` with no room for a piece. ``allow_all_unknown`` is accepted for the
        word-level vocabulary's signature: a text of unknown pieces always runs here. Only the
        first :data:`MAX_ENCODE_CHARS` characters are read (``n_words`` counts their pieces;
        far more than ``max_len``); a failure inside the tokenizer, a Rust panic included, is
        an :class:`InputError` (:func:`guarded_encode`).
        """
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 1:
            raise InputError(f"max_len must be a positive integer, got {max_len!r}.")
        if not isinstance(text, str):
            raise InputError(f"The text must be a str, got {type(text).__name__}; pass a string.")
        if not text.strip():
            raise InputError("The text is empty: type a sentence (for example 'a great movie').")
        text = text[:MAX_ENCODE_CHARS]  # [CLS] + 510 pieces need far fewer characters
        if self._prompt is not None:
            return self._encode_prompted(text, max_len)
        before, before_labels, after, after_labels = self.template()
        room = max_len - len(before) - len(after)
        if room < 1:
            raise InputError(
                f"max_len {max_len} leaves no room for a piece beside the tokenizer's "
                f"{len(before) + len(after)} special tokens."
            )
        enc = guarded_encode(self._tok, text, add_special_tokens=False)
        ids, tokens = list(enc.ids), self._labels(enc.tokens)  # the pieces alone ("Ġword": word)
        for i, (start, end) in enumerate(enc.offsets):  # [UNK] -> the characters it replaced
            if ids[i] == self.unk_id and 0 <= start < end:
                tokens[i] = text[start:end][:24]
        pieces = len(ids)
        if pieces < 1:
            raise InputError("The text has no characters the tokenizer reads: type a sentence.")
        keep = min(pieces, room)
        ids = before + ids[:keep] + after
        tokens = before_labels + tokens[:keep] + after_labels
        unknown = [i == self.unk_id for i in ids]
        return Encoding(
            ids=ids,
            tokens=tokens,
            is_unknown=unknown,
            n_words=pieces,
            truncated=keep < pieces,
            n_dropped=pieces - keep,
        )

    def _whole(self, before: str, text: str, after: str) -> tuple[object, int, int]:
        """The tokenizer's encoding of ``before + text + after`` and how many of its pieces
        come before the text's and after them: a piece is the text's when its characters
        overlap the text's (one that straddles the boundary included)."""
        enc = guarded_encode(self._tok, before + text + after, add_special_tokens=False)
        start, end = len(before), len(before) + len(text)
        inside = [(s < end and e > start) or (s == e and start <= s < end) for s, e in enc.offsets]
        if True not in inside:
            raise InputError("The text has no characters the tokenizer reads: type a sentence.")
        first = inside.index(True)
        last = len(inside) - inside[::-1].index(True)
        return enc, first, len(inside) - last

    def _encode_prompted(self, text: str, max_len: int) -> Encoding:
        """:meth:`encode` of a prompted tokenizer: the whole prompt string read at once (see
        :meth:`prompted`). A text too long for ``max_len`` is cut after its first pieces that
        fit: the prompt around the text's characters up to the end of the last piece kept,
        read again as one string (where the cut text meets the prompt the pieces may change,
        so it is cut shorter until the whole fits); the prompt's pieces stay whole."""
        before, after = self._prompt
        enc, n_before, n_after = self._whole(before, text, after)
        n_words = len(enc.ids) - n_before - n_after  # the whole text's pieces
        final, read, keep, kept = enc, text, n_words, n_words
        while n_before + kept + n_after > max_len:
            keep -= n_before + kept + n_after - max_len  # fewer of the text's first pieces
            if keep < 1:
                raise InputError(
                    f"max_len {max_len} leaves no room for a piece beside the prompt's "
                    f"{n_before + n_after} tokens."
                )
            read = text[: enc.offsets[n_before + keep - 1][1] - len(before)]
            final, n_before, n_after = self._whole(before, read, after)
            kept = len(final.ids) - n_before - n_after
        ids, tokens = list(final.ids), self._labels(final.tokens)
        whole = before + read + after
        for i, (start, end) in enumerate(final.offsets):  # [UNK] -> the characters it replaced
            if ids[i] == self.unk_id and 0 <= start < end:
                tokens[i] = whole[start:end][:24]
        dropped = 0 if read is text else max(1, n_words - kept)
        return Encoding(
            ids=ids,
            tokens=tokens,
            is_unknown=[i == self.unk_id for i in ids],
            n_words=n_words,
            truncated=dropped > 0,
            n_dropped=dropped,
            held=(n_before, n_after),
        )
