"""Streamlit caches around the library: checkpoints are loaded once per server process and
shared read-only by every session (sampling never mutates a model); results are cached by the
plain values that determine them, so a reload or a shared link is served from the cache with
the same numbers."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import streamlit as st
import torch

from ui.logic import keys as K
from ui.logic import landing, why
from ui.logic.fair import Gate, heavy
from uqcore.checkpoint import Checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import UQError
from uqcore.inference.prefix import PrefixCache
from uqcore.lru import ByteLRU
from uqcore.readers.base_model import shared_bytes, shared_parts
from uqcore.registry import CheckpointInfo
from uqcore.registry import list_checkpoints as _list
from uqcore.registry import load as _load
from uqcore.runtime import pick_device, release_memory, tune_cpu
from uqcore.settings import SamplingSettings, resolve
from uqlab import feature_map
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import register_from_training
from uqlab.catalog.tasks import TASKS
from uqlab.evaluation.stored import TOLERANCE as STORED_TOLERANCE
from uqlab.evaluation.stored import StoredSamples
from uqlab.evaluation.stored import read as read_stored
from uqlab.models.stale import owner_tag, remove_stale, tag_pattern
from uqlab.workbench import compute, dataset, worth

DEVICE_ENV = "UQ_DEVICE"


@st.cache_resource
def tune_once() -> dict:
    """Threads and allocator, once per server process (the script reruns on every click)."""
    return tune_cpu(2)


PAGE_SLOTS = 2  # page scripts running at once on this server (one per core)
# long computations at once, at most one per session: never fewer than two, so one visitor's
# computation never holds them all
WORK_SLOTS = max(2, (os.cpu_count() or 2) // 2)


@st.cache_resource
def gate() -> Gate:
    """The server's page and work slots (:class:`ui.logic.fair.Gate`): at most :data:`PAGE_SLOTS`
    page scripts at once, and at most :data:`WORK_SLOTS` long computations, one per session, in
    slots of their own, so a render never waits behind a computation."""
    return Gate(page_slots=PAGE_SLOTS, work_slots=WORK_SLOTS)


def root() -> str:
    return str(checkpoint_dir())


@st.cache_resource(ttl=60, show_spinner=False)  # shared, not copied: read twice every run
def _scan(folder: str) -> list[CheckpointInfo]:
    """Every checkpoint folder of ``folder``, read once per minute (readable or not). A
    checkpoint of the server's folder (:func:`root`: the operator's) whose task is described by
    a file registers that task (its ``task_spec``), so every page reads it from the task table;
    a description that does not hold is the checkpoint's error. A session's uploads register
    nothing (:func:`uqlab.models.intake._upload_task`)."""
    out = []
    operator = folder == root()
    for info in _list(folder):
        if operator and not info.error:
            try:
                register_from_training(info.training)
            except UQError as exc:
                info = dataclasses.replace(info, error=f"its task description: {exc}")
        out.append(info)
    return out


def rescan() -> None:
    """Forget the folder listings (a checkpoint was just added)."""
    _scan.clear()


def catalog(folder: str) -> list[CheckpointInfo]:
    """Readable checkpoints of ``folder`` (unreadable ones are left out)."""
    return [i for i in _scan(folder) if not i.error]


def unreadable(folder: str) -> list[tuple[str, str]]:
    """``(name, why)`` of the checkpoints of ``folder`` that could not be read."""
    return [(i.name, i.error) for i in _scan(folder) if i.error]


UPLOAD_KEY = K.UPLOAD_DIR  # this session's uploaded-checkpoint folder
UPLOAD_TMP_PREFIX = "uq-upload-"  # + this server's pid@host + "-" + tempfile's random part


@st.cache_resource
def _sweep_stale_uploads() -> int:
    """Once per server process: remove the upload folders of killed servers on this host (their
    pid gone); a live server's, this one's included, are kept. Returns how many went."""
    pattern = rf"{UPLOAD_TMP_PREFIX}{tag_pattern()}-[^/]+"
    return len(remove_stale(tempfile.gettempdir(), pattern))


def upload_folder() -> str:
    """This session's folder for uploaded checkpoints, made on first use. It lives as long as the
    session: a ``TemporaryDirectory`` kept in the session state, whose finalizer deletes the
    folder once Streamlit drops the session (or the server exits), so uploads never pile up. A
    killed server cannot run that finalizer: its folders carry its pid (:mod:`uqlab.models.stale`)
    and the next server removes them."""
    tmp = st.session_state.get(K.UPLOAD_TMP)
    if tmp is None:
        _sweep_stale_uploads()
        tmp = tempfile.TemporaryDirectory(prefix=f"{UPLOAD_TMP_PREFIX}{owner_tag()}-")
        st.session_state[K.UPLOAD_TMP] = tmp
        st.session_state[UPLOAD_KEY] = tmp.name
    return tmp.name


def infos() -> list[CheckpointInfo]:
    """The shipped checkpoints plus those uploaded in this browser session."""
    out = catalog(root())
    folder = st.session_state.get(UPLOAD_KEY)
    if folder:
        shipped = {i.name for i in out}
        out = out + [i for i in catalog(folder) if i.name not in shipped]
    return out


def where(name: str) -> str:
    """The folder holding checkpoint ``name`` (this session's uploads, else the shipped one)."""
    folder = st.session_state.get(UPLOAD_KEY)
    if folder and (Path(folder) / name / "config.json").is_file():
        return folder
    return root()


@st.cache_resource
def device():
    """The device the app samples on: ``$UQ_DEVICE`` (cpu, cuda, auto; default auto: the GPU
    where PyTorch sees one, else the CPU)."""
    return pick_device(os.environ.get(DEVICE_ENV, "auto"))


def on_gpu() -> bool:
    """Whether the app samples on a GPU (then the costly views are on by default)."""
    return device().type == "cuda"


def stamp(name: str, folder: str) -> str:
    """What identifies the files of checkpoint ``name`` in ``folder`` now (size, time and inode
    of its config, weights and weight posterior): part of every cache key below, so a
    checkpoint uploaded again under the same name is loaded again instead of served from the
    cache of the old one."""
    parts = []
    for fname in ("config.json", "model.safetensors", "posterior.safetensors"):
        try:
            st_ = (Path(folder) / name / fname).stat()
            parts.append(f"{st_.st_size}-{st_.st_mtime_ns}-{st_.st_ino}")
        except OSError:
            parts.append("-")
    return "/".join(parts)


def checkpoint(name: str, folder: str) -> Checkpoint:
    """Checkpoint ``name`` of ``folder``, loaded once per version of its files."""
    return _checkpoint(name, folder, stamp(name, folder))


# tensors of the loaded checkpoints kept, a shared base once: SmolLM2's 513 MB and a few MiniLM
# checkpoints (~90 MB each, their 47 MB word table once)
MODEL_BYTES = 1024 * 2**20


def _tensor_bytes(ck: Checkpoint) -> int:
    """Bytes of a loaded checkpoint's own parameters and buffers: less the base tensors it
    shares with the other models on that base (:func:`_base_parts`, counted once)."""
    tensors = [*ck.model.parameters(), *ck.model.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors) - shared_bytes(ck.model)


def _base_parts(ck: Checkpoint) -> dict:
    """The base tensors a loaded checkpoint points at, held once for every model on that base
    (:func:`uqcore.readers.base_model.share_base`): the cache counts each once while any checkpoint
    it keeps uses it (SmolLM2's 513 MB once, not once per label-word upload, and not zero)."""
    return shared_parts(ck.model)


@st.cache_resource
def models() -> ByteLRU[Checkpoint]:
    """The server's loaded checkpoints, shared read-only by every session, bounded by
    :data:`MODEL_BYTES` counting what is really held (by entries alone, eight MiniLM
    checkpoints would hold 0.7 GB)."""
    return ByteLRU(MODEL_BYTES, _tensor_bytes, on_evict=release_memory, shared=_base_parts)


def _checkpoint(name: str, folder: str, version: str) -> Checkpoint:
    def load() -> Checkpoint:  # no spinner: this runs inside the cached result functions
        heavy()  # loading a model is work: a work slot inside ui.work.run
        ck = _load(name, folder)
        ck.model.to(device())
        release_memory()  # the loader's temporaries (a MiniLM base file is 90 MB)
        return ck

    return models().get((name, folder, version), load, heavy)


EXPLORE_BYTES = 256 * 2**20  # explored sentences kept: their arrays, maps above all


@st.cache_resource
def explored() -> ByteLRU[compute.ExploreResult]:
    """The server's explored sentences, shared read-only by every session (a result is never
    mutated: views derive new ones), bounded by :data:`EXPLORE_BYTES`; an entry holds at most
    ``compute.MAP_BUDGET`` of maps, and a short sentence a few kB, so Compare's dozen
    checkpoints stay cached while a slider moves."""
    return ByteLRU(EXPLORE_BYTES, compute.result_bytes)


def _explore(
    name: str,
    folder: str,
    version: str,
    text: str,
    T: int,
    seed: int,
    settings: SamplingSettings,
    whole: bool = False,
):
    key = (name, folder, version, text, T, seed, settings, whole)

    def load():
        heavy()
        ck = _checkpoint(name, folder, version)
        return compute.explore(ck, text, T, seed, settings, whole)

    return explored().get(key, load, heavy)


def explore(
    name: str,
    folder: str,
    text: str,
    T: int,
    seed: int,
    settings: SamplingSettings,
    label: int | None,
    temperature: float | None = None,
    whole: bool = False,
) -> compute.ExploreResult:
    """:func:`uqlab.workbench.compute.explore` cached by value (``settings``: the sidebar's
    overrides, a frozen :class:`SamplingSettings`: hashable, so it is part of the key as it is),
    temperature-scaled when a ``temperature`` is given, with its Table 3 summary for the gold
    ``label`` and its ``key`` (the values that determine it), so the explorer's figures of it
    are cached across sessions (:func:`figure`). ``whole``: read past the training length
    (:func:`uqlab.workbench.compute.reading`)."""
    version = stamp(name, folder)
    res = _explore(name, folder, version, text, T, seed, settings, whole)
    if temperature is not None:
        res = res.with_temperature(temperature)
    key = (name, folder, version, text, T, seed, settings, temperature, whole)
    return dataclasses.replace(res, key=key).for_label(label)


FIGURE_BYTES = 32 * 2**20  # the explorer's finished figures kept (a 9-token view: 3 to 12 kB)


@st.cache_resource
def figures() -> ByteLRU:
    """The explorer's finished figures (their plotly JSON, :mod:`uqlab.workbench.figures`'
    ``.spec``), shared read-only by every session, bounded by :data:`FIGURE_BYTES`
    (:func:`uqlab.workbench.compute.spec_bytes`): thirty visitors of one link build each figure
    once."""
    return ByteLRU(FIGURE_BYTES, compute.spec_bytes)


def figure(key: tuple, build):
    """The value of ``build()`` (a figure's plotly JSON, or a tuple holding it and what the view
    says about it) cached under ``key``: an :class:`uqlab.workbench.compute.ExploreResult`'s
    ``key``, the figure's name and every choice it depends on (layer, head, sample, window, ...)."""
    return figures().get(key, build)


ATTRIBUTION_BYTES = 64 * 2**20  # explained sentences kept (a review at T = 20: ~70 kB)


@st.cache_resource
def attributions() -> ByteLRU:
    """The server's salience results (:func:`ui.logic.why.salience`), shared read-only by every
    session, bounded by :data:`ATTRIBUTION_BYTES`."""
    return ByteLRU(ATTRIBUTION_BYTES, why.attribution_bytes)


def salience_key(
    name: str,
    text: str,
    T: int,
    seed: int,
    settings: SamplingSettings,
    target: int,
    method: str,
    steps: int,
    temperature: float | None,
) -> tuple:
    folder = where(name)
    return (
        name,
        folder,
        stamp(name, folder),
        text,
        T,
        seed,
        settings,
        target,
        method,
        steps,
        temperature,
    )


def salience_cached(key: tuple):
    """The cached attributions of ``key`` (:func:`salience_key`), or None if not computed."""
    return attributions().peek(key)


def salience(key: tuple, progress=None):
    """:func:`ui.logic.why.salience` cached by value (``key``: :func:`salience_key`)."""
    name, folder, version, text, T, seed, settings, target, method, steps, temp = key

    def load():
        heavy()
        return why.salience(
            _checkpoint(name, folder, version),
            text,
            T,
            seed,
            settings,
            target,
            method,
            steps,
            temp,
            progress,
        )

    return attributions().get(key, load, heavy)


@st.cache_resource(max_entries=32)  # a CoLA map: 19 kB
def _stored_map(name: str, folder: str, version: str):
    """The stored map of a checkpoint's bundled examples (:mod:`uqlab.feature_map`):
    ``((xy [N, 2], explained), "")`` or ``(None, why not)``."""
    info = info_of(name, folder)
    if info is None or info.error or info.task not in TASKS:
        return None, "the checkpoint has no task with bundled examples"
    return feature_map.read(Path(folder) / name, info.task)


@st.cache_resource
def live_maps() -> ByteLRU:
    """Maps computed here (a visitor's rows, or a checkpoint without a trusted stored map),
    shared by every session, bounded by bytes (5,000 rows: 40 kB)."""
    return ByteLRU(16 * 2**20, lambda got: got[0].nbytes + 64)


def _live_map(name: str, folder: str, version: str, texts: tuple[str, ...], progress=None):
    def load():
        heavy()
        ck = _checkpoint(name, folder, version)
        with torch.inference_mode():
            return feature_map.project(feature_map.features(ck, list(texts), progress))

    return live_maps().get((name, folder, version, texts), load, heavy)


def map_ready(name: str, texts: tuple[str, ...], bundled: bool) -> bool:
    """Whether :func:`dataset_map` answers without computing (a stored map, or one kept)."""
    folder = where(name)
    version = stamp(name, folder)
    if bundled and _stored_map(name, folder, version)[0] is not None:
        return True
    return live_maps().peek((name, folder, version, texts)) is not None


def dataset_map(name: str, texts: tuple[str, ...], bundled: bool, progress=None):
    """``(xy [N, 2], explained variance ratios, note)`` of ``texts`` (the bundled examples
    in their order when ``bundled``, else a visitor's rows): read from the checkpoint's stored
    map when it is trusted, else computed here (features, then PCA) and cached."""
    folder = where(name)
    version = stamp(name, folder)
    if bundled:
        got, why_not = _stored_map(name, folder, version)
        if got is not None:
            return (*got, "Read from the map stored with the checkpoint.")
        xy, explained = _live_map(name, folder, version, texts, progress)
        return xy, explained, f"Computed here: {why_not}."
    xy, explained = _live_map(name, folder, version, texts, progress)
    return xy, explained, "Computed here: your file has no stored map."


PREFIX_BYTES = 256 * 2**20  # what the noisy layer reads of each example (a review: ~0.25 MB)
SCORES_BYTES = 128 * 2**20  # the noisy scores of its samples (a review at T = 10: ~0.07 MB)


@st.cache_resource
def prefix_cache() -> PrefixCache:
    """The server's deterministic prefixes (:mod:`uqcore.inference.prefix`), shared by every page
    and session, bounded by :data:`PREFIX_BYTES`: the 1,000 bundled IMDB examples of a MiniLM
    H-STO / BAM checkpoint hold 243 MB; and their samples' noisy scores without tau2, bounded
    by :data:`SCORES_BYTES` (70 MB for those examples at T = 10), so a tau2 change reruns
    only the attention's softmax and what follows it."""
    return PrefixCache(PREFIX_BYTES, SCORES_BYTES)


def info_of(name: str, folder: str) -> CheckpointInfo | None:
    """The listing of checkpoint ``name`` in ``folder`` (None if it is not listed there)."""
    return next((i for i in _scan(folder) if i.name == name), None)


@st.cache_resource(max_entries=64)  # a CoLA file: 93 kB
def _stored(name: str, folder: str, version: str) -> tuple[StoredSamples | None, str]:
    """The stored samples of a checkpoint (:mod:`uqlab.evaluation.stored`), read once per version of
    its files, or None and why they are not used."""
    info = info_of(name, folder)
    if info is None or info.error or info.task not in TASKS:
        return None, "the checkpoint has no task with bundled examples"
    try:
        own = resolve(ModelConfig.from_dict(info.config))
    except UQError as exc:
        return None, str(exc)
    return read_stored(Path(folder) / name, info.task, own)


def stored_cache_clear() -> None:
    """Forget the stored samples read (they are read again on the next request)."""
    _stored.clear()


def stored_note(name: str, T: int, seed: int, settings: SamplingSettings) -> str:
    """One line for a dataset page: whether its numbers are read from the checkpoint's stored
    samples or recomputed, and why."""
    folder = where(name)
    stored, why = _stored(name, folder, stamp(name, folder))
    if stored is None:
        return f"Recomputed: {why}."
    info = info_of(name, folder)
    try:
        fs = resolve(ModelConfig.from_dict(info.config), settings)
    except UQError:
        return "Recomputed: the settings are out of range."
    reason = stored.serves(int(T), int(seed), fs)
    if reason:
        return f"Recomputed ({reason}; stored samples: T ≤ {stored.T}, seed {stored.seed})."
    return (
        f"Read from the stored samples of the checkpoint's evaluation (T ≤ {stored.T}, "
        f"seed {stored.seed}, the checkpoint's own settings): the same numbers as a live "
        f"run within {STORED_TOLERANCE:g}."
    )


SAMPLES_BYTES = 128 * 2**20  # dataset pages' samples kept (a CoLA chunk at T = 10: ~50 kB)


def _sampled_bytes(got: list) -> int:
    return (
        sum(
            g.probs.nbytes + g.logits.nbytes if not isinstance(g, str) else len(g) + 64 for g in got
        )
        + 64
    )


@st.cache_resource
def samples() -> ByteLRU[list]:
    """The dataset pages' samples (:func:`many`), shared read-only by every session and
    bounded by :data:`SAMPLES_BYTES`; a chunk being computed is computed once, however many
    sessions ask for it at the same time."""
    return ByteLRU(SAMPLES_BYTES, _sampled_bytes)


class _Rows:
    """What :func:`uqcore.inference.batch_predict.predict_ids` reports to (``update(n)`` after each
    batch)."""

    def __init__(self, on_rows: Callable[[int], None]):
        self.update = on_rows


def _from_stored(
    name: str,
    folder: str,
    version: str,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    settings: SamplingSettings,
) -> list:
    """Per text its samples read from the checkpoint's stored samples, or None where the file
    does not hold it (all None when there is no file or it was drawn with other settings)."""
    stored, _ = _stored(name, folder, version)
    info = info_of(name, folder)
    if stored is None or info is None:
        return [None] * len(texts)
    try:
        fs = resolve(ModelConfig.from_dict(info.config), settings)
    except UQError:
        return [None] * len(texts)  # the live path says what is wrong with the settings
    if stored.matches(int(seed), fs) is not None:  # rows held at T
        return [None] * len(texts)
    return compute.stored_probs(stored, texts, int(T))


def _many(
    name: str,
    folder: str,
    version: str,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    settings: SamplingSettings,
    on_rows: Callable[[int], None] | None = None,
):
    def load():
        got = _from_stored(name, folder, version, texts, T, seed, settings)
        missing = [i for i, g in enumerate(got) if g is None]
        if missing:  # the model is loaded only for texts the file does not hold
            heavy()
            live = compute.many_probs(
                _checkpoint(name, folder, version),
                tuple(texts[i] for i in missing),
                T,
                seed,
                settings,
                prefix_cache(),
                (name, folder, version),
                bar=None if on_rows is None else _Rows(on_rows),
            )
            for i, value in zip(missing, live, strict=True):
                got[i] = value
        return got

    return samples().get((name, folder, version, texts, int(T), int(seed), settings), load, heavy)


def many(
    name: str,
    folder: str,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    settings: SamplingSettings,
    on_rows: Callable[[int], None] | None = None,
):
    """:func:`uqlab.workbench.compute.many_probs` cached by value: per text ``probs [T, C]`` or a
    message. ``on_rows(n)`` is told after each batch of ``n`` texts sampled here (a progress bar's
    step, and the point where a closed tab or a Cancel stops the work)."""
    return _many(name, folder, stamp(name, folder), texts, T, seed, settings, on_rows)


def many_grid(
    name: str,
    folder: str,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    grid: tuple[SamplingSettings, ...],
    on_rows: Callable[[int], None] | None = None,
) -> list[list]:
    """:func:`many` for every setting of ``grid`` (one list each, in its order): the settings
    not kept are sampled together (:func:`uqlab.workbench.compute.many_probs_grid`: a
    temperature sweep draws its noise once and runs its values in one pass) and each is kept
    under the key :func:`many` reads, so a page asking for one of them later finds it.
    ``on_rows(n)``: told the texts times the settings of each batch sampled here."""
    version = stamp(name, folder)
    keys = [(name, folder, version, texts, int(T), int(seed), s) for s in grid]
    done: dict[int, list] = {}

    def load_from(g: int):
        def load() -> list:
            if g not in done:  # the first value not kept: it and every other one missing
                todo = [h for h, k in enumerate(keys) if h == g or samples().peek(k) is None]
                done.update(
                    _grid_samples(name, folder, version, texts, T, seed, grid, todo, on_rows)
                )
            return done.pop(g)

        return load

    return [samples().get(k, load_from(g), heavy) for g, k in enumerate(keys)]


def _grid_samples(name, folder, version, texts, T, seed, grid, todo, on_rows) -> dict[int, list]:
    """Settings ``todo`` of ``grid``: per text its stored samples where the file holds them,
    the others sampled together here."""
    got = {g: _from_stored(name, folder, version, texts, T, seed, grid[g]) for g in todo}
    missing = sorted({i for part in got.values() for i, v in enumerate(part) if v is None})
    if missing:
        heavy()
        live = compute.many_probs_grid(
            _checkpoint(name, folder, version),
            tuple(texts[i] for i in missing),
            T,
            seed,
            tuple(grid[g] for g in todo),
            prefix_cache(),
            (name, folder, version),
            bar=None if on_rows is None else _Rows(lambda n: on_rows(n * len(todo))),
        )
        for g, part in zip(todo, live, strict=True):
            for i, value in zip(missing, part, strict=True):
                if got[g][i] is None:
                    got[g][i] = value
    return got


def grid_sampler(
    name: str, T: int, seed: int, on_rows: Callable[[int], None] | None = None
) -> Callable[[tuple[str, ...], tuple[SamplingSettings, ...]], list[list]]:
    """``(texts, grid) -> one list of samples per setting`` for checkpoint ``name`` through
    :func:`many_grid` (its folder looked up once)."""
    folder = where(name)
    return lambda texts, grid: many_grid(
        name, folder, tuple(texts), int(T), int(seed), tuple(grid), on_rows
    )


def sampler(
    name: str, T: int, seed: int, ov: SamplingSettings, on_rows: Callable[[int], None] | None = None
):
    """``texts -> [probs [T, C] or message]`` for checkpoint ``name`` through the :func:`many`
    cache (its folder looked up once); ``on_rows`` as :func:`many` takes it."""
    folder = where(name)
    return lambda texts: many(name, folder, tuple(texts), int(T), int(seed), ov, on_rows)


@st.cache_resource
def _stories() -> ByteLRU[list]:
    """The landing's stories per version of a checkpoint's files (a few hundred bytes each)."""
    return ByteLRU(2**20, lambda tales: 512 * (1 + len(tales)))


def stories(
    name: str,
    folder: str,
    task: str,
    live: bool = False,
    on_rows: Callable[[int], None] | None = None,
) -> list | None:
    """:func:`ui.logic.landing.stories` of checkpoint ``name`` (kept per version of its files):
    picked from :data:`ui.logic.landing.STORY_PER_DOMAIN` examples per domain when its stored
    samples hold them (a file read, no model); else None, or with ``live`` from
    :data:`ui.logic.landing.STORY_LIVE_PER_DOMAIN` examples per domain sampled here (``on_rows``
    told each batch), never a full pass over the bundled examples on a first view."""
    version = stamp(name, folder)
    key = (name, folder, version, task)
    kept = _stories().peek(key)
    if kept is not None:
        return kept
    none = SamplingSettings()  # the checkpoint's own settings
    rows = dataset.pick(task, landing.STORY_PER_DOMAIN, seed=0)
    held = _from_stored(
        name, folder, version, tuple(r[0] for r in rows), landing.STORY_T, landing.STORY_SEED, none
    )
    # served by the file when what it lacks (texts without a known word) is less than a small
    # sample to compute here
    if sum(g is None for g in held) > landing.STORY_LIVE_PER_DOMAIN:
        if not live:
            return None
        rows = dataset.pick(task, landing.STORY_LIVE_PER_DOMAIN, seed=0)
    frame, _ = dataset.frame(
        rows,
        lambda texts: _many(
            name, folder, version, texts, landing.STORY_T, landing.STORY_SEED, none, on_rows
        ),
    )
    tales = landing.stories(frame)
    _stories().put(key, tales)
    return tales


@st.cache_data(max_entries=64, show_spinner=False)
def headlines(frame, seed: int) -> list:
    """:func:`uqlab.workbench.dataset.headlines` of a frame, kept across reruns: its bootstrap costs
    about 1.6 s on a 5,000-row file, too much for every click on a filter or a score."""
    return dataset.headlines(frame, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def file_comparison(frames: dict, chosen: dict, baselines: dict, seed: int) -> tuple[dict, int]:
    """:func:`uqlab.workbench.worth.blocks`, kept across reruns: its bootstraps cost seconds on a
    5,000-row file (about 8 s for three checkpoints with an out-of-domain file here)."""
    return worth.blocks(frames, chosen, baselines, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def pair(frame_a, frame_b, a: str, b: str, score: str, seed: int) -> tuple[dict | None, int]:
    """:func:`uqlab.workbench.worth.pair` of two checkpoints' frames, kept across reruns: its paired
    bootstraps cost a few seconds on a 5,000-row file."""
    return worth.pair({a: frame_a, b: frame_b}, a, b, score, seed)
