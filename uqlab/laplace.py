"""Fit a Laplace posterior over a trained checkpoint's weights, post hoc:
``python -m uqlab.laplace --ckpt NAME [--task-file T] [--rows N] [--out NAME]``.

The source is a deterministic softmax model (a ``trans`` or ``mcdropout`` checkpoint: word-level,
MiniLM or SmolLM2 adapters, an imported classifier with a task file). The posterior covers what
its checkpoint stores (on a pretrained backbone: the low-rank adapters, pooler and head; never the
frozen base) and is diagonal: the curvature is the diagonal of the GGN summed over the training
texts, one pass (:func:`uqcore.inference.laplace.diagonal_ggn`; ``--rows`` takes a seeded part).
The prior precision is **chosen on dev**: the one of :data:`GRID` whose sampled predictive
(``--samples`` weight draws) has the lowest dev NLL, ties to the larger (the tighter posterior);
the marginal likelihood's choice is not used, as sampled weights at its prior lost all accuracy
on CR (GUIDE's notes). Every figure of the choice, the fit's seconds and peak memory go into the
new checkpoint's ``training.laplace`` and its card; the new checkpoint is family ``laplace``
(:mod:`uqcore.nets.posterior`), named ``<task>-<backbone>-laplace`` from ``*-trans`` (else
``NAME-laplace``). Evaluate it as any other: ``python -m uqlab.evaluate --ckpt NEW``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from tqdm import tqdm

from uqcore.budget import check_budget
from uqcore.build import build_model
from uqcore.checkpoint import (
    WEIGHTS_FILE,
    Checkpoint,
    load_checkpoint,
    save_checkpoint,
    weights_path,
)
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import predict_ids
from uqcore.inference.laplace import diagonal_ggn
from uqcore.inference.prefix import GRID_BUDGET, PrefixCache
from uqcore.nets.posterior import LaplaceParams, drawn_blocks, posterior_of
from uqcore.readers.base_model import file_sha256
from uqcore.runtime import tune_cpu
from uqcore.settings import SamplingSettings, resolve
from uqcore.stats import ece, nll
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.provenance import portable_training
from uqlab.catalog.task_file import checkpoint_task
from uqlab.data import load_task, resolve_data_dir
from uqlab.evaluation.laplace_report import RECORD
from uqlab.share_weights import share

GRID: tuple[float, ...] = tuple(10.0 ** (k / 2) for k in range(15))  # 1 .. 1e7, half-decades
SOURCES = ("trans", "mcdropout")  # softmax attention, one model: the MAP a Laplace centres on


@dataclass(frozen=True)
class FitOptions:
    """``rows``: training texts the curvature sums over (None: all; else a seeded part);
    ``dev_rows``: dev texts the prior is chosen on (a seeded part); ``samples``: weight draws
    per dev text; ``seed``: the parts' and the draws' seed; ``grid``: prior precisions tried;
    ``from_block``: the lowest block the posterior covers (None: all the source stores; else
    that block up and the head, :class:`uqcore.nets.posterior.LaplaceParams`)."""

    rows: int | None = None
    dev_rows: int = 500
    samples: int = 10
    seed: int = 0
    grid: tuple[float, ...] = GRID
    from_block: int | None = None


def laplace_model(ck: Checkpoint, from_block: int | None = None) -> torch.nn.Module:
    """The source checkpoint's weights (loaded with ``merge=False``: adapters apart) in a
    ``laplace`` model whose posterior, over the blocks from ``from_block`` up (None: every
    tensor the source stores), is still empty (zero curvature). :class:`UQError` for a source
    that is not one softmax model, or a ``from_block`` it does not have."""
    family = ck.config.family
    if family not in SOURCES:
        raise UQError(
            f"{ck.name} is a {family!r} model; a Laplace posterior is fitted around one "
            f"deterministic softmax model: give a checkpoint of family {' or '.join(SOURCES)}."
        )
    params = LaplaceParams(from_block=from_block)
    cfg = ck.config.replace(family="laplace", attention=dataclasses.asdict(params))
    with torch.device("meta"):  # the names only: nothing allocated
        covered = posterior_of(build_model(cfg)).names
    # the blocks below the first drawn one run once for every sample (the sampler's prefix)
    cfg = cfg.replace(stochastic_layers=drawn_blocks(covered, cfg.n_layers))
    model = build_model(cfg)
    missing, unexpected = model.load_state_dict(ck.model.state_dict(), strict=False)
    if unexpected or any(not m.startswith("posterior.") for m in missing):
        raise UQError(f"{ck.name}: its weights do not fit a Laplace model of the same shape.")
    return model


def with_prior(model: torch.nn.Module, delta: float, rows: int) -> torch.nn.Module:
    """``model`` (the same object) with its config's prior precision and fit rows set: the
    sampler reads them from ``model.cfg``."""
    model.cfg = model.cfg.replace(attention={"prior_precision": delta, "fit_rows": rows})
    return model


def _encode(ck: Checkpoint, texts) -> list[list[int]]:
    return [ck.vocab.encode(t, ck.read_len, allow_all_unknown=True).ids for t in texts]


def _part(n: int, rows: int | None, seed: int) -> np.ndarray:
    """A seeded choice of ``rows`` of ``n`` indices (all, in order, when None or >= n)."""
    if rows is None or rows >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).permutation(n)[:rows])


def _scores(probs: torch.Tensor, y: np.ndarray) -> dict[str, float]:
    p = probs.mean(0).numpy()  # [N, C]: the predictive
    return {
        "dev_nll": round(float(nll(p, y)), 5),
        "dev_accuracy": round(float((p.argmax(1) == y).mean()), 5),
        "dev_ece": round(float(ece(p, y)), 5),
    }


def choose_prior(model, dev_ids, labels, opts: FitOptions, bar=None) -> tuple[float, list[dict]]:
    """The prior precision of ``opts.grid`` whose sampled dev predictive has the lowest NLL (ties:
    the larger), and one row per precision ``{prior_precision, dev_nll, dev_accuracy, dev_ece}``
    after a first row for the trained weights alone (``prior_precision`` None). Leaves
    ``model``'s prior as it found it."""
    y = np.asarray(labels)
    start = model.cfg.attention
    trained = resolve(model.cfg, SamplingSettings(noise_scale=0.0))
    # with ``from_block`` > 0 the blocks below run once for the whole grid (uqcore.inference.prefix)
    kept = {"prefix_cache": PrefixCache(GRID_BUDGET), "prefix_owner": "choose_prior"}
    probs = predict_ids(model, dev_ids, 1, 0, settings=trained, **kept)
    rows = [{"prior_precision": None, **_scores(probs, y)}]
    for delta in opts.grid:
        with_prior(model, delta, start.fit_rows)
        probs = predict_ids(model, dev_ids, opts.samples, opts.seed, **kept)
        rows.append({"prior_precision": delta, **_scores(probs, y)})
        if bar is not None:
            bar.update(1)
    with_prior(model, start.prior_precision, start.fit_rows)
    best = min(rows[1:], key=lambda r: (r["dev_nll"], -r["prior_precision"]))
    return best["prior_precision"], rows


