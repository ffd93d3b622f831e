"""Where a checkpoint came from, written so it names no build machine.

A checkpoint's ``config.json`` (``training.data_source``, ``training.config.out`` /
``data_dir`` / ``pretrained_embeddings``) and its ``metrics.json`` (``data_source``) record the
folders a run read and wrote. Written as the run saw them they were absolute paths of whoever
trained it (``/home/someone/...``): nothing another checkout can follow, and a server path that
ships to every visitor. :func:`portable` writes a folder relative to this checkout (the data
beside it reads ``../shared/data``); a folder outside the checkout's parent keeps only its last
part, so the record still says which folder it was and nothing about the machine.

``python -m uqlab.catalog.provenance [ROOT]`` rewrites the records of every checkpoint under ROOT
(default ``assets/checkpoints``) in place, each file whole or not at all, every file read
(under the checkpoint loader's bounds) before any is written; it prints what it changed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from uqcore.checkpoint import MAX_JSON_BYTES
from uqcore.exceptions import ConfigError, UQError
from uqcore.text.vocab import write_atomic
from uqcore.untrusted import read_json_file
from uqlab.catalog.paths import REPO_ROOT, SHIPPED_CHECKPOINT_DIR

REPO = REPO_ROOT
# the training config's fields that hold a folder or file path (None: not set)
CONFIG_PATHS = ("out", "data_dir", "pretrained_embeddings", "init_from")
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


def portable_training(
    training: dict[str, Any], repo: Path = REPO, *, fresh: bool = False
) -> dict[str, Any]:
    """A copy of a checkpoint's ``training`` record with its paths made :func:`portable`.

    ``fresh``: the paths as a run just saw them (a relative one read against the working
    directory: :mod:`uqlab.train`). Otherwise the record is a stored one, whose relative paths
    are the checkout's already and stay as they are; only absolute ones are rewritten
    (:mod:`uqlab.laplace` copying its source's record, the command below)."""

    def fix(value: Any) -> Any:
        if isinstance(value, str) and (fresh or is_absolute(value)):
            return portable(value, repo)
        return value

    out = dict(training)
    if "data_source" in out:
        out["data_source"] = fix(out["data_source"])
    if isinstance(out.get("config"), dict):
        out["config"] = {k: fix(v) if k in CONFIG_PATHS else v for k, v in out["config"].items()}
    return out


def _read(path: Path) -> dict[str, Any] | None:
    """A record file's JSON object, read under the checkpoint loader's bounds; None if absent."""
    if not path.is_file():
        return None
    doc = read_json_file(path, max_bytes=MAX_JSON_BYTES, allow_nan=True, error=ConfigError)
    if not isinstance(doc, dict):
        raise ConfigError(f"{path.name} of {path.parent.name} is not a JSON object.")
    return doc


def _rewritten(folder: Path, repo: Path) -> list[tuple[Path, str]]:
    """(file, its new text) for each of ``folder``'s records that holds an absolute path.

    A shipped checkpoint's ``config.out`` is the folder it ships in (it was trained elsewhere and
    copied there: where a retrain writes is that folder)."""
    changes = []
    config_file, metrics_file = folder / "config.json", folder / "metrics.json"
    config = _read(config_file)
    training = config.get("training") if config is not None else None
    if isinstance(training, dict) and portable_training(training, repo) != training:
        fixed = portable_training(training, repo)
        if isinstance(fixed.get("config"), dict) and is_absolute(
            str(training["config"].get("out", ""))
        ):
            fixed["config"]["out"] = portable(folder, repo)
        config["training"] = fixed
        changes.append((config_file, json.dumps(config, indent=2, ensure_ascii=False)))
    metrics = _read(metrics_file)
    source = metrics.get("data_source") if metrics is not None else None
    if isinstance(source, str) and is_absolute(source):
        metrics["data_source"] = portable(source, repo)
        text = json.dumps(metrics, separators=(",", ":"))  # as uqlab.evaluate writes it
        changes.append((metrics_file, text))
    return changes


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
    try:
        planned = [change for folder in folders for change in _rewritten(folder, REPO)]
    except UQError as exc:  # nothing written yet
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path, text in planned:
        write_atomic(path, text.encode("utf-8"))
        print(f"rewrote {path.relative_to(root)}")
    print(f"{len(planned)} file(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
