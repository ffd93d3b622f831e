"""Bring your own checkpoint: a zip of its folder, its loose files, or a local folder path.

Nothing from the user is executed or unpickled: only the files of the checkpoint format
(``config.json``, ``model.safetensors``, ``vocab.json``, optional ``metrics.json`` and
``README.md``) or of a Hugging Face classifier folder (``config.json``, ``model.safetensors``,
``tokenizer.json`` and the tokenizer's small files; :mod:`uqlab.import_hf` checks the
architecture, labels and sizes) are accepted, written into a fresh folder under this session's
temporary directory, and then loaded strictly by :func:`uqcore.checkpoint.load_checkpoint`
(safetensors + JSON, every tensor checked). Zip entries that climb out of their folder
(``../``), absolute paths, links, pickles, oversized files and zip bombs are refused with a
message.
No Streamlit here.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import UQError
from uqcore.readers.base_model import BaseRecord, file_sha256
from uqcore.untrusted import load_json
from uqlab.catalog.task_file import data_free
from uqlab.catalog.tasks import TASKS as TASK_TABLE
from uqlab.catalog.tasks import describe, get_task
from uqlab.import_hf import (
    BASE_COPY,
    SIDE_JSON,
    SIDE_TENSORS,
    import_folder,
    inspect,
    write_checkpoint,
)
from uqlab.models.import_reading import probe

MAX_UPLOAD_BYTES = 100 * 2**20  # one upload (zip or files together)
MAX_UNZIPPED_BYTES = 300 * 2**20  # zip bombs stop here
REQUIRED = ("config.json", "model.safetensors")  # + vocab.json for a word-level checkpoint
# + posterior.safetensors for a weight posterior (family laplace: uqcore.nets.posterior)
ALLOWED = (*REQUIRED, "vocab.json", "posterior.safetensors", "metrics.json", "README.md")
HF_REQUIRED = ("config.json", "model.safetensors", "tokenizer.json")
HF_ALLOWED = (
    *HF_REQUIRED,
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    SIDE_JSON,
    SIDE_TENSORS,
)
MAX_FILE_BYTES = {
    "config.json": 2**20,
    "metrics.json": 2 * 2**20,
    "README.md": 256 * 2**10,
    "vocab.json": 32 * 2**20,
    "model.safetensors": MAX_UPLOAD_BYTES,
    "posterior.safetensors": MAX_UPLOAD_BYTES,
    "tokenizer.json": 16 * 2**20,
    "tokenizer_config.json": 2**20,
    "special_tokens_map.json": 64 * 2**10,
    "vocab.txt": 8 * 2**20,
    SIDE_JSON: 2**20,
    SIDE_TENSORS: 16 * 2**20,
}
ANY_ALLOWED = tuple(dict.fromkeys((*ALLOWED, *HF_ALLOWED)))
DERIVED = ("samples.safetensors", "map.safetensors")  # uqlab.evaluate writes them; computed here
PICKLE = re.compile(r"\.(pkl|pickle|pt|pth|bin|ckpt|npy)$", re.IGNORECASE)


class UploadError(UQError):
    """A refused upload; the message says why and what to do. Part of the library's
    :class:`uqcore.exceptions.UQError` hierarchy (a ``ValueError``), so one ``except UQError``
    catches every message meant for the user."""


UPLOAD_PREFIX = "upload-"  # every uploaded checkpoint's name starts with it


def _safe_name(name: str) -> str:
    stem = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40] or "checkpoint"
    return stem if stem.startswith(UPLOAD_PREFIX) else f"{UPLOAD_PREFIX}{stem}"


def _check_member(name: str, zipped: bool = True) -> None:
    """A zip entry's (``zipped``) or an uploaded file's name: inside its folder, no pickle."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or name.startswith(("/", "\\")) or ":" in name:
        if not zipped:
            raise UploadError(
                f"The file name '{name[:80]}' points outside its folder; refused. "
                "Upload the checkpoint's own files (config.json, ...)."
            )
        raise UploadError(
            f"The zip entry '{name[:80]}' points outside its folder; refused. "
            "Zip the checkpoint folder itself."
        )
    if PICKLE.search(name):
        raise UploadError(
            f"'{path.name}' looks like a pickle or a raw tensor file; this app "
            "reads only safetensors + JSON checkpoints (see uqcore.checkpoint)."
        )


