"""Bench of one training step in float32 and under bfloat16 autocast:
``python -m tools.bench_train_step [--config configs/imdb-smollm2-trans.json] [--rows 4]
[--repeats 3]``.

Builds the config's model as :mod:`uqlab.train` builds it (a pretrained base loaded and frozen,
its adapters trainable), without data: ``--rows`` random token rows of the config's ``max_len``
tokens, no padding, labels alternating. Each precision runs one warm-up step, then
``--repeats`` timed steps (forward with the trainer's loss, :func:`uqlab.training.loop._loss`,
under the trainer's context, then backward), twice in alternation so that drift of a shared
machine shows. Prints the seconds of every timed step and one JSON line; figures only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

from uqcore.build import build_model, frozen_names, load_base
from uqcore.exceptions import ConfigError, UQError
from uqcore.nets.noise import sample_seed
from uqcore.settings import resolve
from uqlab.bases import get_base
from uqlab.catalog.task_file import read_task_file
from uqlab.training.loop import _autocast, _loss
from uqlab.training.recipe import TrainConfig, build_config, read_config_file

PRECISIONS = (None, "bfloat16")  # TrainConfig.autocast values


def config_of(path: str) -> TrainConfig:
    """The training config of a config file, its task named in it or by its ``task_file``."""
    raw = read_config_file(path)
    task = raw.get("task")
    if not task and isinstance(raw.get("task_file"), str):  # a task file beside the config
        task = read_task_file(Path(path).parent / raw["task_file"]).name
    if not task or not raw.get("family"):
        raise ConfigError(f"{path} names no task (or task_file) and family.")
    return build_config(task, raw["family"], "-", config_file=path)


def model_of(tc: TrainConfig) -> torch.nn.Module:
    """The config's model with its base loaded and frozen, as training starts it."""
    if tc.base is None:
        raise SystemExit("This bench times a pretrained base's step: use a config with a base.")
    base = get_base(tc.base)
    cfg = tc.model_config(vocab_size=len(base.tokenizer()))
    model = build_model(cfg)
    load_base(model, base.path())
    frozen = frozen_names(cfg)
    for name, param in model.named_parameters():
        param.requires_grad_(name not in frozen and param.requires_grad)
    return model.train()


def step_seconds(model, tc: TrainConfig, rows: int, repeats: int) -> list[float]:
    """Seconds of ``repeats`` training steps of ``rows`` random rows after one warm-up."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, model.cfg.vocab_size, (rows, tc.max_len), generator=generator)
    batch = SimpleNamespace(
        ids=ids,
        mask=torch.ones_like(ids, dtype=torch.bool),
        labels=torch.arange(rows) % model.cfg.num_classes,
        positions=list(range(rows)),
    )
    settings = resolve(model.cfg, training=True)
    seconds = []
    for r in range(repeats + 1):
        model.zero_grad(set_to_none=True)
        started = time.perf_counter()
        with _autocast(tc, "cpu"):
            loss = _loss(model, model.cfg, batch, 0, rows, settings, sample_seed(0, r), 0.0, "cpu")
        loss.backward()
        if r:
            seconds.append(round(time.perf_counter() - started, 3))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/imdb-smollm2-trans.json")
    parser.add_argument("--rows", type=int, default=4, help="rows a step (default 4)")
    parser.add_argument("--repeats", type=int, default=3, help="timed steps a round (default 3)")
    args = parser.parse_args(argv)
    try:
        tc = config_of(args.config)
    except (OSError, UQError) as exc:  # a missing, unreadable or bad config: one line
        print(f"error: {exc}", file=sys.stderr)
        return 2
    model = model_of(tc)
    out: dict = {"config": args.config, "rows": args.rows, "max_len": tc.max_len}
    out["threads"] = torch.get_num_threads()
    for round_ in (1, 2):
        for precision in PRECISIONS:
            run = dataclasses.replace(tc, autocast=precision)
            secs = step_seconds(model, run, args.rows, args.repeats)
            key = f"{precision or 'float32'} round {round_}"
            out[key] = secs
            print(f"{key:>18}: {secs} s a step")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
