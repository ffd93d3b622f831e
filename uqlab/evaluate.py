"""Evaluate checkpoints: ``python -m uqlab.evaluate (--ckpt NAME_OR_PATH | --all) [options]``.

For each checkpoint: T sampled runs (10 by default, the paper's protocol) on its task's in-domain
test split and out-of-domain set, with the splits of its training seed. Writes the checkpoint's
``metrics.json``: ``{"task", "family", "samples", "seed", "id": {...}, "ood": {...},
"ood_detection": {score: {auroc, aupr, fpr_at_95_tpr}}, "table3": [...]}``, where ``id`` and ``ood``
hold :func:`uqcore.stats.summarize` (accuracy and, for two classes, MCC as mean and std over the T
runs; NLL, Brier, ECE and adaptive ECE, AURC and accuracy at 80 % coverage, mean entropy, mutual
information, variance of p(gold)); ``ood_detection`` has every probability score and the logit
scores max logit and energy; ``temperature`` is the scalar fitted on the dev split
(:func:`uqcore.stats.fit_temperature`) and ``id`` / ``ood`` -> ``scaled`` the NLL, Brier, ECE and
adaptive ECE after it; ``conformal_90`` the empirical coverage, mean set size and share of two-class
sets of split-conformal sets (LAC and APS) calibrated on dev for 90 % coverage, and in ``id`` ->
``conformal_90`` -> method -> ``resampled`` their in-domain coverage over 1,000 random re-splits of
dev + test with the same sizes (:func:`uqcore.stats.resampled_coverage`);
``conformal_calibration`` the dev split's LAC scores (5 decimals, in the compact form of
:mod:`uqlab.catalog.conformal_scores`), from which the explorer draws a set at any coverage;
``ood_detection`` -> ``mahalanobis`` the distance baseline (class means and shared covariance of
the last layer's [CLS] feature on up to 5,000 training examples). ``error_detection`` -> ``id`` /
``ood`` scores each uncertainty as a detector of the model's own errors (AUROC, AURC:
:func:`uqcore.inference.detection.error_detection`); ``error_detection`` -> split ->
``versus_max_prob``: each score's AUROC for the errors minus that of 1 - max p on the same texts,
with a paired bootstrap interval and a verdict (better / tie / worse:
:func:`uqcore.inference.detection.errors_versus_max_prob`); ``ood_detection_by_length`` the OOD
AUROC of each probability score within bins of tokens read (is it length?);
``ood_detection_length_matched`` the OOD AUROCs on both domains drawn to one length histogram, with
``n_per_side`` and each score against 1 - max p, or a ``note`` where the lengths do not overlap
(:func:`uqcore.inference.detection.matched_ood_detection`; against the task's ``ood_matched``
texts, named under ``set``, when its description has them: CR's IMDB reviews cut into
sentences); ``read_len`` the tokens each text was
read at (:attr:`uqcore.checkpoint.Checkpoint.read_len`: the length it was trained at);
``comparison``: the checkpoint against the plain transformer of its task and backbone on the same
texts, its uncertainty chosen on dev, with bootstrap intervals and paired verdicts
(:mod:`uqlab.evaluation.comparison`; ``--baseline NAME|auto|none``, and ``--comparison-only``
redoes that block alone at the samples, seed and parts the file records). ``notes``:
the sentences a reader must see beside these figures (scores whose AUROC is below 0.5, OOD AUROCs
length could not be checked for, temperature scaling that raises ECE:
:func:`uqlab.evaluation.detection_report.metric_notes`), also printed. ``--ood-limit N`` cuts the
out-of-domain set alone (``ood_limit``); ``--no-mahalanobis`` skips the features pass behind the
distance baseline (``skipped``). The metrics.json an evaluation replaces is kept as
``metrics.previous.json``.

It also writes ``samples.safetensors`` beside it: the samples of every bundled evaluation example
at the checkpoint's own settings (:mod:`uqlab.evaluation.stored`; ``--stored-only`` writes just
that, and the map of those examples, :mod:`uqlab.feature_map`), which
the app's dataset pages read instead of recomputing.

``torchrun --nproc_per_node=N -m uqlab.evaluate ...`` (gloo on CPUs, nccl on GPUs with
``--device cuda``) shares the batches of each split out across N processes and gathers the
samples on rank 0, which writes the same metrics.json (:mod:`uqlab.evaluation.shards`): bit for bit
at the same ``--threads`` per process (torch's reductions split by thread count change logits in
their last bits).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from uqcore.checkpoint import Checkpoint, load_checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import (
    batch_plan,
    feature_batches,
    predict,
)
from uqcore.inference.detection import (
    MIN_PER_SIDE,
    detection_by_length,
    error_detection,
    errors_versus_max_prob,
    length_edges,
    matched_ood_detection,
)
from uqcore.registry import list_checkpoints
from uqcore.runtime import pick_device, tune_cpu
from uqcore.stats import (
    CONFORMAL_METHODS,
    LOGIT_SCORES,
    OOD_SCORES,
    adaptive_ece,
    brier,
    calibration_scores,
    conformal_from_scores,
    conformal_summary,
    ece,
    fit_mahalanobis,
    fit_temperature,
    logit_scores,
    nll,
    ood_detection,
    ood_scores,
    resampled_coverage,
    scaled_probs,
    summarize,
    table3_stats,
)
from uqcore.text.vocab import write_atomic
from uqlab.catalog.conformal_scores import encode as encode_scores
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.presets import preset_rows
from uqlab.catalog.provenance import portable
from uqlab.catalog.task_file import checkpoint_task
from uqlab.catalog.tasks import TASKS
from uqlab.data import Split, TaskData, load_task, resolve_data_dir
from uqlab.evaluation.comparison import comparison, comparison_line, deterministic, find_baseline
from uqlab.evaluation.detection_report import metric_notes
from uqlab.evaluation.journal import Journal, journaled_features, journaled_samples
from uqlab.evaluation.paper import examples
from uqlab.evaluation.pending import Pending
from uqlab.evaluation.shards import Shards, join, leave
from uqlab.evaluation.stored import FILE as STORED_FILE
from uqlab.evaluation.stored import bundled_rows
from uqlab.evaluation.stored import write as write_stored
from uqlab.feature_map import FILE as MAP_FILE
from uqlab.feature_map import write as write_map

MAHALANOBIS_FIT = 5000  # training examples the distance baseline is fitted on (seeded draw)
RESPLITS = 1000  # random dev + test re-splits behind the resampled conformal coverage


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace(" n't", "n't").split())


def table3_picks(task_data, seed: int, per_domain: int) -> list[tuple[str, int, str, str]]:
    """The examples of the per-example Table 3: the paper's sentences of the task
    (:mod:`uqlab.evaluation.paper`; CoLA) plus ``per_domain`` seeded picks from each of the test and
    out-of-domain splits, as ``(text, label, domain, where)``."""
    picks: list[tuple[str, int, str, str]] = []
    ours = examples(task_data.task)
    seen = {_normalise(t) for t in task_data.train.texts} if ours else set()
    for row in ours:
        where = "paper; in our train split" if _normalise(row.text) in seen else "paper"
        picks.append((row.text, row.gold, row.domain, where))
    rng = np.random.default_rng(seed)
    for split, domain in ((task_data.test, "id"), (task_data.ood, "ood")):
        for i in rng.choice(len(split), size=min(per_domain, len(split)), replace=False):
            picks.append((split.texts[i], split.labels[i], domain, f"{split.name}[{int(i)}]"))
    return picks


def table3_rows(picks: list[tuple[str, int, str, str]], probs) -> list[dict]:
    """Per-example Table 3 statistics of ``picks`` from their samples ``probs [T, N, C]``."""
    stats = table3_stats(probs, [p[1] for p in picks])
    return [
        {
            "text": text,
            "label": int(label),
            "domain": domain,
            "source": where,
            "p_gold_mean": float(stats.p_gold_mean[i]),
            "p_gold_var": float(stats.p_gold_var[i]),
            "correct": int(stats.n_correct[i]),
            "T": int(stats.n_samples),
        }
        for i, (text, label, domain, where) in enumerate(picks)
    ]


def table3_for(ck: Checkpoint, task_data, T: int, seed: int, per_domain: int) -> list[dict]:
    """The per-example Table 3 rows of one process (:func:`table3_picks`, sampled here)."""
    picks = table3_picks(task_data, seed, per_domain)
    probs = predict(ck.model, ck.vocab, [p[0] for p in picks], ck.read_len, T, seed)
    return table3_rows(picks, probs)


def _encode(ck: Checkpoint, texts) -> list[list[int]]:
    """Token ids of ``texts`` at the checkpoint's reading length (:attr:`Checkpoint.read_len`)."""
    return [ck.vocab.encode(t, ck.read_len, allow_all_unknown=True).ids for t in texts]


