"""Folders a killed process leaves behind, removed once their writer is gone.

A folder that lives only while its process works (an import's ``.staging-*``, a server's
``uq-upload-*`` session folders) carries :func:`owner_tag` in its name: the writer's pid and
this host's name. :func:`remove_stale` removes the folders of this host whose process no longer
exists; a folder whose pid is alive (or whose liveness cannot be told) is always kept, so no
working process ever loses its folder; a folder of another host, a link, a file or a folder of
another user is never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOST = re.sub(r"[^A-Za-z0-9.]", "", socket.gethostname())[:40] or "host"


def owner_tag(pid: int | None = None) -> str:
    """``<pid>@<host>`` of this process (or of ``pid``): what a stale-able folder's name holds."""
    return f"{os.getpid() if pid is None else pid}@{HOST}"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (True when it cannot be told: a folder is kept)."""
    if pid <= 0:  # 0 and negatives name process groups: never "dead"
        return True
    try:
        os.kill(pid, 0)  # signal 0: a check, nothing is sent
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists under another user
        return True
    return True


def remove_stale(folder: str | os.PathLike, pattern: str) -> list[Path]:
    """Remove the folders directly in ``folder`` whose whole name matches ``pattern`` (a regex
    holding :func:`tag_pattern`, whose group ``pid`` is the writer's) and whose process is
    gone; return those removed."""
    regex = re.compile(pattern)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = regex.fullmatch(entry.name)
        if match is None or pid_alive(int(match["pid"])):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue  # a link or a file of that name is not ours
            if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)  # rmtree never follows a link inside
        removed.append(Path(entry.path))
    return removed


def tag_pattern() -> str:
    """The regex of :func:`owner_tag` on this host, the pid as group ``pid``."""
    return rf"(?P<pid>\d+)@{re.escape(HOST)}"


def staging_pattern() -> str:
    """The names of :func:`staged_checkpoint`'s work folders (this host's, any pid)."""
    return rf"\.staging-.+\.{tag_pattern()}"


@contextmanager
def staged_checkpoint(root: Path, name: str) -> Iterator[Path]:
    """A work folder ``root/.staging-<name>.<pid>@<host>`` to write checkpoint ``name`` in: moved
    to ``root/name`` (replacing an earlier one) when the block ends without error, removed when
    it raises, so a failed command leaves the checkpoints as they were. Those of killed writers
    (their process gone) are removed first, those of running ones kept."""
    remove_stale(root, staging_pattern())
    staging = root / f".staging-{name}.{owner_tag()}"
    shutil.rmtree(staging, ignore_errors=True)  # this process's own, from an earlier try
    try:
        staging.mkdir(parents=True)
        yield staging
        shutil.rmtree(root / name, ignore_errors=True)
        staging.rename(root / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
