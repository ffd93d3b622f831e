"""Train a checkpoint: ``python -m uqlab.train --task imdb --family hsto [options]``.

Works the same under ``torchrun --nproc_per_node=N`` (data-parallel with DistributedDataParallel,
gloo on CPU, nccl on GPU) and uses a GPU when one is present. Writes a resumable state under
``<out>/.train/`` as it goes (rerun the same command to resume) and the best model (by dev
accuracy for IMDB, MCC for CoLA) as a strict checkpoint directory ``<out>/``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
from tqdm import tqdm

from uqcore.build import DeepEnsemble, build_model, frozen_names, load_base
from uqcore.checkpoint import save_checkpoint
from uqcore.exceptions import ConfigError, UQError
from uqcore.families import title as family_title
from uqcore.nets.noise import sample_seed
from uqcore.text.vocab import N_SPECIALS, Vocab
from uqlab.bases import get_base
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.provenance import portable, portable_training
from uqlab.catalog.task_file import read_task_file
from uqlab.catalog.tasks import TASK_NAMES, get_task
from uqlab.data import load_task, resolve_data_dir
from uqlab.evaluation.shards import join, leave
from uqlab.training.batches import encode_split
from uqlab.training.centroids import init_centroids_from_keys
from uqlab.training.continued import apply_start, load_start
from uqlab.training.loop import Dist, slow_autocast, train_model
from uqlab.training.pretrained import word_vectors
from uqlab.training.recipe import TrainConfig, build_config, read_config_file
from uqlab.training.storage import storage_check


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m uqlab.train", description=__doc__.splitlines()[0])
    p.add_argument("--task", help=f"{', '.join(TASK_NAMES)}, or 'task' in the --config file")
    p.add_argument("--task-file", help="a task described by a JSON file (uqlab.catalog.task_file)")
    p.add_argument("--family", help="model family, or 'family' in the --config file")
    p.add_argument(
        "--out", help="checkpoint directory (default assets/checkpoints/<task>-<family>)"
    )
    p.add_argument(
        "--config", help="JSON file of training settings (see uqcore/training/config.py)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set model.attention.tau2=40 (repeatable)",
    )
    p.add_argument("--data-dir", help="folder laid out like ../shared/data (default: $UQ_DATA_DIR)")
    for flag, kind in (
        ("seed", int),
        ("epochs", int),
        ("patience", int),
        ("batch-size", int),
        ("lr", float),
        ("device", str),
        ("save-dtype", str),
    ):
        p.add_argument(f"--{flag}", type=kind)
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="a smoke run: every split is cut to its first N rows after shuffling, dev too "
        "(the best epoch is then picked on N dev texts), not only train",
    )
    p.add_argument(
        "--base",
        help="train adapters on a pretrained base (minilm, smollm2), starting from its shipped "
        "recipe (configs/<task>-<base>-<family>.json without its task)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def setup_distributed(device: str) -> tuple[Dist, torch.device]:
    """Join the process group when started by torchrun; pick the device
    (uqlab.evaluation.shards)."""
    shards, dev = join(device)
    if dev.type == "cuda":
        deterministic_cuda()
    return shards, dev


def deterministic_cuda() -> None:
    """Make a CUDA run repeat itself bit for bit: the same command gives the same weights.

    Without it, CUDA kernels that accumulate with atomics sum in whatever order the threads
    finish (which op did it here was not pinned down): an H-STO run retrained on an H100 ended
    0.4 points of dev accuracy away from the first. cuBLAS needs a fixed workspace for the same
    guarantee; the variable must be set before its first call, so this runs before the model
    moves to the GPU.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)


def _start(tc: TrainConfig) -> tuple[Dist, torch.device, Callable]:
    """The run's process group, device and log (rank 0 prints), TF32 set as the recipe says;
    warns first when the recipe's autocast would crawl on this CPU (:func:`slow_autocast`)."""
    dist_ctx, device = setup_distributed(tc.device)
    torch.backends.cuda.matmul.allow_tf32 = bool(tc.tf32)  # CUDA only (TrainConfig.tf32)
    log = print if dist_ctx.main else (lambda *a, **k: None)
    note = slow_autocast(tc, device)
    if note:
        log(note, flush=True)
    return dist_ctx, device, log