def _predict(
    ck: Checkpoint,
    encoded,
    T: int,
    seed: int,
    shards: Shards,
    bar=None,
    journal=None,
    with_features: bool = False,
):
    """``(probs [T, N, C], logits [T, N, C])`` of token-id rows on rank 0 (None elsewhere); the
    batches of a one-process run are shared out whole, so the numbers are that run's.
    ``journal``: a :class:`uqlab.evaluation.journal.Journal` that keeps finished batches.
    ``with_features=True`` (a model without noise): a third, the pooled features ``[N, D]`` of
    the same passes (:func:`uqlab.evaluation.journal.journaled_samples`)."""
    plan = batch_plan(ck.model, encoded, T)
    mine = shards.indices(len(plan))
    batches = [plan[i] for i in mine]
    probs, logits, feats = journaled_samples(
        ck.model, encoded, T, seed, plan, mine, journal, bar, with_features
    )
    got = shards.collect(batches, (probs, logits), len(encoded), axis=1)
    if feats is None:
        return got
    pooled = shards.collect(batches, (feats,), len(encoded))
    return None if got is None else (*got, pooled[0])


def _sample_splits(ck: Checkpoint, encoded: dict, T: int, seed: int, shards, journal, show, reuse):
    """``(both, feats)``: :func:`_predict`'s ``(probs, logits)`` of every split under one
    progress bar (``show``), and, when ``reuse`` (the distance baseline to feed), the pooled
    features of a pass without noise over the in- and out-of-domain splits, from the same
    sampling calls (else an empty dict): the features pass then reads only the training texts.
    Every rank gets the same keys (None values off rank 0), so every rank skips the same
    features batches."""
    both, feats = {}, {}
    total = sum(_my_rows(ck, e, T, shards) for e in encoded.values())
    with tqdm(total=total, unit="text", desc=ck.name, disable=not show) as bar:
        for k, e in encoded.items():
            pooled = reuse and k in ("id", "ood")
            got = _predict(ck, e, T, seed, shards, bar, journal, with_features=pooled)
            both[k] = None if got is None else got[:2]
            if pooled:
                feats[k] = None if got is None else got[2]
    return both, feats


