"""Finished batches of a long evaluation kept on disk, so that a stopped run resumes.

``python -m uqlab.evaluate --journal DIR`` writes every finished batch of samples (probabilities
and logits ``[T, b, C]``) and of features (``[b, D]``) into ``DIR`` as it goes, one safetensors
file per batch, written atomically (a run killed mid-write leaves no half file). A rerun with the
same ``DIR`` loads the batches it finds and computes only the others: with the counter noise a
row's samples do not depend on its batch or on the other batches, so the joined arrays are what
one uninterrupted run gives, bit for bit (the test checks it). The sample files of an
evaluation with the distance baseline also hold the pooled features of a pass without noise,
from the same calls (a plain model's one pass, or the layers from the noise up run once more),
which the baseline takes instead of a second pass (:func:`journaled_samples` ``with_features``).

A batch file is named by a key of everything its numbers depend on: the model's tensors and
configuration (:func:`model_key`), the token ids of every row of the split, T, the seed, what is
computed (samples or features) and the batch's own rows. A file under another key is never read,
so a changed checkpoint, split or setting starts afresh in the same folder. The key does not cover
the library's code: delete the folder after changing how a model computes. Nothing here is read
from a visitor: the folder is the operator's own.

The folder's ``index.json`` names the checkpoint behind each key (written as batches are
keyed), so that one checkpoint's files can go while another's stay:
``python -m uqlab.evaluation.journal DIR`` lists them, ``--drop NAME`` deletes one
checkpoint's (a folder written before the index lists its files as ``unnamed``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save

from uqcore.inference.batch_predict import features_ids, sample_rows
from uqcore.inference.sampling import Capture
from uqcore.runtime import release_memory
from uqcore.text.vocab import write_atomic

ROWS = "rows"  # the tensor in every batch file naming its rows (checked on load)
INDEX = "index.json"  # {"models": {model key: checkpoint name}, "parts": {part key: model key}}
UNNAMED = "unnamed"  # what the listing calls files under a key the index does not hold


def model_key(model) -> str:
    """sha256 of ``model``'s configuration and every tensor of its state (names, dtypes, shapes
    and bytes): two models with the same key compute the same numbers."""
    h = hashlib.sha256()
    cfg = getattr(model, "cfg", None)
    h.update(
        json.dumps(
            asdict(cfg) if is_dataclass(cfg) else repr(cfg), sort_keys=True, default=str
        ).encode()
    )
    for name, t in sorted(model.state_dict().items()):
        t = t.detach().cpu().contiguous()
        h.update(f"|{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


@dataclass(frozen=True)
class Journal:
    """A folder of finished batches for one model (``key``: :func:`model_key`; ``name``: the
    checkpoint's, recorded in the folder's index, or None)."""

    folder: Path
    key: str
    name: str | None = None

    @classmethod
    def open(cls, folder, model, name: str | None = None) -> Journal:
        """The journal of ``model`` (the checkpoint ``name``) in ``folder`` (made if missing)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder, model_key(model), name)

    def part(self, what: str, encoded: Sequence[Sequence[int]], **settings) -> Part:
        """The batches of one computation: ``what`` (a word: samples, features), over the
        token-id rows ``encoded``, at ``settings`` (T, seed, ...), keyed by all of them; the
        index records whose they are."""
        h = hashlib.sha256(self.key.encode())
        h.update(json.dumps({"what": what, **settings}, sort_keys=True).encode())
        for row in encoded:
            h.update(np.asarray(row, dtype=np.int64).tobytes())
            h.update(b"|")
        part = Part(self.folder, what, h.hexdigest()[:24])
        _remember(self.folder, part.key, self.key, self.name)
        return part

    def done(self) -> int:
        """How many batch files the folder holds (any model or setting)."""
        return sum(1 for _ in self.folder.glob("*.safetensors"))


