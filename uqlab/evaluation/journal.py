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
"""

from __future__ import annotations

import hashlib
import json
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
    """A folder of finished batches for one model (``key``: :func:`model_key`)."""

    folder: Path
    key: str

    @classmethod
    def open(cls, folder, model) -> Journal:
        """The journal of ``model`` in ``folder`` (made if missing)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder, model_key(model))

    def part(self, what: str, encoded: Sequence[Sequence[int]], **settings) -> Part:
        """The batches of one computation: ``what`` (a word: samples, features), over the
        token-id rows ``encoded``, at ``settings`` (T, seed, ...), keyed by all of them."""
        h = hashlib.sha256(self.key.encode())
        h.update(json.dumps({"what": what, **settings}, sort_keys=True).encode())
        for row in encoded:
            h.update(np.asarray(row, dtype=np.int64).tobytes())
            h.update(b"|")
        return Part(self.folder, what, h.hexdigest()[:24])

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
