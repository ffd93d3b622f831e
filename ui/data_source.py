"""Where a dataset page's examples come from: the task's bundled examples, or the visitor's own
labelled file (and optionally a second file as the out-of-domain set), its columns picked and its
label values mapped to the checkpoint's labels (:mod:`ui.logic.your_data`).

The uploaded bytes stay in this session's state (never on disk), so a later error, a rerun or
another page does not lose them; a file that cannot be read says why in one line.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui.logic import keys as K
from ui.logic.format import plain
from ui.logic.inputs import upload_mb
from ui.logic.your_data import (
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
from uqcore.errors import InputError
from uqlab.tasks import DOMAINS

BUNDLED, MINE = "bundled", "mine"
LEAVE_OUT = -1


@dataclass(frozen=True)
class Source:
    """The examples a page samples: ``rows`` ``(text, gold, domain, index)`` or None for the
    bundled ones; ``key``: what a computed result depends on; ``title``: for captions."""

    rows: tuple | None
    key: tuple
    title: str


def choose(
    names: tuple[str, ...], task_title: str, where: str, bundled: bool = True
) -> Source | None:
    """Draw the source picker on a page (widgets keyed by ``where``). None: the visitor chose
    their file but it is not ready (a message says what is missing). ``bundled``: whether the
    task has bundled examples (an uploaded checkpoint's own task has none: only a file)."""
    if not bundled:
        st.caption(
            "This checkpoint's task has no bundled examples on this server: give it "
            "your own labelled file."
        )
        return your_file(names, where)
    kind = st.radio(
        "Examples",
        (BUNDLED, MINE),
        horizontal=True,
        key=f"{K.DATA_KIND}_{where}",
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
        f"{MAX_ROWS:,} rows and {upload_mb(MAX_BYTES)} MB per file. It stays in this browser "
        "session only."
    )
    c1, c2 = st.columns(2)
    main = _file(c1, "Your labelled file", f"{K.DATA_FILE}_{where}")
    ood = _file(c2, "Out-of-domain file (optional)", f"{K.DATA_OOD}_{where}")
    if main is None:
        return None
    parts, keys = [], []
    for f, domain, slot in ((main, DOMAINS["id"], "id"), (ood, DOMAINS["ood"], "ood")):
        if f is None:
            continue
        got = _mapped(f, names, f"{where}_{slot}", domain)
        if got is None:
            return None
        parts += got[0]
        keys.append(got[1])
    title = main.name + (f" and {ood.name} (out of domain)" if ood is not None else "")
    return Source(tuple(parts), (MINE, *keys), title)


def _file(where, label: str, key: str) -> DataFile | None:
    """The uploaded file of one slot, read once per upload and kept in the session."""
    up = where.file_uploader(
        label, type=list(UPLOAD_TYPES), key=key, max_upload_size=upload_mb(MAX_BYTES)
    )
    kept = st.session_state.get(f"_{key}")
    if up is not None and (kept is None or kept[0] != up.file_id):
        try:
            kept = (up.file_id, read_upload(up.name, up.getvalue()), None)
        except InputError as exc:
            kept = (up.file_id, None, str(exc))
        st.session_state[f"_{key}"] = kept
    if up is None:  # removed by the visitor: forget it
        st.session_state.pop(f"_{key}", None)
        return None
    if kept[2]:
        where.error(plain(kept[2]), icon="✋")  # it names the visitor's file: as text
        return None
    return kept[1]


def _mapped(f: DataFile, names: tuple[str, ...], key: str, domain: str):
    """The file's columns and label mapping as widgets; ``(rows, key)`` or None (a message)."""
    guess_text, guess_label = guess_columns(f)
    cols = f.columns
    with st.expander(f"{plain(f.name)}: {len(f):,} rows, columns and labels", expanded=True):
        c1, c2 = st.columns(2)
        text = c1.selectbox(
            "Text column", cols, index=cols.index(guess_text), key=f"{K.DATA_TEXT}_{key}"
        )
        label = c2.selectbox(
            "Label column", cols, index=cols.index(guess_label), key=f"{K.DATA_LABEL}_{key}"
        )
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
            default = guess[value] if guess[value] is not None else LEAVE_OUT
            pick = shown[i % len(shown)].selectbox(
                f"{plain(value[:30])} is",
                options,
                index=options.index(default),
                format_func=lambda o: "left out" if o == LEAVE_OUT else names[o],
                key=f"{K.DATA_MAP}_{key}_{i}",
            )
            mapping[value] = None if pick == LEAVE_OUT else pick
    try:
        got = rows(f, text, label, mapping, domain)
    except InputError as exc:
        st.error(plain(exc), icon="✋")
        return None
    return got, (f.digest, text, label, tuple(sorted(mapping.items(), key=str)))