@dataclass(frozen=True)
class Part:
    """One computation's batch files: ``{what}-{key}-{batch index}.safetensors``."""

    folder: Path
    what: str
    key: str

    def _path(self, index: int) -> Path:
        return self.folder / f"{self.what}-{self.key}-{index:05d}.safetensors"

    def load(self, index: int, rows: Sequence[int]) -> dict[str, torch.Tensor] | None:
        """Batch ``index``'s tensors, or None when it is not there or holds other rows."""
        path = self._path(index)
        if not path.is_file():
            return None
        try:
            got = load_file(path)
        except Exception:  # noqa: BLE001 - any unreadable file (truncated, not safetensors)
            return None  # is computed again, as a missing one is
        if got.pop(ROWS, torch.empty(0)).tolist() != list(rows):
            return None  # a batch plan of another device or row cap: computed again
        return got

    def save(self, index: int, rows: Sequence[int], tensors: dict[str, torch.Tensor]) -> None:
        """Batch ``index``'s tensors, written atomically with its rows."""
        body = {k: v.contiguous() for k, v in tensors.items()}
        body[ROWS] = torch.tensor(list(rows), dtype=torch.long)
        write_atomic(self._path(index), save(body))


def run_batches(
    part: Part | None,
    plan: list[list[int]],
    mine: Sequence[int],
    compute: Callable[[list[int]], dict[str, torch.Tensor]],
    fill: Callable[[list[int], dict[str, torch.Tensor]], None],
    bar=None,
    needs: tuple[str, ...] = (),
) -> None:
    """For each batch index in ``mine`` (of ``plan``): ``fill(rows, tensors)`` with the
    journal's tensors when ``part`` holds the batch (with every tensor named in ``needs``),
    else with ``compute(rows)``, saved into ``part`` before the next batch starts. ``bar``:
    told ``update(len(rows))`` per batch.

    After each computed batch the C heap's free pages go back to the system
    (:func:`uqcore.runtime.release_memory`): glibc kept what the growing, length-sorted batches
    had freed, and the whole-set evaluation of imdb-smollm2-trans grew to 9.06 GB of RSS, of which
    one ``malloc_trim`` (through gdb) handed back 6.9 GB (2.12 GB left). A call takes ~17 ms here
    against seconds a batch."""
    for index in mine:
        rows = plan[index]
        got = part.load(index, rows) if part is not None else None
        if got is None or any(name not in got for name in needs):
            got = compute(rows)
            if part is not None:
                part.save(index, rows, got)
            release_memory()
        fill(rows, got)
        if bar is not None:
            bar.update(len(rows))


def journaled_samples(
    model,
    encoded,
    T: int,
    seed: int,
    plan,
    mine,
    journal: Journal | None,
    bar=None,
    with_features: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``(probs, logits)`` ``[T, N, C]`` of the batches ``mine`` (indices into ``plan``, a
    :func:`uqcore.inference.batch_predict.batch_plan`) as
    :func:`uqcore.inference.batch_predict.predict_ids` computes them,
    the other rows unset, and None; finished batches come from ``journal`` and new ones go
    into it. ``with_features``: the third is the pooled features ``[N, D]`` of one pass without
    noise, as :func:`features_ids` gives them, from the same calls
    (:attr:`uqcore.inference.sampling.SampleResult.features`: a plain model's one pass, an
    ensemble's members, any other's layers from its noise up run once more), so that they need
    no pass of their own; kept in the journal's batch files beside the samples (a batch file
    without them is computed again; one with them serves a call without)."""
    n, c = len(encoded), model.cfg.num_classes
    probs, logits = torch.empty(T, n, c), torch.empty(T, n, c)
    feats = torch.empty(n, model.cfg.d_model) if with_features else None
    part = journal.part("samples", encoded, T=T, seed=seed) if journal else None

    def compute(rows: list[int]) -> dict[str, torch.Tensor]:
        # the batch's rows alone (the counter noise keys a draw by the row's tokens, not its
        # index): no [T, N, C] buffers of the whole split a batch
        r = sample_rows(model, encoded, rows, T, seed, capture=Capture(features=with_features))
        got = {"probs": r.probs.float().cpu(), "logits": r.logits.float().cpu()}
        if with_features:
            got["features"] = r.features.float().cpu()
        return got

    def fill(rows: list[int], got: dict[str, torch.Tensor]) -> None:
        probs[:, rows], logits[:, rows] = got["probs"], got["logits"]
        if feats is not None:
            feats[rows] = got["features"]

    needs = ("features",) if with_features else ()
    run_batches(part, plan, mine, compute, fill, bar, needs)
    return probs, logits, feats


def journaled_features(
    model, encoded, plan, mine, journal: Journal | None, bar=None
) -> torch.Tensor:
    """The pooled features ``[N, D]`` of the batches ``mine`` of ``plan`` (a
    :func:`uqcore.inference.batch_predict.feature_batches`) as :func:`features_ids` computes
    them, the other rows unset; through ``journal`` as :func:`journaled_samples`."""
    out = torch.empty(len(encoded), model.cfg.d_model)
    part = journal.part("features", encoded) if journal else None

    def compute(rows: list[int]) -> dict[str, torch.Tensor]:  # the batch's rows alone
        own = [encoded[i] for i in rows]
        return {"features": features_ids(model, own, batches=[list(range(len(own)))])}

    def fill(rows: list[int], got: dict[str, torch.Tensor]) -> None:
        out[rows] = got["features"]

    run_batches(part, plan, mine, compute, fill, bar)
    return out


def _read_index(folder: Path) -> dict:
    """The folder's index (empty parts where it has none or it cannot be read)."""
    try:
        index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        index = {}
    index = index if isinstance(index, dict) else {}
    return {
        part: dict(got) if isinstance(got := index.get(part), dict) else {}
        for part in ("models", "parts")
    }