def files_from_zip(data: bytes) -> dict[str, bytes]:
    """The checkpoint files of a zip (at its root or in one top folder)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"The upload has {len(data) / 2**20:.0f} MB; the limit is "
            f"{MAX_UPLOAD_BYTES // 2**20} MB."
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise UploadError(
            "This file is not a zip archive. Zip the checkpoint folder, or upload "
            "its files one by one."
        ) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > 50:
            raise UploadError(
                f"The zip holds {len(infos)} entries; a checkpoint has at most "
                f"{len(ANY_ALLOWED)} files."
            )
        total = 0
        out: dict[str, bytes] = {}
        for info in infos:
            _check_member(info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise UploadError(f"'{info.filename}' is a link; refused.")
            if info.is_dir():
                continue
            total += info.file_size
            if total > MAX_UNZIPPED_BYTES:
                raise UploadError(
                    f"The zip expands to more than {MAX_UNZIPPED_BYTES // 2**20} MB; refused."
                )
            base = PurePosixPath(info.filename).name
            if base in ANY_ALLOWED:
                if base in out:
                    raise UploadError(f"The zip holds two '{base}' files; zip one checkpoint.")
                if info.file_size > MAX_FILE_BYTES[base]:
                    raise UploadError(_too_big(base))
                if info.flag_bits & 0x1:
                    raise UploadError(
                        f"'{base}' is encrypted in the zip; zip it without a password."
                    )
                out[base] = _read_member(archive, info, base)
    return out


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, base: str) -> bytes:
    """One member's bytes, never more than it declared (a member that lies about its size, a
    bad CRC, an unknown compression method: a message, not a traceback)."""
    try:
        with archive.open(info) as f:
            data = f.read(info.file_size + 1)
    except NotImplementedError:
        raise UploadError(
            f"'{base}' uses a compression method this app does not read; zip "
            "with the standard (deflate) method."
        ) from None
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, ValueError, zlib.error) as exc:
        raise UploadError(
            f"'{base}' is damaged in the zip ({type(exc).__name__}); zip the checkpoint again."
        ) from None
    if len(data) != info.file_size:
        raise UploadError(
            f"'{base}' does not have the size the zip declares; zip the checkpoint again."
        )
    return data


def _too_big(name: str) -> str:
    return (
        f"'{name}' is larger than {MAX_FILE_BYTES[name] / 2**20:g} MB, the most this app "
        "accepts for that file."
    )


def read_config(config: bytes):
    """An upload's config.json, parsed within the bounds of :mod:`uqcore.untrusted` (size,
    UTF-8, nesting depth, number of values); :class:`UploadError` says why it cannot be read."""
    return load_json(
        config, what="config.json", max_bytes=MAX_FILE_BYTES["config.json"], error=UploadError
    )


def is_hf(files: dict[str, bytes]) -> bool:
    """Whether the files are a Hugging Face folder: a config.json with a ``model_type`` and no
    ``format_version`` (this project's checkpoints have one). False when it cannot be read."""
    try:
        return _hf_config(read_config(files.get("config.json", b"")))
    except UQError:
        return False


def _hf_config(doc) -> bool:
    """Whether a parsed config.json is a Hugging Face one (:func:`is_hf`)."""
    return isinstance(doc, dict) and "model_type" in doc and "format_version" not in doc


def guess_task(config: bytes) -> str | None:
    """The task whose label names are a Hugging Face config's ``id2label`` (in order, any case,
    a name or its start: ``negative`` is ``neg``), for the upload form's default; None when none
    matches or the config cannot be read."""
    try:
        raw = read_config(config).get("id2label") or {}
        names = [str(raw[k]).lower() for k in sorted(raw, key=int)]
    except (ValueError, AttributeError, TypeError):  # UploadError is a ValueError
        return None
    for task in tuple(TASK_TABLE):  # built in first, then the operator's described tasks
        ours = [n.lower() for n in get_task(task).label_names]
        if len(ours) == len(names) and all(
            a.startswith(b) or b.startswith(a) for a, b in zip(names, ours, strict=True)
        ):
            return task
    return None


def _check_sizes(files: dict[str, bytes]) -> None:
    for name, blob in files.items():
        _check_member(name, zipped=False)
        if name in MAX_FILE_BYTES and len(blob) > MAX_FILE_BYTES[name]:
            raise UploadError(_too_big(name))


def check_files(files: dict[str, bytes]) -> bool:
    """Check the names, sizes and set of ``files``; whether they are a Hugging Face folder
    (:func:`is_hf`). Their config.json is parsed once, here: one that cannot be read (not
    UTF-8, too deep...) is said as such, never taken for a folder lacking other files."""
    _check_sizes(files)
    doc = read_config(files["config.json"]) if "config.json" in files else None
    if _hf_config(doc):
        _check_hf_files(files)
        return True
    required = list(REQUIRED)
    if "vocab.json" not in files and _word_level(doc):
        required.append("vocab.json")
    _expect(
        files,
        required,
        ALLOWED,
        "a checkpoint folder holds config.json, "
        "model.safetensors and, for a word-level model, vocab.json (plus optional "
        "metrics.json, README.md, and a Laplace model's posterior.safetensors); an adapter "
        "checkpoint on a pretrained base has no vocab.json.",
        "a checkpoint holds",
    )
    return False


def _check_hf_files(files: dict[str, bytes]) -> None:
    _expect(
        files,
        HF_REQUIRED,
        HF_ALLOWED,
        "a Hugging Face classifier folder holds config.json, "
        "model.safetensors and tokenizer.json (model.save_pretrained(folder, "
        "safe_serialization=True) and the fast tokenizer's save_pretrained(folder)).",
        "a Hugging Face folder here holds",
    )


def _expect(files: dict[str, bytes], required, allowed, holds: str, only: str) -> None:
    """Raise UploadError naming what ``files`` lacks of ``required`` (``holds``: what such a
    folder holds) or has beyond ``allowed`` (``only``: who holds only those)."""
    missing = [n for n in required if n not in files]
    if missing:
        raise UploadError(f"Missing {', '.join(missing)}: {holds}")
    unknown = sorted(set(files) - set(allowed))
    if unknown:
        raise UploadError(
            f"Unexpected file(s) {', '.join(unknown)[:120]}; {only} only {', '.join(allowed)}."
        )


def _word_level(doc) -> bool:
    """Whether a parsed config.json describes a word-level model (its own vocab.json); none, or
    one without a model section, counts as one (loading then says what is wrong with it)."""
    model = doc.get("model") if isinstance(doc, dict) else None
    return not isinstance(model, dict) or model.get("backbone", "word") == "word"


def _check_training(training: dict, classes: int) -> None:
    """The parts of config.json -> training the pages read: label names and split sizes."""
    names = training.get("label_names")
    if names is not None and (
        not isinstance(names, list)
        or len(names) != classes
        or not all(isinstance(n, str) and 0 < len(n) <= 40 for n in names)
    ):
        raise UploadError(
            f"training.label_names must list {classes} names (one per class, at "
            "most 40 characters each) or be left out."
        )
    splits = training.get("splits")
    if splits is not None and (
        not isinstance(splits, dict)
        or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in splits.values()
        )
    ):
        raise UploadError(
            "training.splits must map split names to example counts, e.g. "
            '{"train": 6354, "dev": 908}, or be left out.'
        )