def _my_rows(ck: Checkpoint, encoded, T: int, shards: Shards) -> int:
    """How many of these rows this rank samples (its progress bar's share)."""
    return sum(len(b) for b in shards.mine(batch_plan(ck.model, encoded, T)))


def _features(ck: Checkpoint, encoded, shards: Shards, bar=None, journal=None):
    """The last layer's pooled features ``[N, D]`` of token-id rows on rank 0 (None elsewhere),
    through ``journal`` as :func:`_predict`."""
    plan = feature_batches(ck.model, encoded)
    mine = shards.indices(len(plan))
    local = journaled_features(ck.model, encoded, plan, mine, journal, bar)
    got = shards.collect([plan[i] for i in mine], (local,), len(encoded))
    return None if got is None else got[0]


def _distance_features(
    ck: Checkpoint, fit, encoded, shards: Shards, show: bool, journal, have: dict
):
    """The Mahalanobis baseline's features: of the training rows ``fit`` and of both domains
    (``encoded["id"]``, ``encoded["ood"]``; those in ``have``, read by the sampling passes,
    are not read again), under one progress bar."""
    sides = tuple(k for k in ("id", "ood") if k not in have)
    rows = sum(_feature_rows(ck, e, shards) for e in (fit, *(encoded[k] for k in sides)))
    with tqdm(total=rows, unit="text", desc=f"{ck.name} features", disable=not show) as bar:
        train_feats = _features(ck, fit, shards, bar, journal)
        read = {k: _features(ck, encoded[k], shards, bar, journal) for k in sides}
        return train_feats, {**have, **read}


def _feature_rows(ck: Checkpoint, encoded, shards: Shards) -> int:
    """How many of these rows this rank reads features of (its progress bar's share)."""
    return sum(len(b) for b in shards.mine(feature_batches(ck.model, encoded)))


