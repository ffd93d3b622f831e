"""Exported files that carry their settings inside (no Streamlit here): the checkpoint, text,
settings, T and seed go into a CSV's ``# key: value`` lines before its header, an SVG's
``<title>``, ``<desc>`` and ``<metadata>``, and a PNG's text chunks (tEXt, or iTXt for text
beyond Latin-1), so a file keeps saying what it shows after it is renamed."""

from __future__ import annotations

import io
import json
import re
import struct
import zlib
from html import escape

import numpy as np
import pandas as pd

from ui.logic.keys import KNOBS
from uqcore.families import get_family
from uqlab.workbench.compute import ExploreResult
from uqlab.workbench.figures import for_export

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG_NS = "urn:stochastic-attention-explorer:settings"  # names our <metadata> element


def _value(value: object) -> str:
    """A value on one line: as it is, or JSON-quoted when it holds a line break or edge spaces
    or starts with a quote (so :func:`read_header` gives it back exactly)."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    plain = text == " ".join(text.split()) and not text.startswith('"')
    return text if plain else json.dumps(text, ensure_ascii=False)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads these as a formula


def defuse(value: object) -> object:
    """A text cell a spreadsheet would run as a formula (``=HYPERLINK(...)``), quoted with a
    leading ``'`` (OWASP's advice for CSV injection); anything else as it is."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def csv_text(frame: pd.DataFrame, record: dict[str, object]) -> str:
    """``frame`` as CSV after one ``# key: value`` line per entry of ``record``, and a last
    comment line saying how to read the table past them. Text cells that a spreadsheet would
    run as formulas are quoted (:func:`defuse`)."""
    frame = frame.copy()
    for col in frame.columns:
        if frame[col].dtype == object or pd.api.types.is_string_dtype(frame[col]):
            frame[col] = frame[col].map(defuse)
    lines = [f"# {key}: {_value(value)}" for key, value in record.items()]
    lines.append(
        f"# the table follows; read it with pandas.read_csv(file, skiprows={len(lines) + 1})"
    )  # no ": " in it, so not read as a setting
    return "\n".join(lines) + "\n" + frame.to_csv(index=False)


