"""Where the repository keeps what the lab and the app read: the one place that knows the folders.

The library (:mod:`uqcore`) takes every path as an argument; the lab's commands and the app get
their defaults here. ``UQ_CHECKPOINT_DIR`` overrides the shipped checkpoint folder.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CHECKPOINT_DIR = REPO_ROOT / "assets" / "checkpoints"
EVAL_DIR = REPO_ROOT / "assets" / "eval"
CONFIG_DIR = REPO_ROOT / "configs"
CHECKPOINT_ENV = "UQ_CHECKPOINT_DIR"


def checkpoint_dir() -> Path:
    """The checkpoint folder: ``$UQ_CHECKPOINT_DIR`` when set, else ``assets/checkpoints``."""
    return Path(os.environ.get(CHECKPOINT_ENV) or SHIPPED_CHECKPOINT_DIR)
