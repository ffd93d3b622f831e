"""WordPiece input for BERT-family backbones, through the ``tokenizers`` library (never by hand).

:class:`WordPiece` wraps the ``tokenizer.json`` of a Hugging Face folder and encodes one text as
``[CLS] pieces... [SEP]`` into the same :class:`uqcore.vocab.Encoding` the word-level vocabulary
gives, so the sampler, the app and the evaluation treat both alike. A text longer than
``max_len`` keeps its first ``max_len - 2`` pieces (``n_dropped`` says how many were cut); a text
of unknown pieces only still runs (as ``[UNK]``), since the pieces cover every character BERT
normalises to. Display labels: continuation pieces keep BERT's ``##`` prefix (``play ##ing``), the
same on every axis; an unknown piece shows the characters it stands for (``😀``), not ``[UNK]``,
and ``is_unknown`` flags it.
"""

from __future__ import annotations

import os
from pathlib import Path

from uqcore.errors import CheckpointError, InputError
from uqcore.vocab import Encoding

TOKENIZER_FILE = "tokenizer.json"


BERT_SPECIALS = ("[PAD]", "[CLS]", "[SEP]", "[UNK]")  # (pad, first, last, unknown)
MAX_TOKENIZER_BYTES = 64 * 2**20  # a tokenizer.json larger than this is refused unread


class WordPiece:
    """A subword tokenizer of a Hugging Face folder (BERT's WordPiece, RoBERTa's byte-level
    BPE): ``len()`` is its vocabulary size; ``pad_id``, ``cls_id`` (the first token: BERT's
    ``[CLS]``, RoBERTa's ``<s>``), ``sep_id`` (the last) and ``unk_id`` are its special ids,
    named by ``specials`` (the backbone's layout)."""

    def __init__(self, tokenizer, specials: tuple[str, str, str, str] = BERT_SPECIALS) -> None:
        tokenizer.no_truncation()  # we cut ourselves, so the [SEP] stays and n_dropped is known
        tokenizer.no_padding()
        self._tok = tokenizer
        ids = {name: tokenizer.token_to_id(name) for name in specials}
        missing = [name for name, i in ids.items() if i is None]
        if missing:
            raise CheckpointError(
                f"The tokenizer has no {', '.join(missing)} token; this model's tokenizer needs "
                f"{', '.join(specials)} (save the model's own tokenizer with save_pretrained)."
            )
        self.pad_id, self.cls_id, self.sep_id, self.unk_id = (ids[n] for n in specials)
        self._byte_level = specials != BERT_SPECIALS  # RoBERTa: "Ġ" marks a leading space

    @classmethod
    def from_folder(
        cls, folder: str | os.PathLike, specials: tuple[str, str, str, str] = BERT_SPECIALS
    ) -> WordPiece:
        """Load ``folder/tokenizer.json``; :class:`CheckpointError` if missing, a link, over
        :data:`MAX_TOKENIZER_BYTES` or unreadable."""
        from tokenizers import Tokenizer  # late: only BERT-family checkpoints need it

        path = Path(folder) / TOKENIZER_FILE
        if path.is_symlink():
            raise CheckpointError(f"{TOKENIZER_FILE} is a link; links are not followed: copy "
                                  "the file in.")  # fmt: skip
        if not path.is_file():
            raise CheckpointError(
                f"No {TOKENIZER_FILE} in the model folder: save the model's fast tokenizer there "
                "(AutoTokenizer.from_pretrained(...).save_pretrained(folder)); a base package's "
                "folder lacking it is incomplete: reinstall the package."
            )
        if path.stat().st_size > MAX_TOKENIZER_BYTES:
            raise CheckpointError(f"{TOKENIZER_FILE} is over {MAX_TOKENIZER_BYTES >> 20} MB; "
                                  "that is not a tokenizer this app reads.")  # fmt: skip
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises its own exception type
            raise CheckpointError(f"{TOKENIZER_FILE} is not a readable tokenizer "
                                  f"({str(exc)[:200]}).") from None  # fmt: skip
        return cls(tok, specials)

    def __len__(self) -> int:
        return self._tok.get_vocab_size()

    def encode(self, text: str, max_len: int, *, allow_all_unknown: bool = True) -> Encoding:
        """``[CLS] pieces [SEP]`` with at most ``max_len`` ids (``max_len >= 3``).

        Raises :class:`InputError` for a non-str, an empty text, or a text without pieces.
        ``allow_all_unknown`` is accepted for the word-level vocabulary's signature: a text of
        unknown pieces always runs here.
        """
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 3:
            raise InputError(f"max_len must be an integer >= 3 ([CLS], a piece, [SEP]), "
                             f"got {max_len!r}.")  # fmt: skip
        if not isinstance(text, str):
            raise InputError(f"The text must be a str, got {type(text).__name__}; pass a string.")
        if not text.strip():
            raise InputError("The text is empty: type a sentence (for example 'a great movie').")
        enc = self._tok.encode(text)
        ids, tokens = list(enc.ids), list(enc.tokens)  # [CLS] ... [SEP]
        if self._byte_level:  # "Ġword" -> "word": show what was typed
            tokens = [t[1:] if t.startswith("Ġ") and len(t) > 1 else t for t in tokens]
        for i, (start, end) in enumerate(enc.offsets):  # [UNK] -> the characters it replaced
            if ids[i] == self.unk_id and 0 <= start < end:
                tokens[i] = text[start:end][:24]
        pieces = len(ids) - 2
        if pieces < 1:
            raise InputError("The text has no characters the tokenizer reads: type a sentence.")
        keep = min(pieces, max_len - 2)
        ids = ids[: keep + 1] + [self.sep_id]
        tokens = tokens[: keep + 1] + ["[SEP]"]
        unknown = [i == self.unk_id for i in ids]
        return Encoding(ids=ids, tokens=tokens, is_unknown=unknown, n_words=pieces,
                        truncated=keep < pieces, n_dropped=pieces - keep)  # fmt: skip
