"""Tasks described by a file (uqlab.catalog.task_file, uqlab.catalog.labelled): a three-class task
through train and evaluate, and every bad input with its message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.task_files import FILL, colour_rows, colour_task, write_csv
from uqcore.exceptions import ConfigError, InputError
from uqlab.catalog.labelled import read_labelled
from uqlab.catalog.task_file import read_task_file
from uqlab.catalog.tasks import TASKS, describe

pytestmark = pytest.mark.usefixtures("tasks_restored")


def test_a_three_class_task_trains_and_evaluates_from_its_file_only(tmp_path):
    from uqcore.registry import load
    from uqlab import evaluate, train

    task = colour_task(tmp_path)
    out = tmp_path / "ck" / "colours-hsto"
    assert (
        train.main(
            [
                "--task-file",
                str(task),
                "--family",
                "hsto",
                "--out",
                str(out),
                "--epochs",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    ck = load("colours-hsto", tmp_path / "ck")
    assert ck.config.num_classes == 3 and ck.training["task_spec"]["name"] == "colours"
    del TASKS["colours"]  # evaluating needs no task file: the checkpoint carries it
    assert evaluate.main(["--ckpt", str(out), "--quiet", "--table3", "2"]) == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["task"] == "colours" and "ood" not in m and "ood_detection" not in m
    assert 0 <= m["id"]["macro_f1_mean"] <= 1 and "mcc_mean" not in m["id"]
    assert set(m["id"]["conformal_90"]) == {"lac", "aps"}
    assert all(0 <= r["label"] < 3 for r in m["table3"])


def _bad(tmp_path, case):
    """A hostile description or data file; returns (what to call, the message expected)."""
    if case == "unknown_key":
        return lambda: read_task_file(colour_task(tmp_path, colour="x")), "unknown key"
    if case == "builtin_name":
        return lambda: read_task_file(colour_task(tmp_path, name="cola")), "built-in"
    if case == "mcc_three":
        return lambda: read_task_file(colour_task(tmp_path, metric="mcc")), "for 2 classes"
    if case == "missing_column":
        f = write_csv(tmp_path / "d.csv", [{"text": "a", "Colour": 0}])
        return lambda: read_labelled(f, "Review Text", "Colour", ("a", "b")), "no text column"
    if case == "label_outside":
        f = write_csv(tmp_path / "d.csv", [{"t": "fine", "y": "red"}, {"t": "bad", "y": "purple"}])
        return lambda: read_labelled(f, "t", "y", ("red", "blue")), "row 2: label 'purple'"
    if case == "empty":
        f = tmp_path / "d.csv"
        f.write_text("t,y\n")
        return lambda: read_labelled(f, "t", "y", ("a", "b")), "empty"
    if case == "not_utf8":
        f = tmp_path / "d.csv"
        f.write_bytes("t,y\ncafé,0\n".encode("latin-1"))
        return lambda: read_labelled(f, "t", "y", ("a", "b")), "not UTF-8"
    if case == "huge":
        f = tmp_path / "d.csv"
        with open(f, "wb") as fh:
            fh.truncate(3 * 2**30)  # sparse: claimed, never written
        return lambda: read_labelled(f, "t", "y", ("a", "b")), "the most read is 2 GB"
    if case == "columns":
        f = tmp_path / "d.csv"
        f.write_text(",".join(f"c{i}" for i in range(10**6)) + "\n")
        return lambda: read_labelled(f, "c0", "c1", ("a", "b")), "more than 1000 columns"
    if case == "empty_split":
        spec = read_task_file(colour_task(tmp_path))
        write_csv(
            tmp_path / "colours.csv", colour_rows(2)
        )  # 2 rows: no train, dev and test at 0.2 / 0.2
        from uqlab.data import load_task

        return lambda: load_task(spec.name), "too few"
    raise ValueError(case)


CASES = (
    "unknown_key",
    "builtin_name",
    "mcc_three",
    "missing_column",
    "label_outside",
    "empty",
    "not_utf8",
    "huge",
    "columns",
    "empty_split",
)


@pytest.mark.parametrize("case", CASES)
def test_bad_input_gets_one_clear_message(tmp_path, case):
    call, message = _bad(tmp_path, case)
    with pytest.raises((ConfigError, InputError), match=message):
        call()


def test_a_checkpoint_with_another_label_count_is_refused(tmp_path, capsys):
    from tests.app_fixtures import make_checkpoints
    from uqlab import evaluate

    root = make_checkpoints(tmp_path / "ck", families=("trans",))  # two classes, task cola
    doc = json.loads((root / "cola-trans" / "config.json").read_text())
    spec = describe(json.loads(colour_task(tmp_path).read_text()), tmp_path)
    doc["training"] |= {"task": "colours", "task_spec": spec.description}
    (root / "cola-trans" / "config.json").write_text(json.dumps(doc))
    assert evaluate.main(["--ckpt", str(root / "cola-trans"), "--quiet"]) == 2
    assert "has 2 classes but task 'colours' has 3" in capsys.readouterr().err


def test_a_shipped_task_reads_its_files_from_any_clone():
    """The shipped CR checkpoints keep their description's base relative to the repository
    (``repo:configs/tasks``), so a clone in another folder reads the example files."""
    import json as _json

    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
    from uqlab.catalog.task_file import portable
    from uqlab.data import task_examples

    for name in ("cr-minilm-trans", "cr-minilm-hsto"):
        doc = _json.loads((SHIPPED_CHECKPOINT_DIR / name / "config.json").read_text())
        assert doc["training"]["task_spec"]["base"] == "repo:configs/tasks"
    assert {k: len(v[1]) for k, v in task_examples("cr").items()} == {"id": 500, "ood": 500}
    assert portable(Path("/elsewhere/tasks")) == "/elsewhere/tasks"


def _one_line(exc: BaseException, *words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "/" not in text.replace("[ ] or { }", ""), text  # no server path
    for word in words:
        assert word in text, text
    return text


def test_a_task_file_over_1_mb_says_so(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b'{"name": "big", "notes": "' + b"x" * 2**20 + b'"}')
    with pytest.raises(ConfigError) as info:
        read_task_file(path)
    text = _one_line(info.value, "big.json is over 1 MB")
    assert "not valid JSON" not in text


def test_an_out_of_domain_file_names_its_own_columns(tmp_path):
    """Issue 36: the OOD file had to use the task's column names; an entry may name its own."""
    from uqlab.data import load_task

    rows = [
        {"body": f"a {w} thing", "tone": ["red", "green", "blue"][i % 3]}
        for i, w in enumerate(FILL)
    ]
    write_csv(tmp_path / "other.csv", rows)
    ood = {"file": "other.csv", "name": "Other", "text_column": "body", "label_column": "tone"}
    data = load_task(read_task_file(colour_task(tmp_path, ood=ood)).name, None)
    want = sorted((r["body"], i % 3) for i, r in enumerate(rows))
    assert sorted(zip(data.ood.texts, data.ood.labels, strict=True)) == want  # (shuffled)
    plain = {"file": "other.csv", "name": "Other"}  # the task's columns: not in this file
    with pytest.raises(InputError, match="Review Text"):
        load_task(read_task_file(colour_task(tmp_path, "plain", ood=plain)).name, None)
    bad = {**ood, "text_column": ""}
    with pytest.raises(ConfigError, match="text_column"):
        read_task_file(colour_task(tmp_path, "bad", ood=bad))


def test_a_task_file_asks_for_out_of_domain_texts_cut_to_its_own_form(tmp_path, data_dir):
    """Issue 47: ``ood_matched`` names out-of-domain texts of the in-domain texts' form, read in
    file order beside the OOD set (CR: its IMDB reviews cut into sentences); a wrong entry is one
    line, and an upload's data-free description drops it with the other files."""
    from uqlab.catalog.task_file import data_free
    from uqlab.data import load_task

    cr = read_task_file(Path(__file__).resolve().parents[3] / "configs" / "tasks" / "cr.json")
    data = load_task(cr.name, data_dir)
    assert len(data.ood) == 500 and len(data.ood_matched) == 977
    assert data.ood_matched.texts[0] == "The story's also new and shocking."
    with pytest.raises(ConfigError, match="ood_matched must be"):
        read_task_file(colour_task(tmp_path, "bad", ood_matched={"name": "no file"}))
    kept, named = data_free(cr.description)
    assert "ood_matched" in named and "ood_matched" not in kept