def _write_index(folder: Path, index: dict) -> None:
    write_atomic(folder / INDEX, (json.dumps(index, indent=1, sort_keys=True) + "\n").encode())


def _remember(folder: Path, part_key: str, key: str, name: str | None) -> None:
    """Record in the index that ``part_key``'s files are the model ``key``'s (checkpoint
    ``name``); written only when something is new."""
    index = _read_index(folder)
    if index["parts"].get(part_key) == key and (name is None or index["models"].get(key) == name):
        return
    index["parts"][part_key] = key
    if name is not None:
        index["models"][key] = name
    _write_index(folder, index)


def holdings(folder: Path) -> dict[str, list[Path]]:
    """The folder's batch files by checkpoint name (:data:`UNNAMED` for a key the index does
    not name), each list sorted."""
    index = _read_index(folder)
    out: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*-*-*.safetensors")):
        key = index["parts"].get(path.name.split("-")[1])
        out.setdefault(index["models"].get(key, UNNAMED) if key else UNNAMED, []).append(path)
    return out


def drop(folder: Path, name: str) -> tuple[int, int]:
    """Delete checkpoint ``name``'s batch files (``name`` :data:`UNNAMED`: the files no index
    entry names) and its index entries; ``(files, bytes)`` deleted."""
    files = holdings(folder).get(name, [])
    size = sum(f.stat().st_size for f in files)
    for f in files:
        f.unlink()
    index = _read_index(folder)
    gone = {k for k, n in index["models"].items() if n == name}
    index["models"] = {k: n for k, n in index["models"].items() if k not in gone}
    index["parts"] = {p: k for p, k in index["parts"].items() if k not in gone}
    if (folder / INDEX).is_file():
        _write_index(folder, index)
    return len(files), size


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.evaluation.journal",
        description="List an evaluation journal's batch files by checkpoint, or delete one "
        "checkpoint's (the others stay).",
    )
    p.add_argument("folder", metavar="DIR", help="the folder given to uqlab.evaluate --journal")
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="NAME",
        help=f"delete this checkpoint's files (repeatable; {UNNAMED}: those no index names)",
    )
    args = p.parse_args(argv)
    folder = Path(args.folder)
    if not folder.is_dir():
        p.error(f"{args.folder} is not a folder: give the --journal DIR of an evaluation")
    held = holdings(folder)
    for name in args.drop:
        if name not in held:
            p.error(
                f"{args.folder} holds no files of {name!r}; it holds: {', '.join(held) or 'none'}"
            )
    for name in args.drop:
        n, size = drop(folder, name)
        print(f"dropped {name}: {n:,} file(s), {size / 1e6:.1f} MB")
    for name, files in holdings(folder).items():
        size = sum(f.stat().st_size for f in files)
        print(f"{name}: {len(files):,} file(s), {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
