"""Rewrite format-1 checkpoints and training config files as format 2, in place.

``python -m uqlab.upgrade PATH ...``: each PATH is a checkpoint folder (its ``config.json``: the
model and the recorded training config) or a training config file (``configs/*.json``). Format 1
kept every family's attention fields in one flat record; format 2 keeps the family's structure in
``attention`` and the trained values of the knobs it reads in ``inference``
(:func:`uqcore.config.upgrade_v1`). Weights, vocabularies and metrics are not touched; a folder
already in format 2 is left as it is. The library reads format 1 anyway: this only makes the
files say what the model is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from uqcore.checkpoint import CONFIG_FILE, MAX_JSON_BYTES
from uqcore.config import FORMAT_VERSION, ModelConfig, upgrade_v1
from uqcore.exceptions import ConfigError, UQError
from uqcore.text.vocab import write_atomic
from uqcore.untrusted import read_json_file
from uqlab.training.recipe import read_config_file


def upgrade_train_config(config: dict) -> dict:
    """A training config (a ``configs/*.json`` file, or the one a checkpoint records) with its
    ``model`` overrides in format 2."""
    if "model" not in config:
        return config
    return {**config, "model": upgrade_v1(config["model"], config["family"])}


def upgrade_checkpoint(folder: Path) -> bool:
    """Rewrite ``folder/config.json`` as format 2; False if it already was."""
    path = folder / CONFIG_FILE
    doc = read_json_file(path, max_bytes=MAX_JSON_BYTES, allow_nan=True, error=ConfigError)
    if doc.get("format_version") == FORMAT_VERSION:
        return False
    model = ModelConfig.from_dict(upgrade_v1(doc["model"]))  # validated
    doc = {**doc, "format_version": FORMAT_VERSION, "model": model.to_dict()}
    training = doc.get("training") or {}
    if isinstance(training.get("config"), dict):
        doc["training"] = {**training, "config": upgrade_train_config(training["config"])}
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False).encode())
    return True


def upgrade_config_file(path: Path) -> bool:
    """Rewrite a training config file with format-2 model overrides; False if unchanged."""
    doc = read_config_file(path)  # bounded like every training config file
    new = upgrade_train_config(doc)
    if new == doc:
        return False
    write_atomic(path, (json.dumps(new, indent=2) + "\n").encode())
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m uqlab.upgrade", description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", help="checkpoint folders or training config files")
    args = p.parse_args(argv)
    try:
        for raw in args.paths:
            path = Path(raw)
            changed = upgrade_checkpoint(path) if path.is_dir() else upgrade_config_file(path)
            print(f"{path}: {'upgraded to format 2' if changed else 'already format 2'}")
    except (UQError, OSError, KeyError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
