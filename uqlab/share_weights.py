"""Let a shipped checkpoint share another's weights: ``python -m uqlab.share_weights NAME --from
OTHER [--root DIR]``.

The Probabilistic Transformer is a TRANS with EM at inference: trained with the same recipe and
seed, its ``model.safetensors`` is byte for byte TRANS's (imdb-probtrans and imdb-trans are).
Storing it twice costs 2.9 MB of the 80 MB budget. This command checks that the two weights
files (and word-level vocabularies) are identical, writes ``"weights": {"checkpoint": OTHER,
"sha256": ...}`` into NAME's ``config.json``, removes NAME's ``model.safetensors``, and loads NAME
again to check that every tensor is what it was. Retraining NAME from its config writes its own
weights again; run this afterwards. With ``--vocab`` it shares the word-level vocabulary alone
(``"vocab": {...}``; every word-level checkpoint of one task builds the same one from its
training texts), leaving the weights where they are.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from uqcore.checkpoint import CONFIG_FILE, VOCAB_FILE, WEIGHTS_FILE, load_checkpoint
from uqcore.exceptions import UQError
from uqcore.readers.base_model import file_sha256
from uqcore.registry import check_name
from uqcore.text.vocab import write_atomic
from uqlab.catalog.paths import checkpoint_dir


def share(name: str, source: str, root: Path) -> str:
    """Make checkpoint ``name`` of ``root`` read ``source``'s weights; return a summary line.
    Raises :class:`UQError` (nothing changed) when the two are not byte-identical."""
    here, there = root / check_name(name), root / check_name(source)
    mine, theirs, digest = _identical(here, there, WEIGHTS_FILE, "weights")
    mine_ck, theirs_ck = (load_checkpoint(p, shared_weights=True) for p in (here, there))
    words = [getattr(c.vocab, "words", None) for c in (mine_ck, theirs_ck)]  # word-level only
    if words[0] != words[1]:  # a vocabulary read from a sibling's file counts as its own
        raise UQError(f"{name} and {source} have different vocabularies: weights not shared.")
    before = mine_ck.model.state_dict()
    _record(here, "weights", source, digest)
    mine.unlink()
    after = load_checkpoint(here, shared_weights=True).model.state_dict()
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    size = theirs.stat().st_size / 2**20
    return f"{name} now reads the weights of {source} ({size:.2f} MB saved)"


def _identical(here: Path, there: Path, filename: str, what: str) -> tuple[Path, Path, str]:
    """Both folders' ``filename``, and its sha256, when both hold their own, byte-identical
    copy; else :class:`UQError` naming which (``what``: the files, plural, for the message)."""
    mine, theirs = here / filename, there / filename
    for path in (mine, theirs):
        if not path.is_file():
            raise UQError(f"{path} does not exist: both checkpoints need their own {what} first.")
    digest = file_sha256(theirs)
    if file_sha256(mine) != digest:
        raise UQError(f"{mine} and {theirs} differ: only identical {what} can be shared.")
    return mine, theirs, digest


def _record(here: Path, key: str, source: str, digest: str) -> None:
    """Write ``{key: {"checkpoint": source, "sha256": digest}}`` into ``here``'s config.json."""
    doc = json.loads((here / CONFIG_FILE).read_text(encoding="utf-8"))
    doc[key] = {"checkpoint": source, "sha256": digest}
    write_atomic(here / CONFIG_FILE, json.dumps(doc, indent=2, ensure_ascii=False).encode())


def share_vocab(name: str, source: str, root: Path) -> str:
    """Make word-level checkpoint ``name`` of ``root`` read ``source``'s ``vocab.json`` (a
    ``vocab`` record); return a summary line. Raises :class:`UQError` (nothing changed) unless
    both hold their own, byte-identical vocabularies."""
    here, there = root / check_name(name), root / check_name(source)
    mine, theirs, digest = _identical(here, there, VOCAB_FILE, "vocabularies")
    before = load_checkpoint(here, shared_weights=True).vocab
    _record(here, "vocab", source, digest)
    mine.unlink()
    after = load_checkpoint(here, shared_weights=True).vocab
    assert before.words == after.words
    return (
        f"{name} now reads the vocabulary of {source} ({theirs.stat().st_size / 1024:.0f} kB saved)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="the checkpoint whose weights file is removed")
    p.add_argument("--from", dest="source", required=True, help="the checkpoint that keeps them")
    p.add_argument("--root", default=None, help="folder of checkpoints (default: the shipped)")
    p.add_argument("--vocab", action="store_true", help="share the vocabulary, not the weights")
    args = p.parse_args(argv)
    root = Path(args.root) if args.root else checkpoint_dir()
    try:
        print((share_vocab if args.vocab else share)(args.name, args.source, root))
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
