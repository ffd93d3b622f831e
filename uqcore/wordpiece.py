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


class WordPiece:
    """A WordPiece tokenizer: ``len()`` is its vocabulary size; ``pad_id``, ``cls_id``,
    ``sep_id`` and ``unk_id`` are its special ids."""

    def __init__(self, tokenizer) -> None:
        tokenizer.no_truncation()  # we cut ourselves, so the [SEP] stays and n_dropped is known
        tokenizer.no_padding()
        self._tok = tokenizer
        ids = {name: tokenizer.token_to_id(name) for name in ("[PAD]", "[CLS]", "[SEP]", "[UNK]")}
        missing = [name for name, i in ids.items() if i is None]
        if missing:
            raise CheckpointError(
                f"The tokenizer has no {', '.join(missing)} token; a BERT WordPiece tokenizer "
                "(tokenizer.json of a BERT model) is needed."
            )
        self.pad_id, self.cls_id = ids["[PAD]"], ids["[CLS]"]
        self.sep_id, self.unk_id = ids["[SEP]"], ids["[UNK]"]

    @classmethod
    def from_folder(cls, folder: str | os.PathLike) -> WordPiece:
        """Load ``folder/tokenizer.json``; :class:`CheckpointError` if missing or unreadable."""
        from tokenizers import Tokenizer  # late: only BERT-family checkpoints need it

        path = Path(folder) / TOKENIZER_FILE
        if not path.is_file():
            raise CheckpointError(f"No {TOKENIZER_FILE} in {folder}: the base model folder is "
                                  "incomplete; reinstall the package that ships it.")  # fmt: skip
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises its own exception type
            raise CheckpointError(f"{path} is not a readable tokenizer ({exc}).") from None

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
