"""Tiny models and batches shared by the unit tests."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from streamlit.testing.v1 import AppTest

from uqcore.build import build_model
from uqcore.config import ModelConfig, family_fields
from uqcore.families import FAMILY_NAMES, get_family
from uqlab.evaluate import main as evaluate_main

STOCHASTIC = ("mcdropout", "sto", "hsto", "bam", "bayesformer", "laplace")


def tiny_config(family: str, **values) -> ModelConfig:
    """A tiny model of ``family``; ``values`` are its structure fields (``n_centroids``, BAM's
    ``dist``...) or trained inference knobs (``tau2``, ``em_iterations``...), sorted by the
    family table. Defaults: 3 centroids, tau2 = 2, 2 EM iterations, a Laplace prior precision
    of 16 (an unfitted posterior: weight draws of standard deviation 1/4) where the family has
    them."""
    spec = get_family(family)
    defaults = {"n_centroids": 3, "em_iterations": 2, "tau2": 2.0, "prior_precision": 16.0}
    values = {**defaults, **values}
    structure = {f.name for f in dataclasses.fields(spec.params)}
    unknown = [
        k for k in values if k not in structure and k not in spec.knobs and k not in defaults
    ]
    assert not unknown, f"{family} has no {unknown}"
    attention, inference = family_fields(family, values)
    return ModelConfig(
        family=family,
        vocab_size=60,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
        max_len=16,
        dropout=0.2,
        ensemble_size=3 if spec.ensemble else 1,
        attention=attention,
        inference=inference,
    ).validate()


def tiny_model(family: str, seed: int = 0, **values):
    torch.manual_seed(seed)
    return build_model(tiny_config(family, **values))


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows: the first padded after 5 tokens. ``ids [2, 8]``, ``mask [2, 8]``."""
    ids = torch.tensor([[2, 5, 6, 7, 8, 0, 0, 0], [2, 9, 10, 11, 12, 13, 14, 1]])
    return ids, ids != 0


ALL_FAMILIES = FAMILY_NAMES


def chart_titles(at) -> list[str]:
    """The title of every plotly chart an AppTest run drew, its wrapped lines joined by spaces
    (uqlab.workbench.titles wraps long titles for phones with <br>)."""
    import json

    return [
        json.loads(c.proto.spec)["layout"]["title"]["text"].replace("<br>", " ")
        for c in at.get("plotly_chart")
    ]


def chart_titled(at, start: str) -> dict:
    """The plotly spec (a dict) of the first chart whose title starts with ``start``."""
    import json

    return next(
        json.loads(c.proto.spec)
        for c, title in zip(at.get("plotly_chart"), chart_titles(at), strict=True)
        if title.startswith(start)
    )


def zip_files(files: dict[str, bytes], prefix: str = "model/") -> bytes:
    """``files`` (name -> bytes) as a deflated zip, each under ``prefix``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(prefix + name, data)
    return buf.getvalue()


def zip_folder(folder: Path, edit: dict[str, Callable[[Any], Any]] | None = None) -> bytes:
    """The files of ``folder`` zipped under its name (as a user zips a folder); ``edit``: a file
    name -> a function of its parsed JSON returning the JSON written instead."""
    files = {}
    for f in sorted(folder.iterdir()):
        if f.is_file():
            data = f.read_bytes()
            if f.name in (edit or {}):
                data = json.dumps(edit[f.name](json.loads(data))).encode()
            files[f.name] = data
    return zip_files(files, f"{folder.name}/")


APP = str(Path(__file__).resolve().parent.parent / "app.py")


def use_shipped(monkeypatch, name: str) -> None:
    """Serve the shipped checkpoints (``UQ_CHECKPOINT_DIR``) for this test, or skip it where the
    shipped checkpoint ``name`` is not here (a clone without the MiniLM assets)."""
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

    if not (SHIPPED_CHECKPOINT_DIR / name / "config.json").is_file():
        import pytest

        pytest.skip("the shipped MiniLM checkpoints are not here")
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))


def open_link(page: str | None = None, timeout: float = 120, **params) -> AppTest:
    """The app (``app.py``) run once under AppTest on a link with these query parameters, then
    switched to ``page`` (``app_pages/<page>.py``) if given; fails on an exception. ``timeout``:
    seconds each run may take."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def on_page(page: str, **params) -> AppTest:
    """The app opened on a link (``ckpt=cola-hsto`` unless given) and switched to ``page``
    (``app_pages/<page>.py``); fails on an exception."""
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in {"ckpt": "cola-hsto", **params}.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


