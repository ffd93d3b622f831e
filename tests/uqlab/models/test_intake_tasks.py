"""An upload's task: never registered, never a path of the server, this session's alone.

Defects on main 0bbfa09: a checkpoint zip whose ``training.task_spec`` named a CSV outside the
data folder (absolute, ``${data}/../..`` or a chosen ``base``) was registered for the whole
process, and Error analysis then showed that file's rows; a second session uploading another
description under the same task name got the first one's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from uqlab.catalog.tasks import TASKS
from uqlab.models import intake
from uqlab.models.intake import DROPPED, UploadError, install

SECRET = "SECRET-ROW the server's own file"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("src"), families=("trans",)) / "cola-trans"


def secret_csv(folder: Path) -> Path:
    path = folder / "secret.csv"
    path.write_text("text,label\n" + "".join(f"{SECRET} {i},acceptable\n" for i in range(5)))
    return path


def described(source: Path, task: str, labels: list[str], **spec) -> dict[str, bytes]:
    """The checkpoint's files with ``training.task`` = ``task`` described by ``spec``."""
    files = {f.name: f.read_bytes() for f in source.iterdir() if f.is_file()}
    doc = json.loads(files["config.json"])
    doc["training"] |= {
        "task": task,
        "label_names": labels,
        "task_spec": {"name": task, "label_names": labels, "text_column": "text", **spec},
    }
    files["config.json"] = json.dumps(doc).encode()
    return files


def leaks(secret: Path) -> dict[str, dict]:
    """Descriptions that point the server at ``secret``: absolute, climbing out of the data
    folder, and relative to a base the upload chose."""
    climb = "${data}/" + "../" * 12 + str(secret).lstrip("/")
    return {
        "absolute": {
            "data": {"file": str(secret), "split": {"dev": 0.2, "test": 0.2}},
            "examples": {"id": str(secret)},
        },
        "climbing": {
            "data": {"train": climb, "dev": climb, "test": climb},
            "examples": {"id": climb, "ood": climb},
            "ood": {"file": climb},
        },
        "base": {
            "data": {"file": secret.name},
            "examples": {"id": secret.name},
            "base": str(secret.parent),
        },
    }


@pytest.mark.parametrize("how", ["absolute", "climbing", "base"])
def test_an_uploaded_description_names_no_file_and_is_not_registered(source, tmp_path, how):
    from uqlab.workbench import dataset

    secret = secret_csv(tmp_path)
    spec = leaks(secret)[how]
    files = described(source, "leak", ["unacceptable", "acceptable"], **spec)
    session = tmp_path / "session"
    name = install(files, "leak", session)
    assert "leak" not in TASKS  # never registered: no other session sees it
    doc = json.loads((session / name / "config.json").read_text())
    kept = doc["training"]["task_spec"]
    assert not {"data", "examples", "ood", "base"} & set(kept)
    assert str(secret) not in json.dumps(doc) and "secret" not in json.dumps(doc)
    assert set(doc["training"][DROPPED]) == set(spec) & {"data", "examples", "ood", "base"}
    assert "left out" in intake.dropped_note(doc["training"])
    assert dataset.examples("leak") == () and dataset.subsets("leak") == ()


def test_the_servers_task_wins_over_an_uploaded_description(source, tmp_path):
    secret = secret_csv(tmp_path)
    files = described(source, "cola", ["unacceptable", "acceptable"], **leaks(secret)["absolute"])
    name = install(files, "mine", tmp_path / "s")
    training = json.loads((tmp_path / "s" / name / "config.json").read_text())["training"]
    assert training["task"] == "cola" and "task_spec" not in training
    assert TASKS["cola"].builtin and "secret" not in json.dumps(TASKS["cola"].description)


def test_an_unknown_task_without_a_description_is_refused(source, tmp_path):
    files = described(source, "other", ["a", "b"])
    doc = json.loads(files["config.json"])
    del doc["training"]["task_spec"]
    files["config.json"] = json.dumps(doc).encode()
    with pytest.raises(UploadError, match="names task 'other'; this server knows"):
        install(files, "x", tmp_path / "s")
    bad = described(source, "three", ["a", "b", "c"])
    with pytest.raises(UploadError, match="2 classes but its task 'three' has 3"):
        install(bad, "x", tmp_path / "s")


def test_two_sessions_with_one_task_name_each_see_their_own(source, tmp_path):
    """Two sessions upload checkpoints of task ``mine`` with other labels, the first with a data
    file: each keeps its own labels and neither has bundled examples (on main the second got
    the first's description, and with it the first's file). The pages, two real browser
    sessions: tests/browser/test_hostile_uploads.py."""
    from uqcore.registry import list_checkpoints
    from uqlab.catalog.tasks import label_names
    from uqlab.workbench import dataset

    secret = secret_csv(tmp_path)
    seen = []
    for i, labels in enumerate((["cat", "dog"], ["red", "blue"])):
        spec = {"data": {"file": str(secret)}, "examples": {"id": str(secret)}} if i == 0 else {}
        folder = tmp_path / f"session{i}"
        install(described(source, "mine", labels, **spec), "mine", folder)
        (info,) = list_checkpoints(folder)
        seen.append(label_names(info))
    assert seen == [("cat", "dog"), ("red", "blue")]
    assert "mine" not in TASKS and dataset.examples("mine") == ()


@pytest.mark.parametrize(("spec", "metric"), [({}, "accuracy"), ({"metric": "mcc"}, "mcc")])
def test_an_uploaded_descriptions_metrics_are_checked_for_its_own_metric(
    source, tmp_path, spec, metric
):
    """metrics.json must bring the metric the upload's own description names (or defaults to)."""
    files = described(source, "mine", ["no", "yes"], **spec)
    figures = {f"{metric}_mean": 0.8, f"{metric}_std": 0.01}
    files["metrics.json"] = json.dumps({"id": figures, "ood": figures, "samples": 4}).encode()
    assert install(files, "mine", tmp_path / "ok")
    other = "mcc" if metric == "accuracy" else "accuracy"
    wrong = {f"{other}_mean": 0.8, f"{other}_std": 0.01}
    files["metrics.json"] = json.dumps({"id": wrong, "ood": wrong, "samples": 4}).encode()
    with pytest.raises(UploadError, match=f"lacks its {metric}"):
        install(files, "mine", tmp_path / "refused")
