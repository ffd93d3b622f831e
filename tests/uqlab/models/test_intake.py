"""Uploaded checkpoints: accepted when valid, refused with a message otherwise, and nothing
written outside the session folder."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from tests.helpers import zip_files
from uqlab.evaluate import PREVIOUS
from uqlab.models import intake
from uqlab.models.intake import UploadError, files_from_zip, from_path, install

MCC = {"mcc_mean": 0.25, "mcc_std": 0.01}  # cola's metric, as uqlab.evaluate writes it


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("src")) / "cola-hsto"


def zipped(folder: Path, prefix: str = "cola-hsto/", extra: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.iterdir()):
            if f.is_file():
                z.write(f, prefix + f.name)
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zipped_checkpoint_is_installed_and_loads(source, tmp_path):
    name = install(files_from_zip(zipped(source)), "cola-hsto", tmp_path)
    assert name == "upload-cola-hsto"
    assert sorted(p.name for p in (tmp_path / name).iterdir()) == sorted(
        p.name for p in source.iterdir() if p.is_file()
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"../evil.json": "{}"}, "outside its folder"),
        ({"/etc/evil.json": "{}"}, "outside its folder"),
        ({"cola-hsto/weights.pkl": b"\x80\x04"}, "pickle"),
    ],
)
def test_dangerous_zips_are_refused_and_nothing_is_written(source, tmp_path, extra, message):
    work = tmp_path / "session"
    work.mkdir()
    with pytest.raises(UploadError, match=message):
        install(files_from_zip(zipped(source, extra=extra)), "x", work)
    assert not any(work.iterdir()) and not (tmp_path / "evil.json").exists()


def test_not_a_zip_missing_files_and_bombs(source, tmp_path, monkeypatch):
    with pytest.raises(UploadError, match="not a zip"):
        files_from_zip(b"hello")
    files = files_from_zip(zipped(source))
    del files["vocab.json"]
    with pytest.raises(UploadError, match="Missing vocab.json"):
        install(files, "x", tmp_path)
    monkeypatch.setattr(intake, "MAX_UNZIPPED_BYTES", 1000)
    with pytest.raises(UploadError, match="expands to more than"):
        files_from_zip(zipped(source))


def test_forged_zips_get_a_message_not_a_traceback(source):
    """Defects: a member lying about its size, an encrypted member, an unknown compression
    method and a bad CRC each raised from zipfile instead of a message."""
    good = zipped(source)
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        info = z.getinfo("cola-hsto/config.json")
    raw = bytearray(good)
    # central directory entry of config.json: flags at +8, method at +10, CRC at +16, size at +24
    entries = []
    pos = good.find(b"PK\x01\x02")
    while pos != -1:
        entries.append(pos)
        pos = good.find(b"PK\x01\x02", pos + 4)
    entry = next(
        e for e in entries if good[e + 46 : e + 46 + len(info.filename)] == info.filename.encode()
    )

    def forged(offset: int, value: bytes) -> bytes:
        data = bytearray(raw)
        data[entry + offset : entry + offset + len(value)] = value
        return bytes(data)

    cases = {
        "damaged|does not have the size": forged(24, (info.file_size - 5).to_bytes(4, "little")),
        "encrypted": forged(8, (info.flag_bits | 1).to_bytes(2, "little")),
        "compression method": forged(10, (99).to_bytes(2, "little")),
        "damaged": forged(16, (info.CRC ^ 1).to_bytes(4, "little")),
    }
    for message, data in cases.items():
        with pytest.raises(UploadError, match=message):
            files_from_zip(data)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["model"].update(n_layers=5000, d_model=4096, d_ff=16384), "parameters"),
        (lambda c: c["model"].update(family="gpt"), "family"),
        (lambda c: c["training"].update(splits="train 10"), "training.splits"),
        (lambda c: c["training"].update(label_names=["only one"]), "label_names"),
        (lambda c: c["model"].update(d_model=32), "shape"),
        (lambda c: c["training"].update(task="mnist"), "task"),
    ],
)
def test_invalid_checkpoints_are_refused_with_the_reason(source, tmp_path, edit, message):
    files = files_from_zip(zipped(source))
    config = json.loads(files["config.json"])
    edit(config)
    files["config.json"] = json.dumps(config).encode()
    with pytest.raises(UploadError, match=message):
        install(files, "x", tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ({"task": "cola", "ood": {}, "samples": 10}, "lacks its 'id' section"),
        ({"id": {"mcc_mean": float("nan")}, "ood": {}, "samples": 10}, "NaN or infinite"),
        ({"id": {}, "ood": {"brier": float("inf")}, "samples": 10}, "NaN or infinite"),
        ({"id": {}, "ood": {}}, "lacks 'samples'"),
        ({"id": {}, "ood": {}, "samples": 10}, "'id' section lacks its mcc"),
        ({"id": {**MCC}, "ood": {**MCC, "mcc_std": "/etc/passwd"}, "samples": 10}, "'ood'"),
        ({"id": {**MCC, "mcc_mean": True}, "ood": {**MCC}, "samples": 10}, r"\(mcc_mean"),
        ({"id": {"accuracy_mean": 0.9, "accuracy_std": 0.0}, "ood": MCC, "samples": 1}, "mcc"),
    ],
)
def test_metrics_the_pages_cannot_show_are_refused(source, tmp_path, metrics, message):
    """Defects: a metrics.json without 'id' broke the model card; NaN showed as "nan ± inf";
    one whose sections lacked the task metric (or held a string there) was installed, and every
    page then showed "—" for the figures it claimed to bring."""
    files = files_from_zip(zipped(source))
    files["metrics.json"] = json.dumps(metrics).encode()  # json writes NaN / Infinity
    with pytest.raises(UploadError, match=message):
        install(files, "x", tmp_path)
    assert not any(tmp_path.iterdir())


def test_metrics_with_the_task_metric_are_installed_as_sent(source, tmp_path):
    files = files_from_zip(zipped(source))
    metrics = {"id": {**MCC, "brier": 0.2}, "ood": {**MCC, "mcc_mean": 0}, "samples": 10}
    files["metrics.json"] = json.dumps(metrics).encode()
    name = install(files, "x", tmp_path)
    assert json.loads((tmp_path / name / "metrics.json").read_text()) == metrics


def test_a_huge_readme_is_refused_before_it_is_unpacked(source):
    """Defect: a 60 MB README in a 2.8 MB zip was accepted (+637 MB, then the tab crashed)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in ("config.json", "model.safetensors", "vocab.json"):
            z.write(source / name, name)
        z.writestr("README.md", "a" * (60 * 2**20))
    huge = buf.getvalue()
    assert len(huge) < 3 * 2**20
    with pytest.raises(UploadError, match="README.md' is larger than"):
        files_from_zip(huge)


