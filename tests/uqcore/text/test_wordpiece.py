"""The WordPiece tokenizer (uqcore.text.wordpiece) on the MiniLM base's vocabulary."""

from __future__ import annotations

import pytest

from uqcore.exceptions import InputError
from uqcore.text.wordpiece import WordPiece


def test_wordpiece_encodes_cuts_and_keeps_unknown_pieces(minilm_base):
    tok = WordPiece.from_folder(minilm_base)
    assert len(tok) == 30522 and (tok.cls_id, tok.sep_id, tok.pad_id) == (101, 102, 0)
    enc = tok.encode("John is tall on several occasions.", 64)
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]" and not enc.truncated
    assert enc.tokens[1:-1] == ["john", "is", "tall", "on", "several", "occasions", "."]
    short = tok.encode("John is tall on several occasions.", 5)
    assert short.ids[-1] == tok.sep_id and len(short.ids) == 5 and short.n_dropped == 4
    odd = tok.encode("🙂", 16)  # only an unknown piece: it still runs
    assert odd.is_unknown == [False, True, False]
    assert odd.tokens == ["[CLS]", "🙂", "[SEP]"]  # the characters, not "[UNK]"
    pieces = tok.encode("The playwright's unplayable script", 64).tokens
    assert any(t.startswith("##") for t in pieces)  # continuation pieces keep their mark
    with pytest.raises(InputError, match="empty"):
        tok.encode("   ", 16)
    with pytest.raises(InputError, match="max_len"):
        tok.encode("a", 2)