def _check_metrics(metrics: dict, metric: str) -> None:
    """metrics.json as ``uqlab.evaluate`` writes it: the per-domain sections the pages read, each
    with the task metric's mean and std (``metric``, a key of ``METRICS``: "accuracy" gives
    ``accuracy_mean`` / ``accuracy_std``), and only finite numbers (a NaN would be shown as
    "nan ± inf")."""
    for key in ("id", "ood"):
        if not isinstance(metrics.get(key), dict):
            raise UploadError(
                f"metrics.json lacks its '{key}' section: leave metrics.json out (the pages "
                "then sample the checkpoint here), or write it again with uqlab.evaluate."
            )
    if not isinstance(metrics.get("samples"), int):
        raise UploadError(
            "metrics.json lacks 'samples' (T): leave metrics.json out (the pages then "
            "sample the checkpoint here), or write it again with uqlab.evaluate."
        )

    def finite(value) -> bool:
        if isinstance(value, dict):
            return all(finite(v) for v in value.values())
        if isinstance(value, list):
            return all(finite(v) for v in value)
        return not isinstance(value, float) or math.isfinite(value)

    if not finite(metrics):
        raise UploadError(
            "metrics.json holds NaN or infinite numbers; evaluate the checkpoint "
            "again, or leave metrics.json out."
        )
    for key in ("id", "ood"):
        for stat_ in ("mean", "std"):
            value = metrics[key].get(f"{metric}_{stat_}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UploadError(
                    f"metrics.json's '{key}' section lacks its {metric} ({metric}_{stat_}, a "
                    "number): leave metrics.json out (the pages then sample the checkpoint "
                    "here), or write it again with uqlab.evaluate."
                )