def evaluate_checkpoint(
    ck: Checkpoint,
    data_dir=None,
    *,
    T: int = 10,
    seed: int = 0,
    limit: int | None = None,
    per_domain: int = 5,
    progress: bool = True,
    shards: Shards | None = None,
    task: str | None = None,
    ood_limit: int | None = None,
    mahalanobis: bool = True,
    keep: dict | None = None,
    journal: Journal | None = None,  # a stopped run resumes from it
) -> dict | None:
    """Metrics of one checkpoint (see the module docstring) on ``task`` (default: its own,
    :func:`_task_of`). Under torchrun every rank samples its block of each split (``shards``)
    and rank 0 computes and returns the metrics from the gathered samples (the other ranks
    return None). ``ood_limit``: the out-of-domain set alone cut to its first rows (after
    shuffling, as ``limit`` cuts every split; recorded). ``mahalanobis`` False: the second pass
    over the texts (their features, for the Mahalanobis baseline) is not run, and metrics.json
    says so under ``skipped``; it never runs without an out-of-domain set, which it serves.
    ``notes``: :func:`uqlab.evaluation.detection_report.metric_notes` of the figures.
    ``keep``: a dict that receives the splits' samples (``probs``), token ids (``encoded``) and
    the task's data (``data``) on rank 0, for :func:`_comparison`. ``journal``: finished
    batches kept on disk and reused (:mod:`uqlab.evaluation.journal`)."""
    shards = shards or Shards()
    info = ck.training or {}
    task = task or _task_of(ck)
    data = load_task(
        task, resolve_data_dir(data_dir), split_seed=int(info.get("seed", 0)), limit=limit
    )
    data = _cut_ood(data, ood_limit)
    splits = _splits(data)
    encoded = {k: _encode(ck, s.texts) for k, s in splits.items()}
    distance = mahalanobis and "ood" in splits  # the baseline detects the out-of-domain set
    reuse = distance  # the sampling calls give both domains' features (_sample_splits)
    show = progress and shards.main
    both, sampled = _sample_splits(ck, encoded, T, seed, shards, journal, show, reuse)
    say = _say(ck.name, show)
    # the distance baseline's features: the pooled feature of training examples and both domains
    fit_rows = np.random.default_rng(seed).permutation(len(data.train))[:MAHALANOBIS_FIT]
    train_feats = feats = None
    if distance:
        domains = "(both domains': read with their samples)" if sampled else "and both domains"
        say(f"features of {len(fit_rows):,} training texts {domains} (Mahalanobis baseline)")
        fit = _encode(ck, [data.train.texts[i] for i in fit_rows])
        train_feats, feats = _distance_features(ck, fit, encoded, shards, show, journal, sampled)
    picks = table3_picks(data, seed, per_domain)
    say(f"the per-example Table 3 ({len(picks)} texts)")
    table3_probs = _predict(ck, _encode(ck, [p[0] for p in picks]), T, seed, shards, None, journal)
    if not shards.main:
        return None
    probs = {k: p for k, (p, _) in both.items()}
    if keep is not None:
        keep.update(probs=probs, encoded=encoded, data=data)
    scored = tuple(k for k in ("id", "ood") if k in splits)
    metrics = {
        "task": data.task,
        "family": ck.config.family,
        "samples": T,
        "seed": seed,
        "data_source": portable(data.source),
        "sizes": {k: len(splits[k]) for k in scored},
        **({"limit": limit} if limit is not None else {}),  # a part of each split: said
        **({"ood_limit": ood_limit} if ood_limit is not None else {}),  # a part of OOD: said
        "read_len": ck.read_len,
        **{k: summarize(probs[k], splits[k].labels) for k in scored},
    }
    say("calibration, conformal sets and detection scores")
    metrics["error_detection"] = {k: _errors(probs[k], splits[k].labels, seed) for k in scored}
    # temperature scaling fitted on dev (each sample's logits / t, then averaged), then scored
    temperature = fit_temperature(both["dev"][1], data.dev.labels)
    metrics["temperature"] = {"value": temperature, "fitted_on": "dev", "dev_size": len(data.dev)}
    for k in scored:
        mean = scaled_probs(both[k][1], temperature).mean(axis=0)  # [N, C]
        y = splits[k].labels
        metrics[k]["scaled"] = {
            "nll": nll(mean, y),
            "brier": brier(mean, y),
            "ece": ece(mean, y),
            "aece": adaptive_ece(mean, y),
        }
    _conformal(metrics, probs, data, splits, seed)
    if "ood" in splits:
        metrics["ood_detection"] = _detection(probs, both, train_feats, feats, data, fit_rows)
        if not mahalanobis:
            metrics["skipped"] = {"mahalanobis": "--no-mahalanobis: its features were not read"}
        metrics.update(_length_checks(probs, encoded, ck.read_len, seed, data.task))
    if ck.config.backbone != "word":  # said only when not the original word-level encoder
        metrics["backbone"] = ck.config.backbone
    metrics["table3"] = table3_rows(picks, table3_probs[0])
    metrics["notes"] = metric_notes(metrics)  # for whoever reads the file (pages recompute them)
    return metrics


def _conformal(metrics: dict, probs: dict, data: TaskData, splits: dict, seed: int) -> None:
    """Split conformal sets at 90 % coverage calibrated on dev (the mean prediction): the dev
    LAC scores, each scored split's coverage and set sizes, and the in-domain coverage over
    random re-splits, into ``metrics``."""
    scored = tuple(k for k in ("id", "ood") if k in splits)
    means = {k: p.mean(axis=0) for k, p in probs.items()}  # [N, C] per split
    cal_scores = {
        m: calibration_scores(means["dev"], data.dev.labels, m) for m in CONFORMAL_METHODS
    }
    metrics["conformal_calibration"] = {  # LAC sets at any coverage (the app's slider reads
        "on": "dev",  # these alone; APS's were 40 % of the shipped metrics.json, never read)
        "samples": metrics["samples"],
        "seed": seed,
        "scores": encode_scores(cal_scores["lac"]),  # ~1/3 of a list of decimals
    }
    for method in CONFORMAL_METHODS:
        cal = conformal_from_scores(cal_scores[method], 0.9, method)
        for k in scored:
            sets = cal.sets(means[k])
            metrics[k].setdefault("conformal_90", {})[method] = conformal_summary(
                sets, splits[k].labels
            )
        # the guarantee itself: coverage over random re-splits of dev + in-domain test
        held = calibration_scores(means["id"], splits["id"].labels, method)
        metrics["id"]["conformal_90"][method]["resampled"] = resampled_coverage(
            cal_scores[method], held, 0.9, RESPLITS, seed
        ).as_dict()