def _initial_weights(
    member, seed: int, vectors, base_folder, train, log: Callable, start=None
) -> None:
    """Give ``member`` its starting weights for ``seed``: fresh ones, then MiniLM's input
    vectors (``vectors`` [V - 3, D], when the recipe asks) or a pretrained base's frozen
    weights, with H-STO centroids from k-means of the base's keys on ``train``, or, given
    ``start`` (a source member's trained tensors, :mod:`uqlab.training.continued`), those."""
    torch.manual_seed(seed)  # each member's own initial weights
    for module in member.modules():
        if hasattr(module, "reset_parameters") and module is not member:
            module.reset_parameters()
    if vectors is not None:
        with torch.no_grad():
            weight = member.embed.weight
            weight[N_SPECIALS:] = vectors.to(weight.device)  # specials stay random
    if base_folder is not None:  # the base's weights, frozen; adapters & co. train
        load_base(member, base_folder)
        frozen = frozen_names(member.cfg)
        for pname, param in member.named_parameters():
            param.requires_grad_(pname not in frozen and param.requires_grad)
        if start is not None:
            apply_start(member, start)
            return
        placed = init_centroids_from_keys(member, list(train.ids), seed)
        if placed:
            log(f"H-STO centroids of layer(s) {placed} start from k-means of the base's keys")


def run(tc: TrainConfig, quiet: bool = False) -> Path:
    dist_ctx, device, log = _start(tc)
    started = time.time()
    data = load_task(tc.task, resolve_data_dir(tc.data_dir), split_seed=tc.seed, limit=tc.limit)
    base = get_base(tc.base) if tc.base else None
    base_folder = base.path() if base is not None else None
    if base is not None:  # the base's own tokenizer
        vocab = base.tokenizer()
    else:
        vocab = Vocab.build(data.train.texts, max_size=tc.vocab_size, min_freq=tc.min_freq)
    train, dev = (
        encode_split(data.train, vocab, tc.max_len),
        encode_split(data.dev, vocab, tc.max_len),
    )
    cfg = tc.model_config(vocab_size=len(vocab))
    cut = f" (--limit {tc.limit}: dev cut as well as train)" if tc.limit is not None else ""
    log(
        f"{tc.task}/{tc.family}: {len(train)} train, {len(dev)} dev{cut}, {len(vocab)} ids, "
        f"{dist_ctx.world} process(es) on {device}"
    )
    out = Path(tc.out)
    bar = None if quiet or not dist_ctx.main else (lambda **kw: tqdm(unit="batch", **kw))
    torch.manual_seed(tc.seed)
    model = build_model(cfg).to(device)
    members = list(model.members) if isinstance(model, DeepEnsemble) else [model]
    vectors = None
    if tc.pretrained_embeddings == "minilm":
        vectors, covered = word_vectors(vocab.words, cfg.d_model)  # [V - 3, D]
        log(f"MiniLM input vectors for {len(vocab.words)} words ({covered:.1%} without [UNK])")
    start = load_start(tc.init_from, cfg, tc.base) if tc.init_from else None
    if start is not None:
        log(f"starting from {start.record['checkpoint']} (trained at {start.record['max_len']})")
    history = []
    earlier = 0.0  # seconds the members' loops ran in the processes before this one
    for m, member in enumerate(members):
        seed = sample_seed(tc.seed, m) if len(members) > 1 else tc.seed
        begin = start.members[m] if start is not None else None
        _initial_weights(member, seed, vectors, base_folder, train, log, begin)
        state_dir = out / ".train" / (f"member-{m}" if len(members) > 1 else "model")
        here = time.monotonic()
        best, progress = train_model(
            member, train, dev, tc, data.metric, seed, state_dir, dist_ctx, bar
        )
        # a resumed member's loop also ran in earlier processes: their time counts too
        earlier += max(0.0, progress.seconds - (time.monotonic() - here))
        member.load_state_dict(best)
        history.append(
            {
                "member": m,
                "best_epoch": progress.best_epoch,
                f"dev_{data.metric}": progress.best_metric,
                "history": progress.history,
            }
        )
        log(
            f"member {m}: best dev {data.metric} {progress.best_metric:.4f} "
            f"at epoch {progress.best_epoch}"
        )
    if dist_ctx.main:
        seconds = time.time() - started + earlier
        training = _training_record(tc, data, history, seconds, dist_ctx.world, start)
        dtype = torch.float16 if tc.save_dtype == "float16" else None
        model = model.cpu()
        if dtype is not None:
            # every ensemble member is checked: sample t is member t mod ensemble_size
            samples = max(2, cfg.ensemble_size)
            training["storage"] = check = storage_check(model, dev.ids, dtype, T=samples)
            log(
                f"{check['dtype']} storage: max |Δ log p| {check['max_abs_log_prob_diff']:.2e} "
                f"on {check['examples']} dev texts x {check['samples']} samples, "
                f"argmax agreement {check['argmax_agreement']:.4f}"
            )
        record = base.record() if base is not None else None
        save_checkpoint(
            out,
            model,
            cfg,
            vocab,
            training=training,
            card=_card(tc, history),
            dtype=dtype,
            base=record,
        )
        log(f"wrote {out}")
    if dist_ctx.world > 1:
        dist.barrier()
    return out