def default_name(source: str) -> str:
    """``cr-minilm-trans`` -> ``cr-minilm-laplace``; any other ``NAME`` -> ``NAME-laplace``."""
    return (
        f"{source[: -len('-trans')]}-laplace" if source.endswith("-trans") else f"{source}-laplace"
    )


def fit_laplace(
    ck: Checkpoint, data_dir=None, opts: FitOptions = FitOptions(), task_file=None, progress=True
) -> tuple[torch.nn.Module, dict]:
    """The ``laplace`` model of ``ck`` (curvature fitted, prior chosen on dev) and the record of
    how (``training.laplace``: the source, rows, seconds, peak RSS, every dev row)."""
    task, note = checkpoint_task(ck.name, ck.training, task_file)
    if note and progress:
        print(f"note: {note}", file=sys.stderr)
    info = ck.training or {}
    data = load_task(task, resolve_data_dir(data_dir), split_seed=int(info.get("seed", 0)))
    model = laplace_model(ck, opts.from_block)
    fit_idx = _part(len(data.train), opts.rows, opts.seed)
    dev_idx = _part(len(data.dev), opts.dev_rows, opts.seed)
    train_ids = _encode(ck, [data.train.texts[i] for i in fit_idx])
    dev_ids = _encode(ck, [data.dev.texts[i] for i in dev_idx])
    started = time.perf_counter()
    with tqdm(
        total=len(train_ids), unit="text", desc=f"{ck.name} curvature", disable=not progress
    ) as bar:
        posterior_of(model).set_curvature(diagonal_ggn(model, train_ids, progress=bar.update))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux: KiB)
    with_prior(model, 1.0, len(train_ids))
    with tqdm(
        total=len(opts.grid), unit="prior", desc=f"{ck.name} prior on dev", disable=not progress
    ) as bar:
        delta, rows = choose_prior(model, dev_ids, [data.dev.labels[i] for i in dev_idx], opts, bar)
    with_prior(model, delta, len(train_ids))
    covered = sum(posterior_of(model).curvature(n).numel() for n in posterior_of(model).names)
    record = {
        "source": ck.name,
        "task": task,
        "structure": "diagonal GGN",
        "parameters": covered,
        "from_block": opts.from_block,
        "fit_rows": len(train_ids),
        "fit_seconds": round(seconds, 1),
        "peak_rss_mb": round(peak, 1),
        "prior_chosen_on": "dev",
        "rule": "lowest dev NLL of the sampled predictive (ties: the larger prior precision)",
        "dev_rows": len(dev_ids),
        "samples": opts.samples,
        "seed": opts.seed,
        "prior_precision": delta,
        "dev": rows,
    }
    return model, record