def _detection(probs, both, train_feats, feats, data, fit_rows) -> dict:
    """Out-of-domain detection by every score: AUROC, AUPR, FPR at 95 % TPR."""
    detection = {}

    def scored_by(r) -> dict[str, float]:
        return {"auroc": r.auroc, "aupr": r.aupr, "fpr_at_95_tpr": r.fpr_at_95_tpr}

    for score in OOD_SCORES:
        r = ood_detection(ood_scores(probs["id"], score), ood_scores(probs["ood"], score))
        detection[score] = scored_by(r)
    for score in LOGIT_SCORES:
        r = ood_detection(*(logit_scores(both[k][1], score) for k in ("id", "ood")))
        detection[score] = scored_by(r)
    if train_feats is None:  # --no-mahalanobis
        return detection
    # the distance baseline: Mahalanobis distance of the [CLS] feature to the training classes
    maha = fit_mahalanobis(train_feats, [data.train.labels[i] for i in fit_rows])
    r = ood_detection(*(maha.scores(feats[k]) for k in ("id", "ood")))
    detection["mahalanobis"] = {**scored_by(r), "fitted_on": f"{len(fit_rows)} training examples"}
    return detection


def _errors(probs, labels, seed: int) -> dict:
    """Error detection by every score, and each score against 1 - max p on the same texts."""
    found = error_detection(probs, labels)
    found["versus_max_prob"] = errors_versus_max_prob(probs, labels, seed)
    return found


def _splits(data: TaskData) -> dict[str, Split]:
    """What is sampled: the in-domain test split (``id``), the out-of-domain set (``ood``, when
    the task has one), ``dev`` (temperature, conformal sets) and the out-of-domain texts cut to
    the in-domain texts' form (``ood_matched``, when the task's description names them)."""
    splits = {"id": data.test, "ood": data.ood, "dev": data.dev, "ood_matched": data.ood_matched}
    return {k: s for k, s in splits.items() if k in ("id", "dev") or len(s)}


def _length_checks(probs, encoded, read_len: int, seed: int, task: str) -> dict:
    """Is the OOD AUROC length? Within bins of tokens read, and on both domains drawn to one
    length histogram (:func:`uqcore.inference.detection.matched_ood_detection`): the in-domain
    texts against the task's ``ood_matched`` texts when it has them (named under ``set``; the
    reviews cut into sentences where the in-domain texts are sentences), else its OOD set."""
    lengths = {k: [len(e) for e in texts] for k, texts in encoded.items()}  # tokens read
    other = "ood_matched" if "ood_matched" in probs else "ood"
    matched = matched_ood_detection(
        probs["id"], probs[other], lengths["id"], lengths[other], read_len, seed
    )
    if other == "ood_matched":
        matched["set"] = str(TASKS[task].description["ood_matched"].get("name") or other)
    by_length = _by_length(probs, lengths, read_len)
    return {"ood_detection_by_length": by_length, "ood_detection_length_matched": matched}


def _by_length(probs, lengths, read_len: int) -> dict:
    """OOD detection by each probability score within bins of tokens read
    (:func:`uqcore.inference.detection.detection_by_length`)."""
    edges = length_edges(read_len)
    out: dict = {"edges": edges, "min_per_side": MIN_PER_SIDE}
    for score in OOD_SCORES:
        bins = detection_by_length(
            *(ood_scores(probs[k], score) for k in ("id", "ood")),
            lengths["id"],
            lengths["ood"],
            edges,
        )
        out[score] = [b.as_dict() for b in bins]
    return out


def _say(name: str, on: bool):
    """A one-line stage message with the seconds since the last one (no silent stretches)."""
    last = [time.perf_counter()]

    def say(what: str) -> None:
        if on:
            now = time.perf_counter()
            print(f"{name}: {what} (+{now - last[0]:.1f} s)", flush=True)
            last[0] = now

    return say


PREVIOUS = "metrics.previous.json"  # the metrics.json an evaluation replaced, kept once


def write_metrics(path: Path, metrics: dict, sink=write_atomic) -> None:
    """Write ``metrics.json``; the one it replaces (if any) is kept as :data:`PREVIOUS`."""
    old = Path(path) / "metrics.json"
    if old.is_file():
        sink(Path(path) / PREVIOUS, old.read_bytes())
    # compact: the shipped files sit under the assets budget (indent=1 made them half again
    # larger: one line per number of the conformal scores)
    sink(old, json.dumps(metrics, separators=(",", ":")).encode())


def _commit(name: str, pending: Pending, stored_file, map_file) -> None:
    """Write what a checkpoint's evaluation produced (only now: a failure before this point
    leaves its folder byte-identical) and say where."""
    if not pending.files:  # not rank 0, or nothing to write
        return
    pending.commit()
    if stored_file is not None:
        print(f"{name}: stored samples -> {stored_file}")
    if map_file is not None:
        print(f"{name}: map of the examples -> {map_file}")


def _kept(ck: Checkpoint, task: str) -> str:
    """What an evaluation on ``task``, which has no bundled examples, does with the stored
    samples and map of the checkpoint: nothing (one sentence that says so)."""
    held = [f for f in (STORED_FILE, MAP_FILE) if (Path(ck.path) / f).is_file()]
    kept = f"{' and '.join(held)} kept as they were" if held else "none written"
    return (
        f"task {task!r} has no bundled examples (its description names no 'examples' "
        f"files): stored samples and map {kept}."
    )


