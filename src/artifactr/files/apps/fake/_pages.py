"""FakeApp's pages: its layout of a document's text, and a page drawn as a PNG (RFC-0003).

Lines of :data:`CHARS_PER_LINE` characters, :data:`LINES_PER_PAGE` to an A4 page: page counts and
renders are deterministic, a dark bar for each line.
"""

import math
import struct
import zlib
from collections.abc import Sequence

CHARS_PER_LINE = 90
"""How many characters FakeApp lays out on a line."""

LINES_PER_PAGE = 45
"""How many lines it lays out on a page."""

PAGE_SIZE = (595, 842)
"""An A4 page in points: a render is this many pixels at scale 1 (72 dpi)."""

_MARGIN = 72
_PITCH = (PAGE_SIZE[1] - 2 * _MARGIN) / LINES_PER_PAGE
_BAR = _PITCH * 0.55
_INK = 0x40
_WHITE = 0xFF


def layout(texts: Sequence[str]) -> list[int]:
    """Return how many characters each laid-out line holds: a paragraph wraps at 90."""
    return [
        min(CHARS_PER_LINE, len(line) - start)
        for text in texts
        for line in text.split("\n")
        for start in range(0, max(len(line), 1), CHARS_PER_LINE)
    ]


def page_count(lines: Sequence[int]) -> int:
    return max(1, math.ceil(len(lines) / LINES_PER_PAGE))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(lines: Sequence[int], scale: float) -> bytes:
    """Return a greyscale PNG of a page: white, with a dark bar for each line of text."""
    width = max(1, round(PAGE_SIZE[0] * scale))
    height = max(1, round(PAGE_SIZE[1] * scale))
    blank = bytes([0]) + bytes([_WHITE]) * width
    rows = [blank] * height
    left = round(_MARGIN * scale)
    for number, chars in enumerate(lines):
        top = round((_MARGIN + number * _PITCH) * scale)
        bottom = max(top + 1, round((_MARGIN + number * _PITCH + _BAR) * scale))
        right = round((_MARGIN + chars * (PAGE_SIZE[0] - 2 * _MARGIN) / CHARS_PER_LINE) * scale)
        row = blank[: left + 1] + bytes([_INK]) * (right - left) + blank[right + 1 :]
        rows[top:bottom] = [row] * (bottom - top)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + _chunk(b"IEND", b"")
    )