def read_header(text: str) -> dict[str, str]:
    """The ``# key: value`` lines of :func:`csv_text` (JSON-quoted values unquoted)."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("# "):
            break
        key, sep, value = line[2:].partition(": ")
        if sep:
            out[key] = json.loads(value) if value.startswith('"') else value
    return out


def summary_line(record: dict[str, object]) -> str:
    """``record`` as one line of ``key = value`` pairs (the text last, quoted)."""
    parts = [f"{k} = {_value(v)}" for k, v in record.items() if k != "text"]
    if "text" in record:
        parts.append(f"text = {json.dumps(str(record['text']), ensure_ascii=False)}")
    return "; ".join(parts)


def svg_with(svg: bytes, record: dict[str, object], title: str) -> bytes:
    """``svg`` with a ``<title>``, a ``<desc>`` (the settings in words) and a ``<metadata>``
    holding them as JSON, right after the opening ``<svg ...>`` tag."""
    text = svg.decode("utf-8")
    start = text.find("<svg")
    end = text.find(">", start)
    if start < 0 or end < 0:
        raise ValueError("not an SVG document: no <svg> element")
    if text[end - 1] == "/":  # <svg .../>: an empty drawing, opened so it can hold the tags
        text, end = text[: end - 1] + "></svg>", end - 1
    settings = json.dumps(record, ensure_ascii=False, default=str)
    tags = (
        f"<title>{escape(title)}</title><desc>{escape(summary_line(record))}</desc>"
        f'<metadata><settings xmlns="{SVG_NS}">{escape(settings)}</settings></metadata>'
    )
    return (text[: end + 1] + tags + text[end + 1 :]).encode("utf-8")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _text_chunk(key: str, value: str) -> bytes:
    """tEXt when ``value`` is Latin-1, else iTXt (UTF-8, uncompressed); keys are 1-79 chars."""
    key_bytes = key.encode("latin-1", "replace")[:79]
    try:
        return _chunk(b"tEXt", key_bytes + b"\0" + value.encode("latin-1"))
    except UnicodeEncodeError:
        return _chunk(b"iTXt", key_bytes + b"\0\0\0\0\0" + value.encode("utf-8"))


def png_with(png: bytes, record: dict[str, object], title: str) -> bytes:
    """``png`` with text chunks after its header chunk: ``Title``, one per entry of ``record``
    and ``settings`` (all of them as JSON)."""
    if not png.startswith(PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("not a PNG image: no signature and IHDR chunk")
    ihdr_end = 8 + 8 + struct.unpack(">I", png[8:12])[0] + 4  # length, type, data, CRC
    texts = {
        "Title": title,
        **{k: f"{v:g}" if isinstance(v, float) else str(v) for k, v in record.items()},
        "settings": json.dumps(record, ensure_ascii=False, default=str),
    }
    chunks = b"".join(_text_chunk(k, v) for k, v in texts.items())
    return png[:ihdr_end] + chunks + png[ihdr_end:]


def png_text(png: bytes) -> dict[str, str]:
    """The tEXt and iTXt chunks of ``png`` (key -> text), to read back what :func:`png_with`
    wrote."""
    out, at = {}, 8
    while at + 8 <= len(png):
        size = struct.unpack(">I", png[at : at + 4])[0]
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        if kind == b"tEXt":
            key, _, value = data.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = data.partition(b"\0")
            rest = rest[2:]  # compression flag and method (0, 0)
            _, _, rest = rest.partition(b"\0")  # language tag
            _, _, value = rest.partition(b"\0")  # translated keyword
            out[key.decode("latin-1")] = value.decode("utf-8")
        at += 12 + size
    return out


def overrides(view) -> dict[str, object]:
    """The inference settings a :class:`ui.logic.state.ViewState` sets over the checkpoint's own
    (``{"settings": "trained"}`` when it sets none), and temperature scaling when on."""
    out: dict[str, object] = {k: getattr(view, k) for k in KNOBS if getattr(view, k) is not None}
    if getattr(view, "scaled", False):
        out["temperature scaling"] = "on"
    return out or {"settings": "trained"}


def stamped(image: bytes, fmt: str, record: dict[str, object], title: str) -> bytes:
    """``image`` (``fmt`` "svg" or "png") with ``record`` written inside."""
    return svg_with(image, record, title) if fmt == "svg" else png_with(image, record, title)


def figure_file(fig, fmt: str, record: dict[str, object]) -> bytes:
    """``fig`` as a static ``fmt`` file ("svg" or "png", laid out by
    :func:`uqlab.workbench.figures.for_export`; kaleido drives Chromium) with ``record`` inside
    it."""
    image = for_export(fig).to_image(format=fmt, scale=2 if fmt == "png" else 1)
    title = (fig.layout.title.text or "figure").replace("<br>", " ")
    return stamped(image, fmt, record, title)


def download(where, label: str, data, file_name: str, mime: str, **kwargs):
    """``where.download_button`` (``where``: ``st``, a column or a container) that does not
    rerun the page when clicked (``on_click="ignore"``). A rerun would replace every other
    download button's file, so a second download clicked right after the first was cancelled
    ("Deferred file ... not found"); now every button in a row delivers its file. ``data`` may
    be a callable: the file is then made when the visitor clicks, not on every run."""
    return where.download_button(label, data, file_name, mime, on_click="ignore", **kwargs)


# ---------------------------------------------------------- the explorer's files and their names
def settings_record(res: ExploreResult, name: str, family: str) -> dict[str, object]:
    """What an export was made with: checkpoint, T, seed, and the values of the knobs the
    family reads (after the sidebar's overrides), plus the text."""
    spec = get_family(family)
    knobs = {k: getattr(res.settings, k) for k in spec.knobs if hasattr(res.settings, k)}
    if res.settings.dropout_on:
        knobs["dropout"] = res.settings.dropout
    if res.read_len > res.trained_len > 0:  # a longer reading than trained: recorded
        knobs["read_len"] = res.read_len
    return {"checkpoint": name, "T": len(res.probs), "seed": res.seed, **knobs, "text": res.text}


TEXT_KEYS = ("text", "edited_text")  # free text: inside the files, never in their names


def export_stem(record: dict[str, object]) -> str:
    """A file name stem that tells exports of other settings apart, e.g.
    ``cola-hsto-T50-seed1-tau1_1-tau2_40`` (every entry but the texts, :data:`TEXT_KEYS`)."""
    parts = [str(record["checkpoint"]), f"T{record['T']}", f"seed{record['seed']}"]
    for key, value in record.items():
        if key not in ("checkpoint", "T", "seed", *TEXT_KEYS):
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            parts.append(f"{key}_{shown}")
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", "-".join(parts))


def samples_csv(res: ExploreResult, names: tuple[str, ...], record: dict) -> str:
    """The settings as ``# key: value`` lines, then one row per sample: its class
    probabilities, then the settings again (the same on each row)."""
    frame = pd.DataFrame(res.probs, columns=[f"p_{n}" for n in names])
    frame.insert(0, "sample", np.arange(len(frame)))
    for key, value in record.items():
        frame[key] = value
    return csv_text(frame, record)


def arrays_npz(res: ExploreResult, record: dict) -> bytes:
    """Every array of the result (probabilities, tokens, each layer's maps) and the settings
    (``settings``: a JSON string), compressed."""
    arrays = {
        "probs": res.probs,
        "tokens": np.array(res.tokens),
        "settings": np.array(json.dumps(record)),
    }
    for layer, maps in res.maps.items():
        for name, value in maps.items():  # LayerMaps: the fields that are set
            arrays[f"layer{layer}_{name}"] = value
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def figure_record(record: dict[str, object], view: dict[str, object]) -> dict[str, object]:
    """The settings of one figure's file: the sidebar's ``record`` (:func:`settings_record`),
    then its ``view``'s own (:func:`chart`'s ``settings``), the texts last."""
    texts = {k: v for k, v in {**record, **view}.items() if k in TEXT_KEYS}
    rest = {k: v for k, v in {**record, **view}.items() if k not in TEXT_KEYS}
    return {**rest, **texts}
