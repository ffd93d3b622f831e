"""``python -m tools.screenshots``: the README's two screenshots, taken of a fresh server."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest

from tools.screenshots import NAMES, VIEWPORT, take

pytestmark = pytest.mark.browser
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values of the decompressed image data) of a PNG whose
    chunks and CRCs are checked; a blank picture has only a handful of distinct values, under
    any of PNG's row filters."""
    data = path.read_bytes()
    assert data[:8] == SIGNATURE, f"{path.name} is not a PNG"
    pos, chunks = 8, {}
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + size]
        (crc,) = struct.unpack(">I", data[pos + 8 + size : pos + 12 + size])
        assert zlib.crc32(kind + body) == crc, f"{path.name}: bad CRC in {kind!r}"
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + size
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {2: 3, 6: 4}[colour]  # RGB or RGBA, what Chromium writes
    pixels = zlib.decompress(chunks[b"IDAT"])
    assert depth == 8 and len(pixels) == height * (1 + width * channels), path.name
    assert b"IEND" in chunks
    return width, height, len(set(pixels))


def own_streamlit_children() -> list[int]:
    """Processes of this test whose command line runs streamlit (the tool's server)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (proc / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"streamlit" in cmd:
            out.append(int(proc.name))
    return out


def test_the_tool_saves_both_screenshots_and_stops_its_server(tmp_path, chrome):
    before = set(own_streamlit_children())  # the session's own servers, started by fixtures
    paths = take(tmp_path, browser=chrome)  # the session's Chromium: one sync Playwright a process
    assert [p.name for p in paths] == list(NAMES)
    for path in paths:
        width, height, distinct = png_facts(path)
        assert (width, height) == (VIEWPORT["width"], VIEWPORT["height"]), path.name
        assert distinct > 32, f"{path.name} looks blank ({distinct} distinct byte values)"
        assert path.stat().st_size > 40_000, f"{path.name} is suspiciously small"
    assert set(own_streamlit_children()) <= before, "the tool's server is still running"


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def test_a_blank_picture_is_caught(tmp_path):
    width, height = 40, 30
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\x00" + b"\xff" * (3 * width) for _ in range(height))  # white, no filter
    blank = tmp_path / "blank.png"
    pixels = chunk(b"IDAT", zlib.compress(rows))
    blank.write_bytes(SIGNATURE + chunk(b"IHDR", header) + pixels + chunk(b"IEND", b""))
    assert png_facts(blank) == (width, height, 2)  # under the test's threshold of 32