def card(name: str, record: dict, command: str) -> str:
    """The model card of a fitted Laplace checkpoint."""
    chosen = next(r for r in record["dev"] if r["prior_precision"] == record["prior_precision"])
    trained = record["dev"][0]
    low = record.get("from_block")
    what = "what its checkpoint stores" if low is None else f"those of block {low} up and the head"
    return (
        f"# {name}\n\nA Laplace posterior over the weights of `{record['source']}` "
        f"({record['parameters']:,} parameters: {what}, never the frozen base), "
        f"diagonal: the GGN diagonal summed over {record['fit_rows']:,} training texts of "
        f"{record['task']} ({record['fit_seconds']} s, peak RSS {record['peak_rss_mb']:,} MB on "
        f"the machine that fitted it). A sample is one draw of those weights, so the attention "
        f"maps move with it.\n\nPrior precision {record['prior_precision']:g}, chosen on dev "
        f"({record['dev_rows']} texts, {record['samples']} draws each): the lowest NLL of the "
        f"sampled predictive, {chosen['dev_nll']:.4f} (accuracy {chosen['dev_accuracy']:.4f}, "
        f"ECE {chosen['dev_ece']:.4f}) against the trained weights' {trained['dev_nll']:.4f} "
        f"(accuracy {trained['dev_accuracy']:.4f}, ECE {trained['dev_ece']:.4f}); every precision "
        f"tried is in `config.json` -> `training.laplace.dev`.\n\nRefit: `{command}`.\n"
    )


def stored_dtype(weights: Path) -> torch.dtype | None:
    """float16 / bfloat16 when every floating tensor of the safetensors file ``weights`` is
    stored so, else None (float32)."""
    with safe_open(str(weights), framework="pt") as f:
        kinds = {str(f.get_slice(k).get_dtype()) for k in f.keys()} - {"I64", "I32", "BOOL"}
    return (
        {"F16": torch.float16, "BF16": torch.bfloat16}.get(kinds.pop()) if len(kinds) == 1 else None
    )


def share_if_same(out: Path, source_weights: Path) -> str | None:
    """When the new checkpoint ``out``'s weights are byte for byte the source's file (a posterior
    keeps the trained weights as its mean) and both lie in one folder, ``out`` reads the
    source's file (:func:`uqlab.share_weights.share`); the line that says so, else None."""
    mine = out / WEIGHTS_FILE
    owner = source_weights.parent
    if owner.parent.resolve() != out.parent.resolve() or not mine.is_file():
        return None
    if file_sha256(mine) != file_sha256(source_weights):
        return None
    return share(out.name, owner.name, out.parent)


