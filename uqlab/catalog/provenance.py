"""Where a checkpoint came from, written so it names no build machine.

A checkpoint's ``config.json`` (``training.data_source``, ``training.config.out`` /
``data_dir`` / ``pretrained_embeddings``) and its ``metrics.json`` (``data_source``) record the
folders a run read and wrote. Written as the run saw them they were absolute paths of whoever
trained it (``/home/someone/...``): nothing another checkout can follow, and a server path that
ships to every visitor. :func:`portable` writes a folder relative to this checkout (the data
beside it reads ``../shared/data``); a folder outside the checkout's parent keeps only its last
part, so the record still says which folder it was and nothing about the machine.

``python -m uqlab.catalog.provenance [ROOT]`` rewrites the records of every checkpoint under ROOT
(default ``assets/checkpoints``) in place, each file whole or not at all; it prints what it
changed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from uqcore.text.vocab import write_atomic
from uqlab.catalog.paths import REPO_ROOT, SHIPPED_CHECKPOINT_DIR

REPO = REPO_ROOT
# the training config's fields that hold a folder or file path (None: not set)
CONFIG_PATHS = ("out", "data_dir", "pretrained_embeddings")
NOT_PATHS = {"hub"}  # data_source when the data came from the Hugging Face hub


def is_absolute(value: str) -> bool:
    """Whether ``value`` reads as an absolute path (``/x``, ``C:\\x``) or a home one (``~/x``)."""
    return (
        PurePosixPath(value).is_absolute()
        or PureWindowsPath(value).is_absolute()
        or value.startswith("~")
    )


def portable(path: str | os.PathLike, repo: Path = REPO) -> str:
    """``path`` as a checkout-relative POSIX path (``assets/checkpoints/x``, ``../shared/data``).

    A relative ``path`` is read against the working directory, as the run read it. One outside
    the checkout's parent folder keeps only its last part (``/tmp/abc/data`` -> ``data``): the
    record names the folder, not the machine. "hub" stays "hub"."""
    text = os.fspath(path)
    if text in NOT_PATHS or not text:
        return text
    resolved = Path(os.path.expanduser(text)).resolve()
    repo = repo.resolve()
    if resolved == repo or resolved.is_relative_to(repo.parent):
        return Path(os.path.relpath(resolved, repo)).as_posix()
    return resolved.name


def portable_training(training: dict[str, Any], repo: Path = REPO) -> dict[str, Any]:
    """A copy of a checkpoint's ``training`` record with its paths made :func:`portable`."""
    out = dict(training)
    if isinstance(out.get("data_source"), str):
        out["data_source"] = portable(out["data_source"], repo)
    if isinstance(out.get("config"), dict):
        config = dict(out["config"])
        for key in CONFIG_PATHS:
            if isinstance(config.get(key), str):
                config[key] = portable(config[key], repo)
        out["config"] = config
    return out


def _rewritten(folder: Path, repo: Path) -> list[tuple[Path, str]]:
    """(file, its new text) for each of ``folder``'s records that holds an absolute path.

    A shipped checkpoint's ``config.out`` is the folder it ships in (it was trained elsewhere and
    copied there: where a retrain writes is that folder)."""
    changes = []
    config_file, metrics_file = folder / "config.json", folder / "metrics.json"
    if config_file.is_file():
        config = json.loads(config_file.read_text(encoding="utf-8"))
        training = config.get("training")
        if isinstance(training, dict) and _has_absolute(training):
            fixed = portable_training(training, repo)
            if isinstance(fixed.get("config"), dict) and is_absolute(
                str(training["config"].get("out", ""))
            ):
                fixed["config"]["out"] = portable(folder, repo)
            config["training"] = fixed
            changes.append((config_file, json.dumps(config, indent=2, ensure_ascii=False)))
    if metrics_file.is_file():
        metrics = json.loads(metrics_file.read_text(encoding="utf-8"))
        source = metrics.get("data_source")
        if isinstance(source, str) and is_absolute(source):
            metrics["data_source"] = portable(source, repo)
            text = json.dumps(metrics, separators=(",", ":"))  # as uqlab.evaluate writes it
            changes.append((metrics_file, text))
    return changes


def _has_absolute(training: dict[str, Any]) -> bool:
    """Whether any path field of a ``training`` record is absolute."""
    fields = [training.get("data_source")]
    if isinstance(training.get("config"), dict):
        fields += [training["config"].get(k) for k in CONFIG_PATHS]
    return any(isinstance(v, str) and is_absolute(v) for v in fields)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.catalog.provenance",
        description="Make the path fields of every checkpoint's records checkout-relative.",
    )
    p.add_argument("root", nargs="?", default=str(SHIPPED_CHECKPOINT_DIR))
    args = p.parse_args(argv)
    root = Path(args.root)
    if not root.is_dir():
        p.error(f"{args.root} is not a folder of checkpoints")
    # every file's new text first: a failure before writing leaves every file as it was
    folders = [f for f in sorted(root.iterdir()) if f.is_dir()]
    planned = [change for folder in folders for change in _rewritten(folder, REPO)]
    for path, text in planned:
        write_atomic(path, text.encode("utf-8"))
        print(f"rewrote {path.relative_to(root)}")
    print(f"{len(planned)} file(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