def _parser() -> argparse.ArgumentParser:
    """The command line of :func:`main`."""
    p = argparse.ArgumentParser(
        prog="python -m uqlab.evaluate", description=__doc__.splitlines()[0]
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--ckpt", action="append", help="checkpoint name or directory (repeatable)")
    which.add_argument("--all", action="store_true", help="every checkpoint under --root")
    p.add_argument("--root", default=str(checkpoint_dir()))
    p.add_argument("--samples", type=int, default=10, help="T sampled runs (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", help="folder laid out like ../shared/data (default $UQ_DATA_DIR)")
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="cap every split (test, out-of-domain, dev, train) at its first N rows after "
        "shuffling: smoke runs",
    )
    p.add_argument(
        "--ood-limit",
        type=int,
        metavar="N",
        help="cap the out-of-domain set alone at its first N rows after shuffling (recorded "
        "in metrics.json as ood_limit)",
    )
    p.add_argument(
        "--no-mahalanobis",
        dest="mahalanobis",
        action="store_false",
        help="skip the second pass over the texts: the features of up to "
        f"{MAHALANOBIS_FIT:,} training texts and both domains behind the Mahalanobis OOD "
        "baseline (metrics.json then has no mahalanobis row and says so under 'skipped')",
    )
    p.add_argument("--table3", type=int, default=5, help="seeded examples per domain")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or auto")
    p.add_argument("--quiet", action="store_true")
    p.add_argument(
        "--task-file",
        help="the task's description (default: the one the checkpoint "
        "was trained with, kept in its config.json)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads per process (default: 2 alone, 2 // N under torchrun); "
        "a one-process run equals an N-process one bit for bit at the same threads",
    )
    p.add_argument(
        "--stored-only",
        action="store_true",
        help="only write the stored samples of the bundled examples (uqlab.evaluation.stored)",
    )
    p.add_argument(
        "--baseline",
        default="auto",
        help="the deterministic checkpoint the comparison block pairs this one with on the "
        "same texts (default auto: same task, backbone and base; none: no pairing)",
    )
    p.add_argument(
        "--comparison-only",
        action="store_true",
        help="only (re)compute the comparison block of an evaluated checkpoint: its samples "
        "on dev, test and the length-matched texts, and its baseline's, at the settings "
        "its metrics.json records (uqlab.evaluation.comparison)",
    )
    p.add_argument(
        "--journal",
        metavar="DIR",
        help="keep every finished batch of samples and features in DIR; a rerun with the same "
        "DIR computes only the batches it lacks, to the same numbers (a long CPU evaluation "
        "survives being stopped; uqlab.evaluation.journal). Delete DIR after a code change",
    )
    return p


