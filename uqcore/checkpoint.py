"""Strict checkpoints: a directory of safetensors + JSON, no pickle anywhere.

Layout of a checkpoint directory::

    config.json        {"format_version": 2, "model": ModelConfig.to_dict(), "training": {...}}
    model.safetensors  every tensor of build_model(cfg).state_dict(); metadata format_version
                       (the weights' layout has not changed since "1")
    vocab.json         see uqcore.text.vocab.Vocab.save (word-level models)
    posterior.safetensors  a weight posterior's tensors (family laplace: uqcore.nets.posterior)
    metrics.json       optional: the checkpoint's evaluation (a JSON object)
    README.md          optional: the model card

A shipped checkpoint whose tensors are byte for byte another's (a Probabilistic Transformer is a
TRANS with EM at inference: same recipe, same seed, same weights) may hold no ``model.safetensors``
and name that sibling instead: ``config.json`` -> ``"weights": {"checkpoint": NAME, "sha256":
HEX}``. Only loads that allow it (:func:`uqcore.registry.load`, for a folder of checkpoints) read
the sibling ``../NAME/model.safetensors``, after checking its sha256; a directory loaded alone (an
upload) must hold its own weights. A ``"vocab"`` record does the same for ``vocab.json`` (the
word-level checkpoints of one task share one vocabulary). ``python -m uqlab.share_weights`` writes
either record.

Loading is strict: a missing file, malformed JSON, an unknown format version, an invalid config, a
pickle file in the directory, a missing / unexpected / mis-shaped / non-finite tensor each raise a
:class:`CheckpointError` that names the problem and what to do. ``torch.load`` is never called.
A format-1 ``config.json`` (one flat attention record of every family's fields) is read through
:func:`uqcore.config.upgrade_v1`; ``python -m uqlab.upgrade DIR`` rewrites it as format 2.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import save

from uqcore.backbones import BackboneSpec, get_backbone
from uqcore.budget import DEFAULT_BUDGET, Budget, check_budget
from uqcore.build import attach_base, build_model, build_unset, frozen_names
from uqcore.config import FORMAT_VERSION, ModelConfig, upgrade_v1
from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.nets.linear import merge_adapters
from uqcore.nets.posterior import POSTERIOR
from uqcore.readers.base_model import BaseRecord, file_sha256, locate
from uqcore.readers.decoder_weights import decoder_specials
from uqcore.text.prompt import prompt_of
from uqcore.text.vocab import Vocab, write_atomic
from uqcore.text.wordpiece import WordPiece
from uqcore.untrusted import read_json_file

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.json"
METRICS_FILE = "metrics.json"
CARD_FILE = "README.md"
SHARED = ("weights", "vocab")  # records naming a sibling checkpoint's file (a folder of them)
POSTERIOR_FILE = "posterior.safetensors"  # a weight posterior's tensors (uqcore.nets.posterior)
REQUIRED_FILES = (CONFIG_FILE, WEIGHTS_FILE)  # + VOCAB_FILE on a word-level backbone
SUPPORTED_VERSIONS = (1, FORMAT_VERSION)  # 1: read through upgrade_v1
PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt")
STORAGE_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@dataclass
class Checkpoint:
    """A loaded checkpoint: ``model`` is in eval mode with float32 weights, ``name`` is the
    directory's name, ``training`` the free-form training info (``{}`` if none was saved)."""

    path: Path
    name: str
    model: torch.nn.Module
    config: ModelConfig
    vocab: Vocab
    training: dict[str, Any]
    metrics: dict[str, Any] | None
    card: str | None
    base: BaseRecord | None = None  # the pretrained base it builds on (pretrained backbones)

    @property
    def read_len(self) -> int:
        """Tokens a text is read at: the length it was trained at (:func:`read_length`)."""
        return read_length(self.config.max_len, self.training)


def read_length(positions: int, training: dict[str, Any] | None) -> int:
    """The number of tokens (specials included) a checkpoint reads a text at: the length it
    was trained at, ``training["config"]["max_len"]`` (recorded once, by the trainer), capped by
    ``positions``, the model's position table (``ModelConfig.max_len``, a separate limit: a
    pretrained base's table is longer than its adapters ever saw). A checkpoint without a
    recorded training length (an imported model) reads at ``positions``."""
    config = (training or {}).get("config")
    trained = config.get("max_len") if isinstance(config, dict) else None
    if isinstance(trained, int) and not isinstance(trained, bool) and trained >= 2:
        return min(trained, positions)
    return positions