def _training_record(
    tc: TrainConfig, data, history: list[dict], seconds: float, world: int, start
) -> dict:
    """The checkpoint's ``training`` record: the recipe, data, members' dev history,
    ``seconds`` (this process's wall time and the loops of the earlier ones it resumed),
    ``world`` processes and, for a continued run, where it started (``init_from``)."""
    training = {
        "task": tc.task,
        "family": tc.family,
        "seed": tc.seed,
        "label_names": data.label_names,
        "metric": data.metric,
        "data_source": portable(data.source),
        "members": history,
        "splits": {s: len(getattr(data, s)) for s in ("train", "dev", "test", "ood")},
        "config": portable_training({"config": tc.to_dict()}, fresh=True)["config"],
        "seconds": round(seconds, 1),
        "command": "python -m uqlab.train " + " ".join(sys.argv[1:]),
        # same bits need the same thread count: it sets the order of float sums on the CPU
        "threads": torch.get_num_threads(),
        "processes": world,
    }
    if start is not None:  # what the run went on from; its seconds are not in "seconds"
        training["init_from"] = start.record
    spec = get_task(tc.task)
    if not spec.builtin:  # evaluating or opening it needs no task file
        training["task_spec"] = spec.description
    return training


def _card(tc: TrainConfig, history: list[dict]) -> str:
    def best(h: dict) -> str:
        key = next(k for k in h if k.startswith("dev_"))  # "dev_accuracy" or "dev_mcc"
        return f"{key[4:]} {h[key]:.4f}"

    scores = ", ".join(best(h) for h in history)
    command = "python -m uqlab.train " + " ".join(sys.argv[1:])
    return _card_text(Path(tc.out).name, tc.task, tc.family, tc.seed, scores, command)


def _card_text(name: str, task: str, family: str, seed: int, scores: str, command: str) -> str:
    """The model card, titled by the checkpoint's own name (its folder)."""
    return (
        f"# {name}\n\n{family_title(family)} trained on {task} with seed {seed}."
        f"\n\nBest dev: {scores}.\n\nRetrain (same seed, same weights): `{command}`; every "
        "setting is in `config.json` -> `training.config`.\n"
    )


def _config_task_file(config: str | None) -> str | None:
    """A config file's ``task_file`` (relative to the config file's folder), if it names one."""
    if not config:
        return None
    try:
        value = read_config_file(config).get("task_file")
    except (OSError, ValueError):  # ConfigError is a ValueError
        return None  # _identity says what is wrong with the file
    return None if not isinstance(value, str) else str(Path(config).parent / value)


def _identity(args: argparse.Namespace) -> tuple[str, str, str]:
    """Task, family and checkpoint name from the flags or, failing them, the --config file
    (whose ``name`` defaults to ``<task>-<family>``)."""
    file: dict = {}
    if args.config:
        try:  # bounded (uqcore.untrusted); a ConfigError names the file and the problem
            file = read_config_file(args.config)
        except OSError as exc:
            raise ConfigError(
                f"Cannot read config file {args.config}: {exc.strerror or type(exc).__name__}."
            ) from None
    task, family = args.task or file.get("task"), args.family or file.get("family")
    if not task or not family:
        raise ConfigError("Give --task and --family, or a --config file that names them.")
    base = args.base or file.get("base")
    return task, family, file.get("name", "-".join(filter(None, (task, base, family))))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        task_file = args.task_file or _config_task_file(args.config)
        if task_file:  # registered in the task table; its name is the task
            args.task = read_task_file(task_file).name
        task, family, name = _identity(args)
        out = args.out or str(checkpoint_dir() / name)
        tc = build_config(
            task,
            family,
            out,
            config_file=args.config,
            overrides=args.overrides,
            data_dir=args.data_dir,
            seed=args.seed,
            epochs=args.epochs,
            patience=args.patience,
            batch_size=args.batch_size,
            lr=args.lr,
            limit=args.limit,
            device=args.device,
            save_dtype=args.save_dtype,
            base=args.base,
        )
        run(tc, quiet=args.quiet)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        # torchrun: leave the group before the interpreter exits; gloo's threads still alive at
        # exit aborted a worker ("terminate called without an active exception") under load
        leave()
    return 0


if __name__ == "__main__":
    sys.exit(main())