def test_server_folders_are_off_unless_the_operator_allows_them(source, monkeypatch):
    monkeypatch.delenv(intake.SERVER_PATHS_ENV, raising=False)
    for path in (str(source), "/etc", "/root", "/no/such/folder"):  # one answer for all
        with pytest.raises(UploadError, match="off here") as info:
            from_path(path)
        assert path not in str(info.value)


def test_links_in_a_server_folder_are_not_followed(source, tmp_path, monkeypatch):
    monkeypatch.setenv(intake.SERVER_PATHS_ENV, "1")
    folder = tmp_path / "linked"
    folder.mkdir()
    for f in source.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    (folder / "README.md").unlink()
    (folder / "README.md").symlink_to("/etc/hostname")
    with pytest.raises(UploadError, match="link"):
        from_path(str(folder))
    (tmp_path / "alias").symlink_to(source)
    with pytest.raises(UploadError, match="links are not followed"):
        from_path(str(tmp_path / "alias"))


def test_a_server_folder_is_read_not_modified(source, tmp_path, monkeypatch):
    monkeypatch.setenv(intake.SERVER_PATHS_ENV, "1")
    before = {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()}
    files, name = from_path(str(source))
    assert install(files, name, tmp_path) == "upload-cola-hsto"
    assert {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()} == before
    with pytest.raises(UploadError, match="not a folder"):
        from_path(str(tmp_path / "nope"))


