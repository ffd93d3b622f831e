"""Folders of killed processes are removed, those of live ones kept (uqlab.models.stale)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from uqlab.models.stale import HOST, owner_tag


@pytest.fixture(scope="module")
def hf_good(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.hf_tiny import tiny_folder

    return tiny_folder("bert", tmp_path_factory.mktemp("hf") / "tiny-bert")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_upload_folders_of_dead_servers_go_and_live_ones_stay(tmp_path, monkeypatch):
    from ui import cached

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead, live = _dead_pid(), os.getpid()
    gone = tmp_path / f"uq-upload-{dead}@{HOST}-abcd1234"
    kept = [
        tmp_path / f"uq-upload-{live}@{HOST}-efgh5678",  # this server's session
        tmp_path / f"uq-upload-{dead}@otherhost-ijkl9012",  # another machine's
        tmp_path / "uq-upload-mnop3456",  # no owner recorded: cannot tell
        tmp_path / f"other-{dead}@{HOST}-qrst7890",
    ]  # not ours
    for folder in (gone, *kept):
        (folder / "upload-x").mkdir(parents=True)
    link = tmp_path / f"uq-upload-{dead}@{HOST}-link0000"
    link.symlink_to(kept[0])
    cached._sweep_stale_uploads.clear()
    assert cached._sweep_stale_uploads() == 1
    assert not gone.exists()
    assert all((f / "upload-x").is_dir() for f in kept)
    assert link.is_symlink() and (kept[0] / "upload-x").is_dir()  # a link is never followed
    with tempfile.TemporaryDirectory(prefix=f"{cached.UPLOAD_TMP_PREFIX}{owner_tag()}-") as new:
        assert Path(new).name.startswith(f"uq-upload-{owner_tag()}-")  # what upload_folder makes
        assert cached._sweep_stale_uploads() == 1  # once per process: the cached count


def test_a_killed_imports_staging_folder_is_removed_by_the_next_import(hf_good, tmp_path):
    from uqlab.import_hf import import_folder

    dead = _dead_pid()
    stale = tmp_path / f".staging-old.{dead}@{HOST}"
    running = tmp_path / f".staging-other.{os.getpid()}@{HOST}"  # a live import's
    for folder in (stale, running):
        (folder / "base").mkdir(parents=True)
    out = import_folder(hf_good, "x", "cola", family="trans", root=tmp_path)
    assert out == tmp_path / "x" and (out / "config.json").is_file()
    assert not stale.exists() and running.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, "x"])
