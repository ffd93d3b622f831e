"""The shipped checkpoints: each loads strictly, matches its config file, carries its metrics,
and everything under assets/ fits the 80 MB budget."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from uqcore.registry import list_checkpoints, load
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.catalog.provenance import is_absolute
from uqlab.catalog.task_file import read_task_file
from uqlab.catalog.tasks import TASKS
from uqlab.training.recipe import TrainConfig, build_config
from uqlab.training.storage import LOGIT_TOLERANCE

ROOT = Path(__file__).resolve().parent.parent
INFOS = list_checkpoints(SHIPPED_CHECKPOINT_DIR)
# made by uqlab.label_words (a prompt, nothing trained): remade, not retrained, below
ZERO_SHOT = [i.name for i in INFOS if isinstance(i.training.get("prompt"), dict)]
# fitted after training around a shipped checkpoint (uqlab.laplace): refitted, not retrained
FITTED = [i.name for i in INFOS if isinstance(i.training.get("laplace"), dict)]
SHIPPED = [i.name for i in INFOS if i.name not in ZERO_SHOT + FITTED]
REQUIRED = (
    "accuracy_mean",
    "accuracy_std",
    "nll",
    "brier",
    "ece",
    "mean_entropy",
    "mean_mutual_information",
    "mean_variance",
)


def test_assets_fit_the_budget():
    """80 MiB both as bytes and as a clone's disk holds them (every file and folder takes whole
    4 KiB blocks, as ``du -sk assets`` counts on ext4): the byte count alone let 82,368 KiB
    through."""
    shipped = [
        p
        for p in (ROOT / "assets").rglob("*")
        if not any(x.startswith(".") for x in p.relative_to(ROOT).parts)
    ]
    files = (p for p in shipped if p.is_file())
    folders = 1 + sum(p.is_dir() for p in shipped)  # assets/ itself and every folder in it
    # hidden folders (.train: resumable training state) and the metrics.json an evaluation
    # replaced (uqlab.evaluate.PREVIOUS) are not shipped (.gitignore)
    from uqlab.evaluate import PREVIOUS

    sizes = [p.stat().st_size for p in files if p.name != PREVIOUS]
    budget, block = 80 * 1024 * 1024, 4096
    assert sum(sizes) <= budget, f"assets/ holds {sum(sizes) / 2**20:.2f} MiB"
    on_disk = sum(-(-size // block) * block for size in sizes) + folders * block
    assert on_disk <= budget, f"assets/ takes {on_disk // 1024:,} KiB of 4 KiB blocks"


def _strings(node, where=""):
    """(where, value) for every string in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, f"{where}[{i}]")
    elif isinstance(node, str):
        yield where, node


def _path_like(value: str) -> bool:
    """A string with a separator after its first character (a lone "/" is a vocabulary word)."""
    return "/" in value[1:] or "\\" in value


@pytest.mark.parametrize("name", [i.name for i in INFOS])
def test_records_name_no_build_machine_path(name):
    """config.json and metrics.json ship to every clone and visitor: a path in them is relative to
    the checkout (``python -m uqlab.catalog.provenance`` rewrites an old record), never
    ``/home/...``."""
    folder = SHIPPED_CHECKPOINT_DIR / name
    for file in ("config.json", "metrics.json"):
        if (folder / file).is_file():
            doc = json.loads((folder / file).read_text(encoding="utf-8"))
            found = [(w, v) for w, v in _strings(doc) if _path_like(v) and is_absolute(v)]
            assert not found, f"{name}/{file}: {found[:3]}; run python -m uqlab.catalog.provenance"


def test_every_config_file_has_its_checkpoint_and_the_reverse():
    names = sorted(p.stem for p in (ROOT / "configs").glob("*.json"))
    assert names, "configs/ is empty"
    missing = sorted(set(names) - set(SHIPPED))
    assert not missing, f"configs without a shipped checkpoint: {missing}"
    assert set(SHIPPED) <= set(names), f"checkpoints without a config: {set(SHIPPED) - set(names)}"


