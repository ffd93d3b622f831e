"""The dev split's LAC calibration scores as ``metrics.json`` keeps them, and reads them back.

The explorer's coverage slider, Error analysis and Results build split-conformal sets from these
scores (one per dev text, ``1 - p(true class)`` of the mean prediction, rounded to 5 decimals):
2,500 of them for IMDB, 22 KB of each whole-set IMDB ``metrics.json`` as a JSON list of decimals,
which the assets' 80 MiB could not hold for every checkpoint. Format: ``scores.lac_steps_e5``, the
sorted scores in units of 1e-5 as the first one and then each one's step up from the one before
(``[2, 0, 3, 1, ...]``: 0.00002, 0.00002, 0.00005, 0.00006, ...): the same numbers, bit for bit
(``i / 1e5`` is the double nearest to ``i`` x 10^-5, as ``round(x, 5)`` is), in a third of the
characters (imdb-smollm2-trans's 2,500: 19,769 -> 6,410; the 47 shipped ``metrics.json`` files:
1,207,551 -> 907,262 bytes). ``scores.lac``, the list of
decimals earlier evaluations and other people's files hold, is read as well.

A visitor's ``metrics.json`` is untrusted: :func:`decode` returns None for anything but a list of
at most :data:`MAX_SCORES` integers (steps >= 0, ending at most at 1) or of numbers in [0, 1].

``python -m uqlab.catalog.conformal_scores --all`` rewrites the shipped checkpoints' files from
the list form (nothing else in them changes; a file already compact is left alone; a file that
does not parse stops the command before any file is written).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from uqcore.text.vocab import write_atomic
from uqlab.catalog.paths import checkpoint_dir

KEY = "lac_steps_e5"  # the compact form
OLD_KEY = "lac"  # the list of decimals
SCALE = 100_000  # the scores' 5 decimals
MAX_SCORES = 200_000  # more than any dev split here holds (IMDB: 2,500)


def encode(scores) -> dict[str, list[int]]:
    """``{KEY: steps}`` of ``scores`` (any order; each in [0, 1], kept to 5 decimals)."""
    units = sorted(round(float(x) * SCALE) for x in scores)
    return {KEY: [b - a for a, b in zip([0, *units[:-1]], units, strict=True)]}


def decode(stored) -> list[float] | None:
    """The ascending scores of a ``conformal_calibration.scores`` dict (either form), or None
    where it holds none or anything else than the forms above."""
    if not isinstance(stored, dict):
        return None
    steps = stored.get(KEY)
    if steps is not None:
        if not _ints(steps) or any(s < 0 for s in steps) or sum(steps) > SCALE:
            return None
        out, total = [], 0
        for s in steps:
            total += s
            out.append(total / SCALE)
        return out
    old = stored.get(OLD_KEY)
    if not isinstance(old, list) or not 0 < len(old) <= MAX_SCORES:
        return None
    if not all(_number(x) and 0.0 <= x <= 1.0 for x in old):
        return None
    return sorted(float(x) for x in old)


def _ints(values) -> bool:
    return (
        isinstance(values, list)
        and 0 < len(values) <= MAX_SCORES
        and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    )


def _number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def recast(metrics: dict) -> bool:
    """Turn ``metrics``'s list-form scores into the compact form in place; whether it did."""
    scores = (metrics.get("conformal_calibration") or {}).get("scores")
    if not isinstance(scores, dict) or OLD_KEY not in scores:
        return False
    values = decode({OLD_KEY: scores[OLD_KEY]})
    if values is None:
        raise ValueError("the stored LAC scores are not a list of numbers in [0, 1]")
    scores.pop(OLD_KEY)
    scores.update(encode(values))
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uqlab.catalog.conformal_scores",
        description="Rewrite metrics.json's conformal calibration scores in the compact form.",
    )
    p.add_argument("--all", action="store_true", help="every checkpoint folder under --root")
    p.add_argument("--root", default=None, help="folder of checkpoints (default: the shipped)")
    args = p.parse_args(argv)
    if not args.all:
        p.error("say --all (every metrics.json under the folder of checkpoints)")
    root = Path(args.root) if args.root else checkpoint_dir()
    changed = []  # every file is read and recast before any is written: a bad one stops all
    for file in sorted(root.glob("*/metrics.json")):
        try:
            metrics = json.loads(file.read_text())
            if recast(metrics):
                changed.append((file, metrics))
        except (OSError, ValueError, AttributeError) as exc:
            print(
                f"error: {file.parent.name}/metrics.json: {exc}; nothing written", file=sys.stderr
            )
            return 2
    for file, metrics in changed:
        before = file.stat().st_size
        write_atomic(file, json.dumps(metrics, separators=(",", ":")).encode())
        print(f"{file.parent.name}: {before:,} -> {file.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
