"""Where a dataset page's examples come from: the task's bundled examples, or the visitor's own
labelled file (and optionally a second file as the out-of-domain set), its columns picked and its
label values mapped to the checkpoint's labels (:mod:`uqlab.workbench.your_data`).

A file is picked once per session and kept for every dataset page (Error analysis, Results,
the sweep, Table 3): its parsed table stays in this session's state (never on disk), with the
columns and label mapping chosen for it, until the visitor changes or forgets it. The choice
between the bundled examples and the file is one setting shared by the pages. A file that
cannot be read says why in one line.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import sidebar
from ui.logic import keys as K
from ui.logic.format import plain
from ui.logic.inputs import upload_mb
from uqcore.exceptions import InputError
from uqlab.workbench.dataset import OUT, YOURS
from uqlab.workbench.your_data import (
    MAX_BYTES,
    MAX_ROWS,
    UPLOAD_TYPES,
    DataFile,
    default_mapping,
    guess_columns,
    label_values,
    read_upload,
    rows,
)

BUNDLED, MINE = "bundled", "mine"
LEAVE_OUT = -1
SLOTS = {"id": ("Your labelled file", YOURS), "ood": ("Out-of-domain file (optional)", OUT)}


@dataclass(frozen=True)
class Source:
    """The examples a page samples: ``rows`` ``(text, gold, domain, index)`` or None for the
    bundled ones; ``key``: what a computed result depends on; ``title``: for captions."""

    rows: tuple | None
    key: tuple
    title: str

    @property
    def mine(self) -> bool:
        """Whether these are the visitor's rows (not the bundled examples)."""
        return self.rows is not None


def kept() -> dict[str, DataFile]:
    """This session's files by slot ("id": the labelled file, "ood": the out-of-domain one)."""
    return st.session_state.setdefault(K.DATA_KEPT, {})


def choose(
    names: tuple[str, ...], task_title: str, where: str, bundled: bool = True
) -> Source | None:
    """Draw the source picker on a page (uploaders keyed by ``where``). None: the visitor chose
    their file but it is not ready (a message says what is missing). ``bundled``: whether the
    task has bundled examples (an uploaded checkpoint's own task has none: only a file)."""
    if not bundled:
        st.caption(
            "This checkpoint's task has no bundled examples on this server: give it "
            "your own labelled file."
        )
        return your_file(names, where)
    sidebar.keep(K.DATA_KIND)  # one choice for every dataset page of the session
    st.session_state.setdefault(K.DATA_KIND, MINE if kept().get("id") else BUNDLED)
    kind = st.radio(
        "Examples",
        (BUNDLED, MINE),
        horizontal=True,
        key=K.DATA_KIND,
        format_func={BUNDLED: f"the bundled {task_title} examples", MINE: "your labelled file"}.get,
    )
    if kind == BUNDLED:
        return Source(None, (BUNDLED,), f"the bundled {task_title} examples")
    return your_file(names, where)


def your_file(names: tuple[str, ...], where: str) -> Source | None:
    """The visitor's labelled file (and optional out-of-domain file), its columns and labels
    mapped; None while it is not ready (a message says what is missing)."""
    st.caption(
        f"CSV, TSV, JSON lines or Parquet with a text and a label column; at most "
        f"{MAX_ROWS:,} rows and {upload_mb(MAX_BYTES)} MB per file. Picked once, it is kept "
        "for every dataset page of this browser session, and nowhere else."
    )
    cols = st.columns(2)
    files = {slot: _slot(col, slot, where) for col, slot in zip(cols, SLOTS, strict=True)}
    if files["id"] is None:
        if files["ood"] is not None:
            st.info("Add your labelled file too: the out-of-domain file is compared with it.")
        return None
    parts, keys = [], []
    for slot, f in files.items():
        if f is None:
            continue
        got = _mapped(f, names, slot, SLOTS[slot][1])
        if got is None:
            return None
        parts += got[0]
        keys.append(got[1])
    title = files["id"].name
    if files["ood"] is not None:
        title += f" and {files['ood'].name} (out of domain)"
    return Source(tuple(parts), (MINE, *keys), title)


def _forget(slot: str) -> None:
    kept().pop(slot, None)
    st.session_state.setdefault(K.DATA_CHANGING, set()).discard(slot)


def _change(slot: str, on: bool) -> None:
    changing = st.session_state.setdefault(K.DATA_CHANGING, set())
    changing.add(slot) if on else changing.discard(slot)


