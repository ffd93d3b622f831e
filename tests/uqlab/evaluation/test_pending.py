"""Files written only on commit (uqlab.evaluation.pending)."""

from __future__ import annotations

from uqlab.evaluation.pending import Pending


def test_pending_files_are_written_only_on_commit(tmp_path):
    pending = Pending()
    pending.put(tmp_path / "a.bin", b"one")
    pending.put(tmp_path / "b.bin", b"two")
    assert not list(tmp_path.iterdir())
    assert [p.name for p in pending.commit()] == ["a.bin", "b.bin"]
    assert (tmp_path / "a.bin").read_bytes() == b"one" and not pending.files