def test_upload_errors_join_the_library_hierarchy():
    from uqcore.exceptions import UQError

    assert issubclass(UploadError, UQError) and issubclass(UploadError, ValueError)


ROOT = Path(__file__).resolve().parents[3]


SHIPPED = ROOT / "assets" / "checkpoints" / "cola-hsto"


@pytest.fixture()
def with_derived(tmp_path) -> Path:
    """A copy of a shipped word-level checkpoint with its stored samples and map (without the
    lab's own leftovers, ignored by git: a resumable state, the metrics a re-evaluation
    replaced)."""
    out = tmp_path / "cola-hsto"
    leftovers = shutil.ignore_patterns(".train", PREVIOUS)
    shutil.copytree(SHIPPED, out, ignore=leftovers)
    assert (out / "samples.safetensors").is_file() and (out / "map.safetensors").is_file()
    return out


def test_a_very_long_server_path_gets_a_message(monkeypatch):
    monkeypatch.setenv(intake.SERVER_PATHS_ENV, "1")
    with pytest.raises(UploadError, match="cannot be read on this server|not a folder"):
        from_path("/" + "a" * 300 + "/" + "b" * 300)


def test_loose_files_with_the_derived_files_are_accepted_as_the_zip_is(with_derived, tmp_path):
    loose = {f.name: f.read_bytes() for f in with_derived.iterdir() if f.is_file()}
    assert "map.safetensors" in loose
    name = install(loose, "mine", tmp_path / "a")
    assert not (tmp_path / "a" / name / "map.safetensors").exists()  # computed here, not read
    assert install(files_from_zip(zip_files(loose, "cola-hsto/")), "mine", tmp_path / "b") == name


def test_a_loose_file_climbing_out_is_answered_in_its_own_words(with_derived, tmp_path):
    loose = {f.name: f.read_bytes() for f in with_derived.iterdir() if f.is_file()}
    with pytest.raises(UploadError, match="The file name '../x' points outside") as got:
        install({**loose, "../x": b"{}"}, "mine", tmp_path)
    assert "zip" not in str(got.value).lower()


def test_upload_errors_never_name_a_folder_of_the_server(tmp_path):
    """Defect: a bad upload's message named the server's temporary folder
    (".../uq-upload-XXXX/.staging-upload-...")."""
    import json

    import pytest

    from tests.app_fixtures import make_checkpoints
    from uqlab.models.intake import UploadError, install

    source = make_checkpoints(tmp_path / "src", families=("hsto",)) / "cola-hsto"
    good = {f.name: f.read_bytes() for f in source.iterdir() if f.is_file()}
    config = json.loads(good["config.json"])
    wider = {**config, "model": {**config["model"], "d_model": 32}}
    bad = [
        {**good, "config.json": b"{not json"},
        {**good, "model.safetensors": good["model.safetensors"][:200]},
        {**good, "config.json": json.dumps(wider).encode()},
        {**good, "vocab.json": b"[1, 2]"},
    ]
    folder = tmp_path / "uq-upload-abcd1234"
    blocked = tmp_path / "uq-upload-file"
    blocked.write_text("a file where the upload folder should be")  # writing fails: OSError
    cases = [(files, folder) for files in bad] + [(good, blocked)]
    for files, where in cases:
        with pytest.raises(UploadError) as caught:
            install(files, "mine", where)
        message = str(caught.value)
        for part in ("/tmp", "uq-upload", ".staging", str(tmp_path)):
            assert part not in message, message