# ---------------------------------------------------------------------------------------- saving
def save_checkpoint(
    path: str | os.PathLike,
    model: torch.nn.Module | dict[str, torch.Tensor],
    cfg: ModelConfig,
    vocab: Vocab | WordPiece | None,
    *,
    training: dict | None = None,
    metrics: dict | None = None,
    card: str | None = None,
    dtype: torch.dtype | None = None,
    base: BaseRecord | None = None,
) -> Path:
    """Write ``model`` (built from ``cfg``, or the tensors a checkpoint of ``cfg`` stores: its
    state dict without the base's) and ``vocab`` as a checkpoint directory at ``path``.

    Creates the directory; every file is written atomically (temp file + ``os.replace``) and
    ``config.json`` last, so a directory with a ``config.json`` is complete. Tensors are copied
    (contiguous, own storage, on CPU); floating tensors are stored as ``dtype`` when given
    (float16 / bfloat16 halve the file; loading casts back to float32). Stale optional files
    (``metrics.json``, ``README.md``) of an earlier save are removed when not given again.
    Raises :class:`CheckpointError` if the model does not match ``cfg`` or ``vocab``, if
    ``training`` / ``metrics`` are not JSON objects, or if a value overflows ``dtype``.
    """
    backbone = _check_save_args(cfg, vocab, base, dtype, training, metrics, card)
    doc = {"format_version": FORMAT_VERSION, "model": cfg.to_dict(), "training": training or {}}
    if backbone.pretrained:
        doc["base"] = base.to_dict()
    try:
        config_blob = json.dumps(doc, indent=2, ensure_ascii=False).encode()
        metrics_blob = None if metrics is None else json.dumps(metrics, indent=2).encode()
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"training / metrics must be JSON-serialisable: {exc}.") from None
    frozen = frozen_names(cfg)
    state = model.state_dict() if isinstance(model, torch.nn.Module) else dict(model)
    # a weight posterior's tensors go to a file of their own; in 16 bits as bfloat16, which
    # keeps a curvature's range (float16 would overflow it)
    apart = {k: state.pop(k) for k in [k for k in state if _in_posterior_file(k)]}
    tensors = _stored_tensors(state, frozen, dtype)
    apart = _stored_tensors(apart, frozen, None if dtype is None else torch.bfloat16)
    with torch.device("meta"):  # names, shapes and kinds only: nothing allocated
        expected = _trained(build_model(cfg).state_dict(), frozen)
    _check_tensors(tensors | apart, expected, f"the model being saved for {cfg.family!r}")
    card_blob = None if card is None else card.encode()
    blobs = (config_blob, metrics_blob, card_blob)
    return _write_files(Path(path), tensors, vocab, *blobs, posterior=apart or None)


def _check_save_args(cfg, vocab, base, dtype, training, metrics, card) -> BackboneSpec:
    """The arguments of :func:`save_checkpoint` checked (CheckpointError saying what to pass);
    returns the config's backbone."""
    if not isinstance(cfg, ModelConfig):
        raise CheckpointError("cfg must be a ModelConfig.")
    cfg.validate()
    backbone = get_backbone(cfg.backbone)
    if backbone.pretrained:  # the base's weights and tokenizer stay in its package
        if not isinstance(base, BaseRecord):
            raise CheckpointError(
                f"A {cfg.backbone!r} checkpoint records its base: pass base=BaseRecord(...) "
                "(uqcore.readers.base_model.record_for)."
            )
        if vocab is not None and len(vocab) != cfg.vocab_size:
            raise CheckpointError(
                f"The tokenizer has {len(vocab)} ids but the model embeds "
                f"{cfg.vocab_size}; use the base's own tokenizer."
            )
    elif not isinstance(vocab, Vocab):
        raise CheckpointError("vocab must be a uqcore.text.vocab.Vocab for a word-level model.")
    else:
        _check_vocab_fits(vocab, cfg, "the vocabulary")
    if dtype is not None and dtype not in STORAGE_DTYPES:
        raise CheckpointError(f"dtype must be None or one of {STORAGE_DTYPES}, got {dtype}.")
    if not (isinstance(training, dict | None) and isinstance(metrics, dict | None)):
        raise CheckpointError("training and metrics must be dicts (JSON objects) or None.")
    if not isinstance(card, str | None):
        raise CheckpointError(f"card must be a Markdown str or None, got {type(card).__name__}.")
    return backbone