SERVER_PATH = re.compile(  # an absolute path of two or more parts, not its closing full stop
    r"(?<![\w.~:/-])(?:[A-Za-z]:)?[/\\](?:[^\s/\\'\"]+[/\\])+(?:[^\s/\\'\",;:]*[^\s/\\'\",;:.)])?"
)


def _public(message: str, *folders: Path) -> str:
    """``message`` without a path of the server: a file in ``folders`` (the upload's temporary
    folders) is named by its file name alone, any other absolute path is replaced by words."""
    for f in folders:
        for form in dict.fromkeys((str(f), str(f.resolve()))):
            message = message.replace(form + os.sep, "").replace(form, "the uploaded folder")
    return SERVER_PATH.sub("a folder of the server", message)


def install(
    files: dict[str, bytes],
    name: str,
    folder: str | Path,
    *,
    task: str | None = None,
    family: str = "mcdropout",
    layers: str = "last",
    task_doc: bytes | None = None,
) -> str:
    """Write ``files`` as checkpoint ``upload-<name>`` under ``folder``, load it strictly and
    return its name; on any problem nothing is left behind and :class:`UploadError` says why,
    in words that never name a folder of the server. A Hugging Face folder (:func:`is_hf`)
    becomes a checkpoint of ``family`` for ``task`` whose base is a copy inside it; or, with
    ``task_doc`` (a task file's bytes, :func:`visitor_task`), for the visitor's own task. The
    files this app derives from a checkpoint (:data:`DERIVED`) are left out: they are computed
    here."""
    files = {k: v for k, v in files.items() if k not in DERIVED}
    hf = check_files(files)
    folder = Path(folder)
    target_name = _safe_name(name)
    target = folder / target_name
    staging = folder / f".staging-{target_name}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        if hf:
            _stage_hf(files, staging, task, family, layers, task_doc)
        else:
            _stage(files, staging)
    except UQError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UploadError(_public(f"Not a valid checkpoint: {exc}", staging, folder)) from None
    except OSError as exc:  # a full disk, a folder gone: said without the server's paths
        shutil.rmtree(staging, ignore_errors=True)
        raise UploadError(
            f"The server could not store the upload ({exc.strerror or 'error'}); try again later."
        ) from None
    except Exception:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UploadError(
            f"The server could not store the upload ({exc.strerror or 'error'}); try again later."
        ) from None
    return target_name


