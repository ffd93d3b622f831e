"""Data loading, the paper's splits, input validation and the shipped evaluation subsets."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from uqcore.exceptions import InputError
from uqlab.data import (
    DATA_ENV,
    EVAL_DIR,
    EVAL_SUBSETS,
    TASKS,
    Split,
    TaskData,
    export_eval_subsets,
    load_eval_subset,
    load_task,
    main,
    resolve_data_dir,
    split_positions,
)

SIZES = {
    "imdb": {"train": 22_500, "dev": 2_500, "test": 25_000, "ood": 500},
    "cola": {"train": 6_354, "dev": 908, "test": 1_816, "ood": 516},
}
EVAL_SIZES = {"cola_test": 1_816, "cola_ood": 516, "cr_test": 500, "imdb_test_sample": 500}
NAMES = ("train", "dev", "test", "ood")


@pytest.fixture(scope="module")
def full(data_dir: Path) -> dict[str, TaskData]:
    return {task: load_task(task, data_dir) for task in TASKS}


def _splits(d: TaskData) -> dict[str, Split]:
    return {name: getattr(d, name) for name in NAMES}


def _pool(data_dir: Path, task: str) -> pd.DataFrame:
    """The rows the train/dev(/test) splits are drawn from, read with pandas."""
    if task == "imdb":
        return pd.read_parquet(data_dir / "imdb/train.parquet")
    parts = [pd.read_parquet(data_dir / f"cola/{s}.parquet") for s in ("train", "validation")]
    return pd.concat(parts, ignore_index=True).rename(columns={"sentence": "text"})


# ----------------------------------------------------------------------------- sizes and content
@pytest.mark.parametrize("task", TASKS)
def test_split_sizes_and_metadata(full: dict[str, TaskData], task: str, data_dir: Path) -> None:
    d = full[task]
    assert {n: len(s) for n, s in _splits(d).items()} == SIZES[task]
    assert all(s.name == n and len(s.labels) == len(s.texts) for n, s in _splits(d).items())
    assert d.task == task and d.source == str(data_dir)
    assert d.metric == {"imdb": "accuracy", "cola": "mcc"}[task]
    assert d.label_names == {"imdb": ("neg", "pos"), "cola": ("unacceptable", "acceptable")}[task]
    for s in _splits(d).values():
        assert set(s.labels) == {0, 1} and all(type(y) is int for y in s.labels)
        assert all(isinstance(t, str) for t in s.texts)


@pytest.mark.parametrize(("task", "n"), [("imdb", 25_000), ("cola", 9_078)])
def test_splits_are_disjoint_and_cover_the_pool(
    full: dict[str, TaskData], data_dir: Path, task: str, n: int
) -> None:
    pos = split_positions(task, n, split_seed=0)
    assert set(pos) == ({"train", "dev"} if task == "imdb" else {"train", "dev", "test"})
    everything = np.concatenate(list(pos.values()))
    assert len(everything) == n and np.array_equal(np.sort(everything), np.arange(n))  # disjoint
    pool = _pool(data_dir, task)
    assert len(pool) == n
    for name, idx in pos.items():  # the loaded splits are exactly those rows, in that order
        split = getattr(full[task], name)
        assert split.texts == tuple(pool["text"].iloc[idx])
        assert split.labels == tuple(pool["label"].iloc[idx])
    loaded = Counter(t for name in pos for t in getattr(full[task], name).texts)
    assert loaded == Counter(pool["text"])  # multiset union, duplicates included


@pytest.mark.parametrize("task", TASKS)
def test_test_and_ood_are_whole_files_kept_as_stored(
    full: dict[str, TaskData], data_dir: Path, task: str
) -> None:
    files = {"imdb": ["imdb/test.parquet", "cr/test.parquet"], "cola": ["cola/ood.parquet"]}[task]
    splits = {"imdb": ["test", "ood"], "cola": ["ood"]}[task]
    for file, name in zip(files, splits, strict=True):
        df = pd.read_parquet(data_dir / file)
        split = getattr(full[task], name)
        text_col = "sentence" if task == "cola" else "text"
        assert Counter(zip(split.texts, split.labels, strict=True)) == Counter(
            zip(df[text_col], df["label"], strict=True)
        )
    if task == "imdb":  # no cleaning: HTML breaks and CR's trailing spaces survive
        assert any("<br />" in t for t in full["imdb"].test.texts)
        assert any(t.endswith(" ") for t in full["imdb"].ood.texts)


@pytest.mark.parametrize(
    ("n", "sizes"),
    [(9_078, (6_354, 908, 1_816)), (30, (21, 3, 6)), (25, (17, 3, 5)), (10, (7, 1, 2))],
)
def test_cola_rounding(n: int, sizes: tuple[int, int, int]) -> None:
    """test = round(0.2 n), dev = round(0.1 n), halves up; train = the rest."""
    pos = split_positions("cola", n)
    assert (len(pos["train"]), len(pos["dev"]), len(pos["test"])) == sizes


def test_same_seed_same_splits_other_seed_differs(full: dict[str, TaskData], data_dir) -> None:
    assert load_task("cola", data_dir, split_seed=0) == full["cola"]
    other = load_task("cola", data_dir, split_seed=1)
    for name in NAMES:
        assert getattr(other, name).texts != getattr(full["cola"], name).texts
    seven, eight = (split_positions("imdb", 25_000, seed) for seed in (7, 8))
    assert all(np.array_equal(seven[k], split_positions("imdb", 25_000, 7)[k]) for k in seven)
    assert not np.array_equal(seven["dev"], eight["dev"])
    imdb = load_task("imdb", data_dir, split_seed=1, limit=50)
    assert all(getattr(imdb, k).texts != getattr(full["imdb"], k).texts[:50] for k in NAMES)


@pytest.mark.parametrize("task", TASKS)
def test_limit_takes_the_first_rows_after_shuffling(
    full: dict[str, TaskData], data_dir: Path, task: str
) -> None:
    small = load_task(task, data_dir, limit=20)
    for name, split in _splits(small).items():
        ref = getattr(full[task], name)
        assert split.texts == ref.texts[:20] and split.labels == ref.labels[:20]
    assert set(small.test.labels) == {0, 1}  # shuffled, so a small limit still mixes labels
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="limit must be a positive integer"):
            load_task(task, data_dir, limit=bad)


# ----------------------------------------------------------------------------- data folder
def test_resolve_data_dir_flag_over_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_data_dir(str(tmp_path / "flag")) == tmp_path / "flag"
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir("") == tmp_path / "env"
    monkeypatch.delenv(DATA_ENV)
    assert resolve_data_dir() is None


def test_load_task_reads_env_var(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv(DATA_ENV, str(data_dir))
    assert load_task("cola", limit=3).source == str(data_dir)


def test_hub_offline_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for task in TASKS:
        start = time.perf_counter()
        with pytest.raises(InputError, match=r"offline.*UQ_DATA_DIR or pass --data-dir"):
            load_task(task)
        assert time.perf_counter() - start < 2.0


# ----------------------------------------------------------------------------- validation
def _write(path: Path, df: pd.DataFrame) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(path)
    return path


def _cola_dir(root: Path, n_train: int = 20, n_val: int = 10) -> Path:
    """A tiny data folder with the three CoLA files."""
    for name, n in (("train", n_train), ("validation", n_val), ("ood", 6)):
        rows = {"sentence": [f"{name} {i}" for i in range(n)], "label": [i % 2 for i in range(n)]}
        _write(root / "cola" / f"{name}.parquet", pd.DataFrame(rows))
    return root


def test_small_folder_works(tmp_path: Path) -> None:
    d = load_task("cola", _cola_dir(tmp_path))
    assert (len(d.train), len(d.dev), len(d.test), len(d.ood)) == (21, 3, 6, 6)


def test_unknown_task(data_dir: Path) -> None:
    with pytest.raises(InputError, match=r"unknown task 'sst2'.*imdb, cola"):
        load_task("sst2", data_dir)
    with pytest.raises(InputError, match="unknown task"):
        split_positions("sst2", 10)


def test_missing_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match=r"data folder .*nowhere \(from --data-dir\) does not"):
        load_task("imdb", tmp_path / "nowhere")
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match=r"nowhere \(from UQ_DATA_DIR\).*imdb/\{train,test\}"):
        load_task("cola")


def test_missing_split_file(tmp_path: Path) -> None:
    root = _cola_dir(tmp_path)
    (root / "cola" / "ood.parquet").unlink()
    with pytest.raises(InputError, match=r"missing split file: expected .*cola/ood\.parquet"):
        load_task("cola", root)
    with pytest.raises(InputError, match=r"expected .*imdb/train\.parquet"):
        load_task("imdb", root)


def test_wrong_columns(tmp_path: Path) -> None:
    root = _cola_dir(tmp_path)
    _write(root / "cola/train.parquet", pd.DataFrame({"text": ["a", "b"], "y": [0, 1]}))
    match = r"train\.parquet has columns \['text', 'y'\]; expected 'sentence' and 'label'"
    with pytest.raises(InputError, match=match):
        load_task("cola", root)


def test_empty_split(tmp_path: Path) -> None:
    root = _cola_dir(tmp_path)
    empty = pd.DataFrame({"sentence": pd.Series([], dtype=str), "label": pd.Series([], dtype=int)})
    _write(root / "cola/validation.parquet", empty)
    with pytest.raises(InputError, match=r"validation\.parquet is an empty split \(0 rows\)"):
        load_task("cola", root)


@pytest.mark.parametrize("labels", [[0, 1, 2], [0, -1, 1], [0.0, 1.5, 1.0]])
def test_bad_labels(tmp_path: Path, labels: list) -> None:
    root = _cola_dir(tmp_path)
    _write(root / "cola/ood.parquet", pd.DataFrame({"sentence": ["a", "b", "c"], "label": labels}))
    with pytest.raises(InputError, match=r"ood\.parquet has labels outside \{0, 1\}"):
        load_task("cola", root)


def test_unreadable_parquet(tmp_path: Path) -> None:
    root = _cola_dir(tmp_path)
    (root / "cola/train.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"train\.parquet is not a readable Parquet file"):
        load_task("cola", root)


# ----------------------------------------------------------------------------- assets/eval
def test_eval_subsets_ship_and_load(full: dict[str, TaskData]) -> None:
    assert set(EVAL_SUBSETS) == set(EVAL_SIZES)
    total = 0
    for name, n in EVAL_SIZES.items():
        path = EVAL_DIR / f"{name}.parquet"
        assert path.is_file(), path
        total += path.stat().st_size
        split = load_eval_subset(name)
        assert len(split) == n and set(split.labels) == {0, 1}
        assert split.name == ("ood" if name in ("cola_ood", "cr_test") else "test")
        domain = set(pd.read_parquet(path)["domain"])
        assert domain == ({"ood"} if split.name == "ood" else {"id"})
    assert total < 2_000_000
    assert load_eval_subset("cola_test.parquet") == full["cola"].test
    assert Counter(load_eval_subset("imdb_test_sample").labels) == {0: 250, 1: 250}
    sample = load_eval_subset("imdb_test_sample").texts
    assert Counter(sample) <= Counter(full["imdb"].test.texts)
    assert sorted(load_eval_subset("cr_test").texts) == sorted(full["imdb"].ood.texts)
    assert sorted(load_eval_subset("cola_ood").texts) == sorted(full["cola"].ood.texts)


def test_export_reproduces_assets(data_dir: Path, tmp_path: Path) -> None:
    counts = export_eval_subsets(data_dir, tmp_path)
    assert counts == EVAL_SIZES
    for name in EVAL_SIZES:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / f"{name}.parquet"),
            pd.read_parquet(EVAL_DIR / f"{name}.parquet"),
        )


def test_eval_subset_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match=r"unknown evaluation subset 'sst2'.*cola_test"):
        load_eval_subset("sst2")
    with pytest.raises(
        InputError, match=r"subset missing: expected .*cr_test\.parquet.*export-eval"
    ):
        load_eval_subset("cr_test", eval_dir=tmp_path)
    _write(tmp_path / "cr_test.parquet", pd.DataFrame({"sentence": ["a"], "label": [0]}))
    with pytest.raises(InputError, match=r"has columns \['sentence', 'label'\]; expected 'text'"):
        load_eval_subset("cr_test", eval_dir=tmp_path)
    with pytest.raises(InputError, match="even"):
        export_eval_subsets(tmp_path, tmp_path, id_sample=3)
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["export-eval", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2


# ----------------------------------------------------------------------------- hub path (faked)
def _fake_hub(data_dir: Path, *, cola_ood: bool = True):
    """A stand-in for ``datasets.load_dataset`` serving the local files in the Hub's layout."""
    import datasets

    def load(path: str, name: str | None = None, *, split: str) -> datasets.Dataset:
        if path == "stanfordnlp/imdb":
            df = pd.read_parquet(data_dir / f"imdb/{split}.parquet")
        else:
            assert (path, name) == ("nyu-mll/glue", "cola")
            parts = {"train": ["train"], "validation": ["validation"] + ["ood"] * cola_ood}[split]
            frames = [pd.read_parquet(data_dir / f"cola/{p}.parquet") for p in parts]
            df = pd.concat(frames, ignore_index=True)[["sentence", "label", "idx"]]
        return datasets.Dataset.from_pandas(df, split=split)

    return load


def test_hub_path_with_a_fake_hub(
    full: dict[str, TaskData], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    for var in (DATA_ENV, "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(datasets, "load_dataset", _fake_hub(data_dir))
    for task in TASKS:  # same rows in the same order -> the same splits; IMDB's OOD from assets
        hub = load_task(task)
        assert hub.source == "hub" and _splits(hub) == _splits(full[task])
    monkeypatch.setattr(datasets, "load_dataset", _fake_hub(data_dir, cola_ood=False))
    with pytest.raises(InputError, match=r"validation has 527 rows, not 527 \+ 516"):
        load_task("cola")

    def unreachable(*args, **kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    with pytest.raises(
        InputError, match=r"could not load imdb from the Hub.*no route.*UQ_DATA_DIR"
    ):
        load_task("imdb")