def _stored_tensors(
    state: dict[str, torch.Tensor], frozen: frozenset[str], dtype: torch.dtype | None
) -> dict[str, torch.Tensor]:
    """The tensors a checkpoint stores: ``state`` without the base's (``frozen``), each copied
    (contiguous, own storage, on CPU), floating ones cast to ``dtype`` when given; a value that
    overflows ``dtype`` raises CheckpointError."""
    tensors: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if _unprefixed(key) in frozen:
            continue  # the base's: never copied
        t = value.detach().to("cpu").contiguous().clone()  # own storage: shared views are fine
        if dtype is not None and t.is_floating_point():
            cast = t.to(dtype)
            if bool(torch.isfinite(t).all()) and not bool(torch.isfinite(cast).all()):
                raise CheckpointError(
                    f"Tensor {key!r} overflows {dtype} (max |value| {t.abs().max().item():.3g}); "
                    "save it with dtype=None (float32)."
                )
            t = cast
        tensors[key] = t
    return tensors


def _write_files(
    out: Path,
    tensors: dict[str, torch.Tensor],
    vocab: Vocab | WordPiece | None,
    config_blob: bytes,
    metrics_blob: bytes | None,
    card_blob: bytes | None,
    posterior: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Write the checkpoint directory ``out``: each file atomically, ``config.json`` last (a
    directory with it is complete); an optional file not given again is removed. ``posterior``:
    a weight posterior's tensors, in :data:`POSTERIOR_FILE`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / CONFIG_FILE).unlink(missing_ok=True)  # rewritten last: a dir with it is complete
    meta = {"format_version": str(FORMAT_VERSION)}
    write_atomic(out / WEIGHTS_FILE, save(tensors, metadata=meta))
    if posterior is None:
        (out / POSTERIOR_FILE).unlink(missing_ok=True)
    else:
        write_atomic(out / POSTERIOR_FILE, save(posterior, metadata=meta))
    if isinstance(vocab, Vocab):
        vocab.save(out / VOCAB_FILE)
    for name, content in ((METRICS_FILE, metrics_blob), (CARD_FILE, card_blob)):
        if content is None:
            (out / name).unlink(missing_ok=True)  # stale from an earlier save of other weights
        else:
            write_atomic(out / name, content)
    write_atomic(out / CONFIG_FILE, config_blob)
    return out


# --------------------------------------------------------------------------------------- loading
def read_checkpoint_info(
    path: str | os.PathLike, *, shared_weights: bool = False
) -> dict[str, Any]:
    """Cheap look at a checkpoint without reading its weights (for listings): ``{"name", "path",
    "config" (validated model dict), "format_version", "training", "metrics", "card"}``. Checks the
    files and JSON as :func:`load_checkpoint` does; raises :class:`CheckpointError`."""
    root = _check_dir(Path(path))
    cfg, doc = _read_config(root)
    weights_file(root, doc, shared_weights)
    info = {"name": root.resolve().name, "path": root, "config": cfg.to_dict(), **doc}
    return info | {"metrics": _read_metrics(root), "card": _read_card(root)}


def load_checkpoint(
    path: str | os.PathLike,
    *,
    base_dir: str | os.PathLike | None = None,
    shared_weights: bool = False,
    local_base: bool = True,
    budget: Budget = DEFAULT_BUDGET,
    merge: bool = True,
) -> Checkpoint:
    """Load and verify a checkpoint directory; see the module docstring for what is checked.
    ``shared_weights``: follow a ``weights`` record to a sibling checkpoint's tensors (refused
    when False, the default). ``local_base=False`` (an upload): a base named by a local path
    must lie inside the checkpoint's directory. A config outside ``budget`` (layers, widths,
    vocabulary, memory: :mod:`uqcore.budget`) is refused before anything else is read or built.

    The tensors are compared with ``build_model(cfg).state_dict()`` (names, shapes, kinds) before
    loading; floating tensors stored in half precision become float32. On a pretrained backbone
    the base comes from its package (or ``base_dir``) after its sha256 is checked, the stored
    tensors are exactly those training made, and the adapters are merged into their weights
    (kept apart for a weight posterior, which draws them: :mod:`uqcore.nets.posterior`, or when
    ``merge`` is False: a Laplace fit reads the factors, :mod:`uqlab.laplace`).
    """
    root = _check_dir(Path(path))
    cfg, doc = _read_config(root)
    check_budget(cfg, budget, f"{root / CONFIG_FILE}")  # from the numbers: nothing built yet
    weights = weights_file(root, doc, shared_weights)
    backbone = get_backbone(cfg.backbone)
    base = folder = None
    if backbone.pretrained:
        if "base" not in doc:
            raise CheckpointError(f"{root / CONFIG_FILE} has no 'base' record; re-save it.")
        base = BaseRecord.from_dict(doc["base"])
        folder = locate(base, base_dir, root, allow_outside=local_base)
        specials = (
            decoder_specials(folder) if backbone.classifier == "decoder" else backbone.hf.specials
        )
        vocab = WordPiece.from_folder(folder, specials)
        prompt = prompt_of(doc["training"], cfg.num_classes)
        if prompt is not None:  # a label-word classifier: the prompt is its template
            if backbone.classifier != "decoder":
                raise CheckpointError(
                    f"{root / CONFIG_FILE} has a label-word prompt, which only a decoder reads."
                )
            vocab = vocab.prompted(
                prompt.before, prompt.after, read_length(cfg.max_len, doc["training"])
            )
        if len(vocab) > cfg.vocab_size:
            raise CheckpointError(
                f"The base's tokenizer has {len(vocab)} ids but the model embeds "
                f"{cfg.vocab_size}: the base in {folder} does not fit this checkpoint."
            )
    else:
        vocab_path = vocab_file(root, doc, shared_weights)
        vocab = Vocab.load(vocab_path)
        _check_vocab_fits(vocab, cfg, f"{vocab_path}")
    _check_header_size(weights)
    # on a base, every parameter is overwritten below (the base's, then the file's): none is
    # initialised, and those pointed at a base copy already held never take memory
    model = build_model(cfg) if folder is None else build_unset(cfg)
    if folder is not None:
        attach_base(model, folder)
    expected = _trained(model.state_dict(), frozen_names(cfg))
    apart = {k: v for k, v in expected.items() if _in_posterior_file(k)}  # a posterior's own file
    tensors = _read_tensors(weights, {k: v for k, v in expected.items() if k not in apart})
    if apart:
        posterior = root / POSTERIOR_FILE
        if not posterior.is_file():
            raise CheckpointError(
                f"Checkpoint {root} is missing {POSTERIOR_FILE}: a {cfg.family!r} model keeps "
                "its weight posterior there. Refit it (python -m uqlab.laplace)."
            )
        _check_header_size(posterior)
        tensors |= _read_tensors(posterior, apart)
    bad = [k for k, t in tensors.items() if t.is_floating_point() and not t.isfinite().all()]
    if bad:
        raise CheckpointError(
            f"Tensor(s) {_names(bad)} in {weights} contain NaN or infinite values; the training "
            "that wrote them probably diverged. Retrain or use an earlier checkpoint."
        )
    state = {k: t.to(expected[k].dtype) for k, t in tensors.items()}
    missing, _ = model.load_state_dict(state, strict=False)  # the rest came from the base
    assert set(missing) == set(model.state_dict()) - set(expected)  # after _check_tensors
    if folder is not None and merge and not cfg.spec.weight_posterior:  # a posterior draws them
        merge_adapters(model)
    model.float().eval()
    extra = (doc["training"], _read_metrics(root), _read_card(root))
    return Checkpoint(root, root.resolve().name, model, cfg, vocab, *extra, base=base)


def _in_posterior_file(key: str) -> bool:
    """Whether tensor ``key`` is stored in :data:`POSTERIOR_FILE` (a weight posterior's)."""
    return key.startswith(f"{POSTERIOR}.")


def _read_tensors(path: Path, expected: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every tensor of the safetensors file ``path``, after its header showed exactly the names,
    shapes and kinds of ``expected`` (no tensor is read before); CheckpointError otherwise."""
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            # names, shapes and kinds from the header first: no tensor is read unless they fit
            names = f.keys()
            if len(names) > 2 * len(expected) + 16:  # far too many: not even listed
                raise CheckpointError(
                    f"{path.name} holds {len(names):,} tensors; this architecture has "
                    f"{len(expected):,}. Use the config the weights were trained with."
                )
            _check_tensors({k: _header_tensor(f.get_slice(k)) for k in names}, expected, str(path))
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except CheckpointError:
        raise
    except Exception as exc:  # safetensors raises its own types for malformed files
        raise CheckpointError(
            f"{path} is not a readable safetensors file ({type(exc).__name__}: {exc}); "
            "re-save the checkpoint with uqcore.checkpoint.save_checkpoint."
        ) from None
    version = meta.get("format_version", str(FORMAT_VERSION))  # config.json is the authority
    if version not in map(str, SUPPORTED_VERSIONS):
        raise CheckpointError(f"{path} has format_version {version!r}; re-save the checkpoint.")
    _check_tensors(tensors, expected, str(path))
    return tensors


# ---------------------------------------------------------------------------------------- checks
MAX_PARAMETERS = DEFAULT_BUDGET.max_parameters  # the most a checkpoint may describe (800 MB)
MAX_JSON_BYTES = 16 * 2**20  # a checkpoint's config.json / metrics.json larger is refused unread
MAX_HEADER_BYTES = 16 * 2**20  # a safetensors header (the tensor index) larger than this is refused
_SAFETENSORS_DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}


def _check_header_size(weights: Path) -> None:
    """Refuse a weights file whose tensor index alone is huge (read before any tensor)."""
    try:
        with weights.open("rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise CheckpointError(f"Cannot read {weights.name}: {exc.strerror}.") from None
    if len(head) < 8 or int.from_bytes(head, "little") > MAX_HEADER_BYTES:
        raise CheckpointError(
            f"{weights.name} is not a readable safetensors file (its tensor index is missing or "
            f"over {MAX_HEADER_BYTES // 2**20} MB); re-save the checkpoint."
        )


def _header_tensor(view) -> torch.Tensor:
    """A shape-and-dtype stand-in (no data, on the meta device) for a safetensors slice."""
    dtype = _SAFETENSORS_DTYPES.get(view.get_dtype())
    if dtype is None:
        raise CheckpointError(
            f"A tensor has dtype {view.get_dtype()}, which this app does not "
            "read; save float32 or float16 weights."
        )
    return torch.empty(view.get_shape(), dtype=dtype, device="meta")


def weights_path(path: str | os.PathLike) -> Path:
    """The weights file the checkpoint directory ``path`` loads from in a folder of checkpoints:
    its own ``model.safetensors`` or the sibling's its ``weights`` record names (checked)."""
    root = _check_dir(Path(path))
    return weights_file(root, _read_config(root)[1])


def weights_file(root: Path, doc: dict[str, Any], shared: bool = True) -> Path:
    """The weights of the checkpoint in ``root`` (``doc``: its config.json as read): its own
    ``model.safetensors``, or, with a ``weights`` record and ``shared``, the sibling's it names
    (sha256 checked). :class:`CheckpointError` says what is wrong and what to do."""
    own = root / WEIGHTS_FILE
    if doc.get("weights") is None and not own.is_file():
        raise CheckpointError(
            f"Checkpoint {root} is missing {WEIGHTS_FILE}; a checkpoint needs "
            f"{', '.join(REQUIRED_FILES)}. Re-save it with uqcore.checkpoint.save_checkpoint."
        )
    return _sibling_file(root, doc, shared, "weights", WEIGHTS_FILE)


def vocab_file(root: Path, doc: dict[str, Any], shared: bool = True) -> Path:
    """A word-level checkpoint's vocabulary: its own ``vocab.json``, or, with a ``vocab`` record
    and ``shared``, the sibling's it names (sha256 checked), as :func:`weights_file`."""
    if doc.get("vocab") is None and not (root / VOCAB_FILE).is_file():
        raise CheckpointError(
            f"Checkpoint {root} is missing {VOCAB_FILE}; a word-level checkpoint needs "
            f"{', '.join((*REQUIRED_FILES, VOCAB_FILE))}. Re-save it with "
            "uqcore.checkpoint.save_checkpoint."
        )
    return _sibling_file(root, doc, shared, "vocab", VOCAB_FILE)


def _sibling_file(root: Path, doc: dict[str, Any], shared: bool, key: str, filename: str) -> Path:
    """``root / filename``, or, when ``doc`` has a ``key`` record (a sibling checkpoint's name
    and the sha256 of its ``filename``) and ``shared``, that sibling's file, checked."""
    own = root / filename
    record = doc.get(key)
    if record is None:
        return own
    if not shared:
        raise CheckpointError(
            f"{root / CONFIG_FILE} names another checkpoint's {filename} ('{key}'); a checkpoint "
            f"loaded on its own must hold its own {filename}: add it and remove '{key}'."
        )
    if own.exists():
        raise CheckpointError(
            f"{root} has both {filename} and a '{key}' record in {CONFIG_FILE}; keep one."
        )
    name, digest = record["checkpoint"], record["sha256"]
    path = root.parent / name / filename
    if not path.is_file():
        raise CheckpointError(
            f"Checkpoint {root.name!r} shares the {filename} of {name!r}, which is not in "
            f"{root.parent}; restore {name!r} beside it."
        )
    if file_sha256(path) != digest:
        raise CheckpointError(
            f"Checkpoint {root.name!r} shares the {filename} of {name!r}, but {name!r}'s "
            f"{filename} has changed (sha256 differs); rebuild both with their configs."
        )
    return path


def check_name(name: str) -> str:
    """Return ``name`` if it is a plain checkpoint name, else raise :class:`CheckpointError`.

    Names with path separators, ``..`` or a leading ``.`` are refused, so a name taken from a URL
    (or a ``weights`` record) cannot reach outside the checkpoint folder.
    """
    if not isinstance(name, str) or not name.strip():
        raise CheckpointError(f"A checkpoint name must be a non-empty str, got {name!r}.")
    seps = {"/", "\\", os.sep} | ({os.altsep} if os.altsep else set())
    if any(s in name for s in seps) or ".." in name or name.startswith(".") or "\0" in name:
        raise CheckpointError(
            f"Invalid checkpoint name {name!r}: use a folder name such as 'imdb-sto' without path "
            "separators or '..'; to load a checkpoint from elsewhere use load_checkpoint(path)."
        )
    return name


def _check_weights_record(record: Any, path: Path, key: str = "weights") -> dict[str, str]:
    """A ``weights`` (or ``vocab``) record: ``{"checkpoint": a plain name, "sha256": 64 hex
    digits}``."""
    ok = isinstance(record, dict) and set(record) == {"checkpoint", "sha256"}
    name, digest = (record["checkpoint"], record["sha256"]) if ok else (None, None)
    try:
        ok = ok and bool(check_name(name)) and isinstance(digest, str)
    except CheckpointError:
        ok = False
    if not (ok and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise CheckpointError(
            f"{path}: '{key}' must be an object with 'checkpoint' (a checkpoint's name) and "
            f"'sha256' (the hex sha256 of that checkpoint's {key} file)."
        )
    return {"checkpoint": name, "sha256": digest}


def _names_weights(root: Path) -> bool:
    """Whether ``root``'s config.json (read leniently: it is checked later) has a ``weights``
    record, so that its own ``model.safetensors`` is not required."""
    try:
        doc = read_json_file(root / CONFIG_FILE, max_bytes=MAX_JSON_BYTES, allow_nan=True)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "weights" in doc


def _check_dir(root: Path) -> Path:
    if not root.exists():
        raise CheckpointError(f"No checkpoint directory at {root}; check the path.")
    if not root.is_dir():
        raise CheckpointError(f"{root} is a file; a checkpoint is a directory ({CONFIG_FILE} ...).")
    pickles = sorted(p.name for p in root.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise CheckpointError(
            f"{root} contains {', '.join(pickles)}: pickle checkpoints are not loaded because they "
            "can execute code; convert to safetensors (uqcore.checkpoint.save_checkpoint) and "
            "remove the pickle file(s)."
        )
    needed = (CONFIG_FILE,) if _names_weights(root) else REQUIRED_FILES  # see weights_file
    missing = [n for n in needed if not (root / n).is_file()]
    if missing:
        raise CheckpointError(
            f"Checkpoint {root} is missing {', '.join(missing)}; a checkpoint needs "
            f"{', '.join(REQUIRED_FILES)}. Re-save it with uqcore.checkpoint.save_checkpoint."
        )
    return root


def _read_json(path: Path) -> Any:
    """A checkpoint's JSON file within :data:`MAX_JSON_BYTES` and the bounds of
    :mod:`uqcore.untrusted` (NaN kept: ``json.dumps`` writes it); its message names the file."""
    return read_json_file(path, max_bytes=MAX_JSON_BYTES, allow_nan=True, error=CheckpointError)


def _read_config(root: Path) -> tuple[ModelConfig, dict[str, Any]]:
    path = root / CONFIG_FILE
    doc = _read_json(path)
    supported = ", ".join(map(str, SUPPORTED_VERSIONS))
    if not isinstance(doc, dict):
        raise CheckpointError(f"{path} must hold a JSON object with format_version and model.")
    version = doc.get("format_version")
    if isinstance(version, bool) or version not in SUPPORTED_VERSIONS:
        found = "no format_version" if version is None else f"format_version {version!r}"
        raise CheckpointError(
            f"{path} has {found}; this uqcore reads format_version {supported} only. "
            "Upgrade uqcore or re-save the checkpoint with uqcore.checkpoint.save_checkpoint."
        )
    unknown = sorted(set(doc) - {"format_version", "model", "training", "base", *SHARED})
    if unknown:
        raise CheckpointError(
            f"{path} has unknown top-level key(s) {', '.join(unknown)}; allowed: format_version, "
            "model, training, base, weights, vocab."
        )
    if "model" not in doc:
        raise CheckpointError(f"{path} has no 'model' entry (the ModelConfig as a JSON object).")
    try:
        model = upgrade_v1(doc["model"]) if version == 1 else doc["model"]
        cfg = ModelConfig.from_dict(model)
    except ConfigError as exc:
        raise CheckpointError(f"{path}: invalid model config: {exc}") from None
    training = doc.get("training") or {}
    if not isinstance(training, dict):
        raise CheckpointError(f"{path}: 'training' must be a JSON object, got {training!r}.")
    out = {"format_version": version, "training": training}
    for key in SHARED:
        if key in doc:
            out[key] = _check_weights_record(doc[key], path, key)
    return cfg, out | ({"base": doc["base"]} if "base" in doc else {})


def _read_metrics(root: Path) -> dict[str, Any] | None:
    path = root / METRICS_FILE
    if not path.is_file():
        return None
    metrics = _read_json(path)
    if not isinstance(metrics, dict):
        raise CheckpointError(f"{path} must hold a JSON object, got {type(metrics).__name__}.")
    return metrics


def _read_card(root: Path) -> str | None:
    path = root / CARD_FILE  # a model card is for people: show it even if mis-encoded
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _check_vocab_fits(vocab: Vocab, cfg: ModelConfig, what: str) -> None:
    if len(vocab) > cfg.vocab_size:
        raise CheckpointError(
            f"{what} has {len(vocab)} ids (words + 3 specials) but the model embeds only "
            f"vocab_size={cfg.vocab_size}; build the model with vocab_size=len(vocab)."
        )


def _unprefixed(key: str) -> str:
    """A tensor name without an ensemble member's ``members.<i>.`` prefix."""
    parts = key.split(".", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "members" and parts[1].isdigit() else key


def _trained(state: dict[str, torch.Tensor], frozen: frozenset[str]) -> dict[str, torch.Tensor]:
    """The tensors a checkpoint stores: all but those its pretrained base provides."""
    return {k: v for k, v in state.items() if _unprefixed(k) not in frozen}


def _names(keys: list[str], limit: int = 20) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f" ... and {len(keys) - limit} more" if len(keys) > limit else "")


def _check_tensors(found: dict[str, torch.Tensor], expected: dict[str, torch.Tensor], where: str):
    """Raise CheckpointError listing missing, unexpected, mis-shaped or wrong-kind tensors."""
    problems = []
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing:
        problems.append(f"missing tensor(s): {_names(missing)}")
    if extra:
        problems.append(f"unexpected tensor(s): {_names(extra)}")
    for key in sorted(set(found) & set(expected)):
        f, e = found[key], expected[key]
        if tuple(f.shape) != tuple(e.shape):
            problems.append(f"tensor {key!r} has shape {list(f.shape)}, expected {list(e.shape)}")
        elif f.is_floating_point() != e.is_floating_point() or (
            not e.is_floating_point() and f.dtype != e.dtype
        ):
            problems.append(f"tensor {key!r} has dtype {f.dtype}, expected {e.dtype}")
    if problems:
        raise CheckpointError(
            f"{where} does not match the architecture in its config: "
            + "; ".join(problems)
            + ". Use the config the weights were trained with, or re-save the checkpoint."
        )