def _parse(argv: list[str] | None) -> tuple[argparse.Namespace, FitOptions]:
    """The command line and the fit options it asks for (a bad value: argparse's usage error)."""
    p = argparse.ArgumentParser(prog="python -m uqlab.laplace", description=__doc__.splitlines()[0])
    p.add_argument("--ckpt", required=True, help="the source checkpoint's name or folder")
    p.add_argument("--out", help="the new checkpoint's name (default: see the module doc)")
    p.add_argument("--root", default=str(checkpoint_dir()), help="where checkpoints are read")
    p.add_argument("--out-root", help="where the new checkpoint is written (default: --root)")
    p.add_argument("--task-file", help="the task's description (an import that names none)")
    p.add_argument("--data-dir", help="folder laid out like ../shared/data (default $UQ_DATA_DIR)")
    p.add_argument("--rows", type=int, help="training texts for the curvature (default: all)")
    p.add_argument("--dev-rows", type=int, default=FitOptions.dev_rows)
    p.add_argument("--samples", type=int, default=FitOptions.samples)
    p.add_argument(
        "--grid",
        help="prior precisions to try, comma-separated (default: 1 to 1e7 in half-decades)",
    )
    p.add_argument(
        "--from-block",
        type=int,
        help="cover only the blocks from this one up and the head (default: every tensor the "
        "source stores); the blocks below run once for all samples",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    for flag in ("rows", "dev_rows", "samples"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            p.error(f"--{flag.replace('_', '-')} must be a positive integer, got {value}")
    if args.from_block is not None and args.from_block < 0:
        p.error(f"--from-block must be a block index >= 0, got {args.from_block}")
    grid = GRID
    if args.grid:
        try:
            grid = tuple(float(v) for v in args.grid.split(","))
        except ValueError:
            p.error(f"--grid must be numbers separated by commas, got {args.grid!r}")
        if not grid or not all(math.isfinite(v) and v > 0 for v in grid):
            p.error(f"--grid must hold positive finite numbers, got {args.grid!r}")
    opts = FitOptions(
        rows=args.rows,
        dev_rows=args.dev_rows,
        samples=args.samples,
        seed=args.seed,
        grid=grid,
        from_block=args.from_block,
    )
    return args, opts


def main(argv: list[str] | None = None) -> int:
    args, opts = _parse(argv)
    tune_cpu(args.threads)
    source = Path(args.ckpt) if Path(args.ckpt).is_dir() else Path(args.root) / args.ckpt
    try:
        ck = load_checkpoint(source, shared_weights=True, merge=False)
        model, record = fit_laplace(ck, args.data_dir, opts, args.task_file, not args.quiet)
        name = args.out or default_name(ck.name)
        command = "python -m uqlab.laplace " + " ".join(argv if argv is not None else sys.argv[1:])
        # the source's training record, less its float16 storage check (of the source's file)
        kept = {k: v for k, v in (ck.training or {}).items() if k != "storage"}
        training = {**portable_training(kept), "family": model.cfg.family, RECORD: record}
        source_weights = weights_path(source)
        check_budget(model.cfg, where=f"{name}'s config")  # before a file is written
        out = save_checkpoint(
            Path(args.out_root or args.root) / name,
            model,
            model.cfg,
            ck.vocab,
            training=training,
            card=card(name, record, command),
            base=ck.base,
            dtype=stored_dtype(source_weights),  # the mean as the source stores it
        )
        shared = share_if_same(out, source_weights)
        if shared:
            print(shared)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    chosen = next(r for r in record["dev"] if r["prior_precision"] == record["prior_precision"])
    print(
        f"{name}: prior precision {record['prior_precision']:g} (dev NLL {chosen['dev_nll']:.4f}, "
        f"accuracy {chosen['dev_accuracy']:.4f}; trained weights "
        f"{record['dev'][0]['dev_nll']:.4f}); "
        f"curvature over {record['fit_rows']:,} texts in {record['fit_seconds']} s, "
        f"peak RSS {record['peak_rss_mb']:,.0f} MB -> {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