def _stage(files: dict[str, bytes], staging: Path) -> None:
    """A checkpoint in this project's format: written as it is, loaded strictly, its task
    checked (:func:`_upload_task`); a task description it carries is kept without its files."""
    for fname, blob in files.items():
        (staging / fname).write_bytes(blob)
    ck = load_checkpoint(staging, local_base=False)  # strict: raises with the reason
    probe(ck)  # one forward pass: a config that validates but cannot run is refused here
    training = _upload_task(ck.training, ck.config.num_classes)
    _check_training(training, ck.config.num_classes)
    if training != ck.training:  # its task description, without the files it named
        doc = json.loads((staging / "config.json").read_text(encoding="utf-8"))  # checked above
        doc["training"] = training
        (staging / "config.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    if ck.metrics:
        _check_metrics(ck.metrics, _metric_name(training))


DROPPED = "task_spec_dropped"  # training: the keys of an upload's task description naming files


def _metric_name(training: dict) -> str:
    """The task metric an upload's metrics.json reports: its server task's, or the one its kept
    task description names (or defaults to, as a task file does)."""
    task = training["task"]
    if task in TASK_TABLE:
        return TASK_TABLE[task].metric
    return describe(training["task_spec"], ".", "the checkpoint's task_spec", data_free=True).metric


def _upload_task(training: dict, classes: int) -> dict:
    """The training info an uploaded checkpoint keeps. An upload never registers a task and
    never names a file of the server: its task is one of the server's (shipped, or described by
    the operator's checkpoints and command lines), whose description wins; or a task it
    describes in ``task_spec``, kept data-free (:func:`uqlab.catalog.task_file.data_free`: names,
    labels, metric) in its own folder, so it is this session's alone and shadows nothing.
    The keys left out are listed under :data:`DROPPED` (the page says so)."""
    training = dict(training)
    task, doc = training.get("task"), training.pop("task_spec", None)
    training.pop(DROPPED, None)
    if task in TASK_TABLE:
        labels = TASK_TABLE[task].label_names
    elif isinstance(doc, dict) and doc.get("name") == task and isinstance(task, str):
        try:
            kept, dropped = data_free(doc)
        except UQError as exc:
            raise UploadError(str(exc)) from None
        training["task_spec"] = kept
        if dropped:
            training[DROPPED] = dropped
        labels = tuple(kept["label_names"])
        training.setdefault("label_names", list(labels))
    else:
        raise UploadError(
            f"The checkpoint's training info names task {str(task)[:40]!r}; this server knows "
            f"{', '.join(TASK_TABLE)}. Set config.json -> training.task to one of them, or "
            "describe yours in training.task_spec (its name, label_names and metric; any "
            "data files are left out: evaluate it on your own labelled file)."
        )
    if len(labels) != classes:
        raise UploadError(
            f"The checkpoint has {classes} classes but its task "
            f"{str(task)[:40]!r} has {len(labels)}."
        )
    return training


def dropped_note(training: dict) -> str | None:
    """What the page says of the files an upload's task description named, or None."""
    dropped = training.get(DROPPED)
    if not dropped:
        return None
    return (
        "Its task description also named " + ", ".join(map(str, dropped)) + ": an upload may "
        "not point the server at files, so they were left out. Its dataset pages use your "
        "own labelled file."
    )


TASK_DOC_BYTES = 1 << 20  # a task description is a small JSON (uqlab.catalog.task_file's bound)


def visitor_task(task_doc: bytes) -> dict:
    """The task a visitor describes (a task file's bytes), data-free and never registered:
    read within :mod:`uqcore.untrusted`'s bounds, its fields that name no file kept
    (:func:`uqlab.catalog.task_file.data_free`: the files it names are dropped, never read) and
    checked, named apart from the server's tasks. :class:`UploadError` in one line otherwise."""

    doc = load_json(
        task_doc, what="the task description", max_bytes=TASK_DOC_BYTES, error=UploadError
    )
    if not isinstance(doc, dict):
        raise UploadError("The task description must be a JSON object (a task file).")
    try:
        kept, _ = data_free(doc)  # checked as a task file is, without its files
    except UQError as exc:
        raise UploadError(str(exc)) from None
    if kept["name"] in TASK_TABLE:
        raise UploadError(
            f"Task {kept['name'][:40]!r} is one of this server's: pick it from the list, or "
            "name yours otherwise."
        )
    return kept


def _stage_hf(
    files: dict[str, bytes], staging: Path, task, family: str, layers: str, task_doc=None
) -> None:
    """A Hugging Face folder: its files go to ``base/`` inside the checkpoint (referenced by
    their sha256), the checkpoint of ``family`` beside them, loaded strictly; its task one of
    the server's, or the visitor's own description (``task_doc``, :func:`visitor_task`)."""
    described = visitor_task(task_doc) if task_doc is not None else None
    if described is not None:
        task = described["name"]
    elif task not in TASK_TABLE:  # the server's tasks: built in, or described by its operator
        known = ", ".join(TASK_TABLE)
        raise UploadError(f"Pick the task whose data the pages use: one of {known}.")
    base = staging / BASE_COPY
    base.mkdir()
    for fname, blob in files.items():
        (base / fname).write_bytes(blob)
    info = inspect(base)
    record = BaseRecord.for_folder(BASE_COPY, file_sha256(base / "model.safetensors"))
    write_checkpoint(
        staging, info, task, family, layers, record, local_base=False, described=described
    )


SERVER_PATHS_ENV = "UQ_ALLOW_SERVER_PATHS"  # "1": visitors may load folders of the server


def server_paths_allowed() -> bool:
    """Whether the operator let visitors load a checkpoint from a folder of the server (off by
    default: on a shared link, a stranger could otherwise probe and read the file system)."""
    return os.environ.get(SERVER_PATHS_ENV, "").strip() == "1"


def from_path(path: str) -> tuple[dict[str, bytes], str]:
    """The checkpoint files of a local folder (read, never modified) and its name. Refused
    unless :func:`server_paths_allowed`; links are never followed."""
    if not server_paths_allowed():
        raise UploadError(
            f"Loading a folder of the server is off here; the operator can allow "
            f"it with {SERVER_PATHS_ENV}=1. Upload a zip instead."
        )
    try:
        folder = Path(path).expanduser()
        if folder.is_symlink() or not folder.is_dir():
            raise UploadError("That is not a folder on this server (links are not followed).")
        files = {}
        for fname in ANY_ALLOWED:
            f = folder / fname
            if f.is_symlink():
                raise UploadError(f"{fname} is a link; links are not followed: copy the file in.")
            if f.is_file():
                if f.stat().st_size > MAX_UPLOAD_BYTES:
                    raise UploadError(f"{fname} is larger than {MAX_UPLOAD_BYTES // 2**20} MB.")
                files[fname] = f.read_bytes()
    except (OSError, RuntimeError) as exc:  # a name too long, a loop of "~", no permission
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise UploadError(
            f"That folder cannot be read on this server ({reason}); check the path."
        ) from None
    return files, folder.name


HF_DIR_ENV = "UQ_HF_DIR"  # a folder of Hugging Face classifier folders the operator offers


def hf_folders() -> dict[str, Path]:
    """The Hugging Face classifier folders of ``$UQ_HF_DIR`` (off when unset): name -> folder,
    sorted; a sub-folder is listed when it holds a config.json with a ``model_type`` (the
    import checks the rest when one is picked). Links are not followed."""
    root = os.environ.get(HF_DIR_ENV, "").strip()
    if not root or not Path(root).is_dir():
        return {}
    out = {}
    for sub in sorted(Path(root).iterdir())[:200]:
        config = sub / "config.json"
        if sub.is_symlink() or not sub.is_dir() or config.is_symlink() or not config.is_file():
            continue
        if config.stat().st_size <= MAX_FILE_BYTES["config.json"] and is_hf(
            {"config.json": config.read_bytes()}
        ):
            out[sub.name] = sub
    return out


def install_hf_folder(
    path: Path, name: str, folder: str | Path, *, task: str, family: str, layers: str = "last"
) -> str:
    """Import an operator's Hugging Face folder (:func:`hf_folders`) as ``upload-<name>`` of
    ``family`` under this session's ``folder``; the checkpoint references the folder (no copy).
    :class:`UploadError` with a message that names no server path."""
    target_name = _safe_name(name)
    try:
        import_folder(
            path, target_name, task, family=family, layers=layers, root=folder, describe_task=False
        )
    except UQError as exc:
        raise UploadError(_public(f"Not a valid model folder: {exc}", Path(folder))) from None
    except OSError as exc:
        raise UploadError(
            f"The server could not store the checkpoint "
            f"({exc.strerror or 'error'}); try again later."
        ) from None
    return target_name