def _journal(ck: Checkpoint, args) -> Journal | None:
    """The ``--journal`` folder's journal for ``ck``'s model, or None without one; says how many
    finished batches the folder holds (those of this run are read, not computed)."""
    if not args.journal:
        return None
    journal = Journal.open(args.journal, ck.model, ck.name)
    done = journal.done()
    if not args.quiet and done:
        print(f"journal: {done:,} finished batch(es) in {args.journal}", flush=True)
    return journal


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.ood_limit is not None and args.ood_limit < 1:
        p.error(f"--ood-limit must be a positive integer, got {args.ood_limit}")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    tune_cpu(args.threads or max(1, 2 // world))  # this machine's 2 cores, shared by the ranks
    shards, device = join(args.device)
    try:
        paths = (
            [Path(i.path) for i in list_checkpoints(args.root) if not i.error]
            if args.all
            else [_locate(c, args.root) for c in args.ckpt]
        )
        for path in paths:
            ck = load_checkpoint(path, shared_weights=True)  # a folder of checkpoints
            ck.model.to(device if shards.world > 1 else pick_device(args.device))
            task = _task_of(ck, args.task_file)
            ck.training = {**ck.training, "task": task}  # this run's task, for every writer
            if args.comparison_only:  # the evaluation stands; its comparison block is redone
                if shards.main:  # by rank 0 alone (a torchrun's other ranks wait)
                    _comparison_only(ck, path, task, args)
                continue
            pending = Pending()  # nothing is written into the checkpoint before all succeeded
            journal = _journal(ck, args)
            stored_file, map_file = _stored(ck, task, args, shards, pending, journal)
            shards.barrier()
            if args.stored_only:
                _commit(ck.name, pending, stored_file, map_file)
                continue
            started = time.perf_counter()
            keep: dict = {}
            metrics = evaluate_checkpoint(
                ck,
                args.data_dir,
                T=args.samples,
                seed=args.seed,
                limit=args.limit,
                per_domain=args.table3,
                progress=not args.quiet,
                shards=shards,
                task=task,
                ood_limit=args.ood_limit,
                mahalanobis=args.mahalanobis,
                keep=keep,
                journal=journal,
            )
            if metrics is None:  # not rank 0: its samples went to rank 0
                continue
            metrics["comparison"] = _comparison(ck, keep, args)
            write_metrics(path, metrics, sink=pending.put)
            _commit(ck.name, pending, stored_file, map_file)
            _report(ck.name, metrics, path, time.perf_counter() - started, shards.world)
        shards.barrier()  # the ranks leave together: rank 0 may still be writing (gloo aborts)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        leave()
    return 0


def _stored(ck: Checkpoint, task: str, args, shards: Shards, pending: Pending, journal=None):
    """``(stored_file, map_file)``: the stored samples and map of the task's bundled examples,
    put in ``pending`` by rank 0 (None where nothing is stored: other ranks, or a task without
    bundled examples, whose files are kept as they are); the map's feature batches go through
    ``journal`` (a rerun of a stopped evaluation does not read them again)."""
    if shards.main and not bundled_rows(task):  # nothing to store: keep what is there
        print(f"{ck.name}: {_kept(ck, task)}", flush=True)
    if not shards.main or not bundled_rows(task):
        return None, None
    total = len(bundled_rows(task)) + len(preset_rows(task))
    with tqdm(total=total, unit="text", desc=f"{ck.name} stored", disable=args.quiet) as bar:
        stored_file = write_stored(ck, seed=args.seed, bar=bar, sink=pending.put)
    n = len(bundled_rows(task))  # the map reads their features: minutes on a CPU for SmolLM2
    with tqdm(total=n, unit="text", desc=f"{ck.name} map", disable=args.quiet) as bar:

        def told(share: float) -> None:  # features() reports a share of the texts read
            bar.update(round(share * n) - bar.n)

        return stored_file, write_map(ck, sink=pending.put, bar=told, journal=journal)


def _report(name: str, m: dict, path: Path, seconds: float, world: int) -> None:
    """The evaluation's summary line and its notes, printed."""
    ood = "no ood set "
    if "ood" in m:
        auroc = m["ood_detection"]["mutual_information"]["auroc"]
        ood = f"ood acc {m['ood']['accuracy_mean']:.4f} AUROC(MI) {auroc:.3f} "
    print(
        f"{name}: id acc {m['id']['accuracy_mean']:.4f}±{m['id']['accuracy_std']:.4f} "
        f"{ood}-> {path}/metrics.json ({seconds:.1f} s, {world} process(es))"
    )
    for note in m["notes"]:  # beside the figures: backwards scores, length, scaling
        print(f"{name}: note: {note}")
    said = comparison_line(m.get("comparison"))
    if said:
        print(f"{name}: {said}")


def _cut_ood(data: TaskData, ood_limit: int | None) -> TaskData:
    """``data`` with its out-of-domain set cut to its first ``ood_limit`` rows (None: whole)."""
    if ood_limit is None:
        return data
    if isinstance(ood_limit, bool) or not isinstance(ood_limit, int) or ood_limit < 1:
        raise UQError(f"--ood-limit must be a positive integer, got {ood_limit!r}.")
    cut = Split("ood", data.ood.texts[:ood_limit], data.ood.labels[:ood_limit])
    return dataclasses.replace(data, ood=cut)


def _baseline(ck: Checkpoint, args) -> Checkpoint | None:
    """The deterministic checkpoint ``ck`` is compared with (``--baseline``: a name or folder,
    ``auto`` or ``none``; auto looks among ``ck``'s sibling folders,
    :func:`uqlab.evaluation.comparison.find_baseline`), loaded; None when there is none."""
    if args.baseline == "none":
        return None
    home = Path(ck.path).parent  # the folder of checkpoints ck sits in
    name = args.baseline
    if name == "auto":
        name = find_baseline(Path(ck.path).name, list_checkpoints(home))
    if name is None or Path(name).name == Path(ck.path).name:
        return None
    base = load_checkpoint(_locate(name, str(home)), shared_weights=True)
    base.model.to(pick_device(args.device))
    return base


def _comparison(ck: Checkpoint, keep: dict, args) -> dict:
    """The ``comparison`` block (:mod:`uqlab.evaluation.comparison`) from the samples an
    evaluation kept (``keep``: ``probs``, ``encoded``, ``data``), the baseline sampled here on
    the same texts (once when its samples never differ)."""
    probs, encoded, data = keep["probs"], keep["encoded"], keep["data"]
    side = next((k for k in ("ood_matched", "ood") if k in probs), None)  # what is matched
    mine = {"id": probs["id"], "dev": probs["dev"], **({"ood": probs[side]} if side else {})}
    lengths = {"id": [len(e) for e in encoded["id"]]}
    texts = {"id": data.test.texts}
    if side:
        lengths["ood"] = [len(e) for e in encoded[side]]
        texts["ood"] = getattr(data, side).texts
    seed = keep.get("seed", args.seed)  # the evaluation's: its samples were drawn with it
    b = _baseline(ck, args)
    base = None
    if b is not None:
        # sampled at the evaluation's T even when one pass stands for every sample (a plain
        # baseline, kept as that one sample): the batches, and so the --journal files, are then
        # those of the baseline's own evaluation at that T, read back instead of computed again
        T = keep.get("T", args.samples)
        one = deterministic(b.config.family)
        desc = f"{ck.name} baseline {b.name}"
        total = sum(len(t) for t in texts.values())
        journal = _journal(b, args)
        with tqdm(total=total, unit="text", desc=desc, disable=args.quiet) as bar:
            got = {k: _sampled(b, t, T, seed, journal, bar) for k, t in texts.items()}
        base = (b.name, {k: np.asarray(v[:1] if one else v) for k, v in got.items()})
    named = TASKS[data.task].description.get("ood_matched") if side == "ood_matched" else None
    matched_set = str((named or {}).get("name") or side) if named is not None else None
    labels = {"id": data.test.labels, "dev": data.dev.labels}
    return comparison(mine, labels, lengths, ck.read_len, base, seed=seed, matched_set=matched_set)


def _sampled(ck: Checkpoint, texts, T: int, seed: int, journal, bar) -> torch.Tensor:
    """``probs [T, N, C]`` of ``texts`` as :func:`uqcore.inference.batch_predict.predict` gives
    them, through ``journal`` (None: none)."""
    return _sampled_ids(ck, _encode(ck, texts), T, seed, journal, bar)


def _sampled_ids(ck: Checkpoint, encoded, T: int, seed: int, journal, bar) -> torch.Tensor:
    """``probs [T, N, C]`` of token-id rows as
    :func:`uqcore.inference.batch_predict.predict_ids` gives them, through
    ``journal`` (None: none)."""
    plan = batch_plan(ck.model, encoded, T)
    every = range(len(plan))
    return journaled_samples(ck.model, encoded, T, seed, plan, every, journal, bar)[0]


def _comparison_only(ck: Checkpoint, path: Path, task: str, args) -> None:
    """Redo the ``comparison`` block of an evaluated checkpoint alone, at the samples, seed and
    parts (``limit``, ``ood_limit``) its metrics.json records; the rest of the file is kept."""
    file = Path(path) / "metrics.json"
    if not file.is_file():
        raise UQError(
            f"{ck.name} has no metrics.json: evaluate it first (without --comparison-only)."
        )
    old = json.loads(file.read_text())
    T, seed = int(old.get("samples", args.samples)), int(old.get("seed", args.seed))
    data = load_task(
        task,
        resolve_data_dir(args.data_dir),
        split_seed=int((ck.training or {}).get("seed", 0)),
        limit=old.get("limit"),
    )
    data = _cut_ood(data, old.get("ood_limit"))
    drawn = (old.get("ood_detection_length_matched") or {}).get("set")
    if drawn and not len(data.ood_matched):  # the evaluation drew texts this task lacks
        raise UQError(
            f"{ck.name} was evaluated with length-matched texts ({drawn}) that task {task!r} "
            "as its checkpoint describes it has none of: pass the task file it was evaluated "
            "with (--task-file)."
        )
    splits = _splits(data)
    side = next((k for k in ("ood_matched", "ood") if k in splits), None)
    wanted = ("id", "dev", *((side,) if side else ()))
    encoded = {k: _encode(ck, splits[k].texts) for k in wanted}
    total = sum(len(e) for e in encoded.values())
    journal = _journal(ck, args)  # an evaluation's journal holds these very batches
    with tqdm(total=total, unit="text", desc=f"{ck.name} comparison", disable=args.quiet) as bar:
        probs = {
            k: np.asarray(_sampled_ids(ck, e, T, seed, journal, bar)) for k, e in encoded.items()
        }
    keep = {"probs": probs, "encoded": encoded, "data": data, "T": T, "seed": seed}
    old["comparison"] = _comparison(ck, keep, args)
    write_metrics(path, old)
    print(f"{ck.name}: {comparison_line(old['comparison']) or 'comparison written'} -> {file}")


def _task_of(ck: Checkpoint, task_file: str | None = None) -> str:
    """The task ``ck`` is evaluated on (:func:`uqlab.catalog.task_file.checkpoint_task`: its own, or
    ``task_file``'s when it names none; a file for another task is refused), its note
    printed, or a UQError when its classes do not match the task's labels."""
    task, note = checkpoint_task(ck.name, ck.training, task_file)
    if note:
        print(f"note: {note}", file=sys.stderr)
    labels = TASKS[task].label_names
    if len(labels) != ck.config.num_classes:
        raise UQError(
            f"{ck.name} has {ck.config.num_classes} classes but task {task!r} has "
            f"{len(labels)} ({', '.join(labels)}); give the task it was trained on."
        )
    return task


def _locate(name_or_path: str, root: str) -> Path:
    path = Path(name_or_path)
    return path if path.is_dir() else Path(root) / name_or_path


if __name__ == "__main__":
    sys.exit(main())