def test_a_recipe_that_continues_a_checkpoint_ships_the_stage_it_starts_from():
    """A config with ``init_from`` (uqlab.training.continued) names a first stage whose recipe
    is in configs/stages/ under that name, and the checkpoint records that it started there,
    from a run at the stage's reading length."""
    continued = 0
    for file in sorted((ROOT / "configs").glob("*.json")):
        config = json.loads(file.read_text())
        if not config.get("init_from"):
            continue
        continued += 1
        stage_file = ROOT / "configs" / "stages" / f"{config['init_from']}.json"
        assert stage_file.is_file(), f"{file.name}: no {stage_file.relative_to(ROOT)}"
        stage = json.loads(stage_file.read_text())
        assert stage["name"] == config["init_from"] and stage["family"] == config["family"]
        recorded = json.loads((SHIPPED_CHECKPOINT_DIR / file.stem / "config.json").read_text())
        start = recorded["training"]["init_from"]
        assert start["checkpoint"] == config["init_from"], file.name
        assert start["max_len"] == stage["max_len"], file.name
        assert f"configs/stages/{stage_file.name}" in start["command"], file.name
    assert continued, "no shipped recipe continues a checkpoint (imdb-minilm-hsto did)"


@pytest.mark.parametrize("name", SHIPPED + ZERO_SHOT + FITTED)
def test_shipped_checkpoint_loads_strictly_and_is_evaluated(name):
    ck = load(name, SHIPPED_CHECKPOINT_DIR)  # strict: every tensor, no extra one, right shapes
    if name in ZERO_SHOT:
        task = ck.training["task"]
    elif name in FITTED:  # around a shipped checkpoint of its task, whose config retrains it
        source = ck.training["laplace"]["source"]
        assert source in SHIPPED and ck.config.family == "laplace"
        task = ck.training["task"]
        assert load(source, SHIPPED_CHECKPOINT_DIR).training["config"]["task"] == task
    else:
        config = json.loads((ROOT / "configs" / f"{name}.json").read_text())
        assert ck.config.family == config["family"]
        task = config.get("task") or read_task_file(ROOT / "configs" / config["task_file"]).name
        assert ck.training["config"]["task"] == task
    metrics = json.loads((ck.path / "metrics.json").read_text())
    assert metrics["family"] == ck.config.family and metrics["samples"] >= 10
    for side in ("id", "ood"):
        assert all(key in metrics[side] for key in REQUIRED), side
        if task == "cola":
            assert "mcc_mean" in metrics[side] and "mcc_std" in metrics[side]
    assert metrics["ood_detection"] and metrics["table3"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_checkpoint_was_trained_with_what_its_config_file_builds_now(name):
    """`python -m uqlab.train --config configs/NAME.json` retrains it: every setting the file
    and today's defaults give equals the one recorded at training time (a config edited after
    training, or a changed default, fails here until the checkpoint is retrained)."""
    recorded = json.loads((ROOT / "assets" / "checkpoints" / name / "config.json").read_text())
    trained = dict(recorded["training"]["config"])
    file = ROOT / "configs" / f"{name}.json"
    task, family = trained["task"], trained["family"]
    built = build_config(task, family, trained["out"], config_file=str(file)).to_dict()
    # JSON round trip: the recorded side went through it
    built = json.loads(json.dumps(built))
    trained.pop("out"), built.pop("out")
    # where it ran is not part of the recipe (the imdb-minilm checkpoints record cuda: an H100)
    trained.pop("device"), built.pop("device")
    # a setting added after training whose default reproduces the old behaviour is not a change
    defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    for key in [k for k in built if k not in trained and built[k] == defaults.get(k)]:
        built.pop(key)
    changed = {
        k: (built.get(k), trained.get(k))
        for k in built.keys() | trained.keys()
        if built.get(k) != trained.get(k)
    }
    assert not changed, f"(config file now, trained with): {changed}; retrain {name}"


@pytest.mark.parametrize("name", SHIPPED)
def test_half_precision_storage_is_within_the_stated_tolerance(name):
    """The trainer compares the float32 model with its float16-rounded copy on the dev split."""
    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    storage = ck.training.get("storage")
    assert storage is not None, (
        f"{name} does not record its float16 check: bash scripts/retrain.sh {name}"
    )
    assert storage["tolerance"] == LOGIT_TOLERANCE
    assert storage["max_abs_log_prob_diff"] <= LOGIT_TOLERANCE
    assert storage["argmax_agreement"] >= 0.998 and storage["examples"] >= 500


@pytest.fixture(scope="module")
def task_data(data_dir):
    from uqlab.data import load_task

    return {task: load_task(task, data_dir) for task in TASKS}


@pytest.mark.parametrize("name", SHIPPED + FITTED)
def test_table3_rows_in_metrics_are_what_this_machine_computes(name, task_data, data_dir):
    """The seeded Table 3 rows of metrics.json, recomputed here: the same numbers whichever
    device evaluated them (the imdb-minilm checkpoints were evaluated on an H100), drawn from
    the part of each split the evaluation read when it read a part (``limit``)."""
    from uqlab.data import load_task
    from uqlab.evaluate import table3_for

    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    metrics = json.loads((ck.path / "metrics.json").read_text())
    task = ck.training["config"]["task"]
    stored = metrics["table3"]
    per_domain = sum(r["source"].startswith("test[") for r in stored)
    limit = metrics.get("limit")
    data = task_data[task] if limit is None else load_task(task, data_dir, limit=limit)
    rows = table3_for(ck, data, metrics["samples"], metrics["seed"], per_domain)
    assert [r["text"] for r in rows] == [r["text"] for r in stored]
    for new, old in zip(rows, stored, strict=True):
        assert new["p_gold_mean"] == pytest.approx(old["p_gold_mean"], abs=1e-5), new["text"]
        assert new["correct"] == old["correct"], new["text"]


@pytest.mark.parametrize("name", ZERO_SHOT)
def test_a_zero_shot_checkpoint_is_what_its_command_makes_now(name, tmp_path):
    """The command in its model card makes the same checkpoint again (prompt, words, family,
    reading length and head), as a config file retrains a trained one."""
    import shlex

    import torch

    from uqlab.label_words import main

    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    command = ck.card.split("Made (the same bytes again) by `")[1].split("`")[0]
    argv = shlex.split(command)[3:]  # after "python -m uqlab.label_words"
    try:
        from uqlab.bases import get_base

        get_base(ck.training["config"]["base"]).path()
    except Exception as exc:  # ConfigError: the base is not installed
        pytest.skip(str(exc))
    assert main([*argv, "--name", "again", "--root", str(tmp_path)]) == 0
    again = load("again", tmp_path)
    for key in ("task", "family", "prompt", "label_word_ids", "config"):
        assert again.training[key] == ck.training[key], key
    assert again.config == ck.config
    assert torch.equal(again.model.head.weight, ck.model.head.weight)


@pytest.mark.parametrize("name", FITTED)
def test_a_fitted_checkpoint_says_how_it_was_fitted_and_keeps_its_sources_weights(name):
    """A Laplace checkpoint: its card gives the refit command, its mean is its source's
    weights (read from the source's file), its prior was chosen on dev (every row kept)."""
    ck = load(name, SHIPPED_CHECKPOINT_DIR)
    record = ck.training["laplace"]
    assert f"python -m uqlab.laplace --ckpt {record['source']}" in ck.card
    doc = json.loads((ck.path / "config.json").read_text())
    assert doc["weights"]["checkpoint"] == record["source"]
    assert record["prior_chosen_on"] == "dev" and record["fit_rows"] >= 1000
    best = min(record["dev"][1:], key=lambda r: (r["dev_nll"], -r["prior_precision"]))
    assert ck.config.attention.prior_precision == best["prior_precision"]