# cola-hsto's model as format 1 wrote it: every family's fields in one flat attention record
V1_HSTO = {
    "family": "hsto",
    "vocab_size": 60,
    "num_classes": 2,
    "max_len": 16,
    "n_layers": 2,
    "n_heads": 2,
    "d_model": 16,
    "d_ff": 32,
    "dropout": 0.1,
    "ensemble_size": 1,
    "attention": {
        "tau": None,
        "tau1": 1,
        "tau2": 1,
        "noise_scale": 1.0,
        "hard": False,
        "n_centroids": 4,
        "centroid_side": "key",
        "centroids_per_head": False,
        "bam_dist": "weibull",
        "bam_prior": "contextual",
        "bam_k": 10.0,
        "bam_sigma": 0.5,
        "bam_beta": 1.0,
        "bam_prior_sigma": 1.0,
        "bam_d_mid": 10,
        "bam_inference": "sample",
        "em_iterations": 0,
        "em_precision": 1.0,
    },
}


# A tiny training run of python -m uqlab.train (a few thousand weights, seconds on a CPU).
TINY = [
    "--set",
    "model.n_layers=1",
    "--set",
    "model.n_heads=2",
    "--set",
    "model.d_model=16",
    "--set",
    "model.d_ff=32",
    "--set",
    "max_len=24",
    "--set",
    "vocab_size=300",
    "--limit",
    "64",
    "--batch-size",
    "16",
    "--epochs",
    "1",
    "--quiet",
]


def evaluate_tiny(path, data_dir, *extra) -> dict:
    """``python -m uqlab.evaluate`` on ``path`` (4 samples of 40 rows) and its metrics.json."""
    args = [
        "--ckpt",
        str(path),
        "--samples",
        "4",
        "--limit",
        "40",
        "--data-dir",
        str(data_dir),
        "--table3",
        "2",
        "--quiet",
        *extra,
    ]
    assert evaluate_main(args) == 0
    return json.loads((path / "metrics.json").read_text())


def encode_lengths(monkeypatch) -> list[int]:
    """The ``max_len`` of every ``WordPiece.encode`` call from now on (the length a command or
    page reads a text at), recorded in the returned list."""
    from uqcore.text.wordpiece import WordPiece

    calls: list[int] = []
    real = WordPiece.encode

    def spy(self, text, max_len, **kw):
        calls.append(max_len)
        return real(self, text, max_len, **kw)

    monkeypatch.setattr(WordPiece, "encode", spy)
    return calls


def copy_shipped(names, folder: Path) -> Path:
    """Copy the shipped checkpoints ``names`` into ``folder`` with every sibling their
    ``weights`` / ``vocab`` records name (a word-level checkpoint reads its task's one
    vocabulary from another folder: uqcore.checkpoint), so that each loads there as it does in
    ``assets/checkpoints``. Returns ``folder``."""
    import shutil

    from uqcore.checkpoint import SHARED
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

    todo, done = list(names), set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        source = SHIPPED_CHECKPOINT_DIR / name
        shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns(".train"))
        doc = json.loads((source / "config.json").read_text(encoding="utf-8"))
        todo += [doc[key]["checkpoint"] for key in SHARED if key in doc]
    return folder


def tiny_siblings(root, data_dir, families=("trans", "hsto"), evaluate: bool = False) -> dict:
    """Tiny CoLA checkpoints of ``families`` side by side in ``root`` (``cola-<family>``), each
    evaluated (:func:`evaluate_tiny`) when asked: family -> its metrics.json (or None)."""
    from uqlab.train import main as train_main

    out = {}
    for family in families:
        path = root / f"cola-{family}"
        args = [
            "--task",
            "cola",
            "--family",
            family,
            "--out",
            str(path),
            "--data-dir",
            str(data_dir),
        ]
        assert train_main([*args, *TINY]) == 0
        out[family] = evaluate_tiny(path, data_dir) if evaluate else None
    return out
