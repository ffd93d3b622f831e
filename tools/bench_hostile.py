"""Bench of the hostile Hugging Face uploads of issue 31: ``python -m tools.bench_hostile``.

Two zips a visitor could upload, each a ``BertForSequenceClassification`` folder (config.json,
a model.safetensors holding only the classifier, MiniLM's tokenizer.json) whose config
describes a model that fits the 200M-parameter limit but not the server: 10^6 layers of width 2
(44M parameters, 10^6 layer modules) and a 49M-word vocabulary of width 4 (196M parameters).
In one process, as the server would, each is refused through :func:`uqlab.models.intake.install`
(after one warm-up refusal, so imports and allocators are warm); one line per config: the wall time
of the refusal (unzip included), the RSS before and after (``VmRSS`` of /proc/self/status),
the peak during it (``VmHWM``, reset before each where the kernel allows) and the message.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HOSTILE = {
    "1e6 layers x width 2": {
        "num_hidden_layers": 10**6,
        "hidden_size": 2,
        "num_attention_heads": 1,
        "intermediate_size": 2,
    },
    "49e6 words x width 4": {
        "vocab_size": 49_000_000,
        "hidden_size": 4,
        "num_attention_heads": 1,
        "intermediate_size": 4,
    },
}
BASE = {
    "model_type": "bert",
    "architectures": ["BertForSequenceClassification"],
    "vocab_size": 30522,
    "max_position_embeddings": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 1,
    "hidden_size": 4,
    "intermediate_size": 4,
    "hidden_act": "gelu",
    "id2label": {"0": "unacceptable", "1": "acceptable"},
}


def _status(key: str) -> float:
    """A /proc/self/status figure in MB (``VmRSS``, ``VmHWM``)."""
    text = Path("/proc/self/status").read_text()
    return next(int(x.split()[1]) for x in text.splitlines() if x.startswith(key + ":")) / 1024


def _reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux: write 5 to clear_refs); False if refused."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def hostile_zip(change: dict) -> bytes:
    """The zip of a classifier folder whose config is :data:`BASE` with ``change``."""
    import torch
    from safetensors.torch import save

    from uqlab.training.pretrained import minilm_dir

    hf = {**BASE, **change}
    width, labels = hf["hidden_size"], len(hf["id2label"])
    weights = save(
        {"classifier.weight": torch.zeros(labels, width), "classifier.bias": torch.zeros(labels)}
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("hostile/config.json", json.dumps(hf))
        z.writestr("hostile/model.safetensors", weights)
        z.writestr("hostile/tokenizer.json", (minilm_dir() / "tokenizer.json").read_bytes())
    return buf.getvalue()


def refuse(data: bytes, folder: Path) -> tuple[float, str]:
    """Upload ``data`` as the server does; (seconds, the message)."""
    from uqlab.catalog.tasks import TASK_NAMES, get_task
    from uqlab.models.intake import UploadError, files_from_zip, install

    task = next(t for t in TASK_NAMES if len(get_task(t).label_names) == len(BASE["id2label"]))
    start = time.perf_counter()
    try:
        install(files_from_zip(data), "hostile", folder, task=task, family="mcdropout")
    except UploadError as exc:
        return time.perf_counter() - start, str(exc)
    return time.perf_counter() - start, "ACCEPTED"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tools.bench_hostile", description=__doc__.split("\n\n")[0]
    )
    p.parse_args(argv)
    zips = {name: hostile_zip(change) for name, change in HOSTILE.items()}
    with tempfile.TemporaryDirectory(prefix="uq-bench-hostile-") as tmp:
        refuse(next(iter(zips.values())), Path(tmp))  # warm-up: imports, allocator
        print(f"server process after imports and a warm-up refusal: RSS {_status('VmRSS'):.0f} MB")
        for name, data in zips.items():
            gc.collect()
            before = _status("VmRSS")
            peak_known = _reset_peak()
            seconds, message = refuse(data, Path(tmp))
            after = _status("VmRSS")
            peak = f"{_status('VmHWM'):.0f} MB" if peak_known else "n/a"
            print(
                f"{name} ({len(data) / 1024:.0f} KB zip): refused in {seconds * 1e3:.1f} ms, "
                f"RSS {before:.0f} -> {after:.0f} MB ({after - before:+.1f}), peak {peak}; "
                f"{message[:150]}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
