"""Files a command writes into a checkpoint, held until the whole command has succeeded.

``python -m uqlab.evaluate`` writes three files into a checkpoint (the stored samples, the map
of the examples, ``metrics.json``) from three computations; a failure in the last one (a task
file without data, a data folder missing) must not leave the first two rewritten. Each writer
takes a ``sink`` (``path, bytes``): a :class:`Pending` holds what they produce, and
:meth:`Pending.commit` writes it only once every computation has returned, each file through a
temporary file and a rename (:func:`uqcore.text.vocab.write_atomic`). A failure before the commit
leaves the checkpoint's folder byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from uqcore.text.vocab import write_atomic

Sink = Callable[[Path, bytes], None]  # where a writer puts a file's bytes


class Pending:
    """Files to write, by path; nothing touches the disk before :meth:`commit`."""

    def __init__(self) -> None:
        self.files: dict[Path, bytes] = {}

    def put(self, path: str | Path, data: bytes) -> None:
        self.files[Path(path)] = bytes(data)

    def commit(self) -> list[Path]:
        """Write every held file (a temporary file, then a rename); their paths."""
        done = []
        for path, data in self.files.items():
            write_atomic(path, data)
            done.append(path)
        self.files.clear()
        return done