def _slot(where, slot: str, page: str) -> DataFile | None:
    """One file slot: the kept file with Change / Forget buttons, or an uploader (read once per
    upload; a file read without error is kept and replaces the uploader at once)."""
    label = SLOTS[slot][0]
    have = kept().get(slot)
    box = where.container()
    if have is not None and slot not in st.session_state.get(K.DATA_CHANGING, set()):
        _kept_line(box, have, slot, label)
        return have
    spot = box.empty()
    key = f"{K.DATA_FILE if slot == 'id' else K.DATA_OOD}_{page}"
    up = spot.file_uploader(
        label, type=list(UPLOAD_TYPES), key=key, max_upload_size=upload_mb(MAX_BYTES)
    )
    if have is not None:
        box.button(
            f"Keep {plain(have.name)}",
            key=f"{K.DATA_CHANGE}_keep_{slot}_{page}",
            on_click=_change,
            args=(slot, False),
        )
    if up is None:
        return None
    read = st.session_state.get(f"_{key}")
    if read is None or read[0] != up.file_id:
        try:
            read = (up.file_id, read_upload(up.name, up.getvalue()), None)
        except InputError as exc:
            read = (up.file_id, None, str(exc))
        st.session_state[f"_{key}"] = read
    if read[2]:
        box.error(plain(read[2]), icon="✋")  # it names the visitor's file: as text
        return None
    kept()[slot] = read[1]
    st.session_state.pop(f"_{key}", None)
    _change(slot, False)
    spot.empty()  # the uploader gives way to the kept file's line
    _kept_line(box, read[1], slot, label)
    return read[1]


def _kept_line(box, f: DataFile, slot: str, label: str) -> None:
    """A kept file's name, size and its Change / Forget buttons."""
    box.markdown(f"**{label}:** {plain(f.name)} · {len(f):,} rows · kept for this session")
    c1, c2 = box.columns(2)
    c1.button(
        "Change file",
        key=f"{K.DATA_CHANGE}_{slot}",
        on_click=_change,
        args=(slot, True),
        width="stretch",
    )
    c2.button(
        "Forget it",
        key=f"{K.DATA_FORGET}_{slot}",
        on_click=_forget,
        args=(slot,),
        width="stretch",
        help="Removes the file from this session.",
    )


def _kept_choice(key: str, options: list, default) -> None:
    """Seed ``key`` (a widget shared by the dataset pages) with its last value on any page, or
    ``default`` when it has none or the last one is no longer an option."""
    sidebar.keep(key)
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


def _mapped(f: DataFile, names: tuple[str, ...], slot: str, domain: str):
    """The file's columns and label mapping as widgets (the same on every page: a choice made on
    one page holds on the next); ``(rows, key)`` or None (a message says what is missing)."""
    guess_text, guess_label = guess_columns(f)
    cols = f.columns
    owner = f"_{K.DATA_KEPT}_{slot}_choices_of"
    if st.session_state.get(owner) != f.digest:  # another file: its own guesses, not the last
        for k in [
            k
            for k in st.session_state
            if str(k)
            .lstrip("_")
            .startswith(
                (f"{K.DATA_TEXT}_{slot}", f"{K.DATA_LABEL}_{slot}", f"{K.DATA_MAP}_{slot}_")
            )
        ]:
            del st.session_state[k]
        st.session_state[owner] = f.digest
    text_key, label_key = f"{K.DATA_TEXT}_{slot}", f"{K.DATA_LABEL}_{slot}"
    _kept_choice(text_key, cols, guess_text)
    _kept_choice(label_key, cols, guess_label)
    with st.expander(f"{plain(f.name)}: {len(f):,} rows, columns and labels", expanded=True):
        c1, c2 = st.columns(2)
        text = c1.selectbox("Text column", cols, key=text_key)
        label = c2.selectbox("Label column", cols, key=label_key)
        try:
            values = label_values(f, label)
        except InputError as exc:
            st.error(plain(exc), icon="✋")
            return None
        guess = default_mapping(values, names)
        options = [LEAVE_OUT, *range(len(names))]
        mapping = {}
        shown = st.columns(min(4, max(1, len(values))))
        for i, value in enumerate(values):
            key = f"{K.DATA_MAP}_{slot}_{cols.index(label)}_{i}"  # no visitor text in keys
            _kept_choice(key, options, guess[value] if guess[value] is not None else LEAVE_OUT)
            pick = shown[i % len(shown)].selectbox(
                f"{plain(value[:30])} is",
                options,
                format_func=lambda o: "left out" if o == LEAVE_OUT else names[o],
                key=key,
            )
            mapping[value] = None if pick == LEAVE_OUT else pick
    try:
        got = rows(f, text, label, mapping, domain)
    except InputError as exc:
        st.error(plain(exc), icon="✋")
        return None
    return got, (f.digest, text, label, tuple(sorted(mapping.items(), key=str)))
