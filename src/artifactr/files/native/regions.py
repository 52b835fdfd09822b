"""Regions: where two renders of a page differ, as the box around every differing pixel.

:func:`changed_region` decodes two PNGs (8 bits a sample, not interlaced: what the apps'
renders are) and returns the smallest box holding every pixel that differs, in the first
image's pixels, or None if they hold the same pixels. It refuses nothing: two images it can't
compare pixel by pixel (another size, depth or layout, or not a PNG it reads) differ
everywhere, so the box is the whole of the second image, or None if neither is read.
"""

import struct
import zlib
from typing import Final

from pydantic import BaseModel, ConfigDict

SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
_CHANNELS: Final = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples a pixel, by PNG colour type."""

MAX_PIXELS: Final = 16_000_000
"""The largest image it decodes; a larger one differs everywhere."""


class Region(BaseModel):
    """A box in a page's render, in its pixels, with the render's size to scale it by."""

    model_config = ConfigDict(frozen=True)

    x: int
    y: int
    width: int
    height: int
    page_width: int
    """The render's width, in pixels."""
    page_height: int
    """The render's height."""


class _Image:
    def __init__(self, width: int, height: int, kind: tuple[int, int], rows: list[bytes]) -> None:
        self.width, self.height, self.kind, self.rows = width, height, kind, rows


def changed_region(before: bytes, after: bytes) -> Region | None:
    """Return the box around the pixels that differ between two PNGs, or None if none do."""
    old, new = _decode(before), _decode(after)
    if old is None or new is None:
        known = new or old
        return None if known is None else _whole(known)
    if (old.width, old.height, old.kind) != (new.width, new.height, new.kind):
        return _whole(new)
    step = _CHANNELS[old.kind[1]]
    top = bottom = left = right = -1
    for y, (a, b) in enumerate(zip(old.rows, new.rows, strict=True)):
        if a == b:
            continue
        first = next(i for i in range(len(a)) if a[i] != b[i])
        last = next(i for i in range(len(a) - 1, -1, -1) if a[i] != b[i])
        top = y if top < 0 else top
        bottom = y
        left = first // step if left < 0 else min(left, first // step)
        right = max(right, last // step)
    if top < 0:
        return None
    return Region(
        x=left,
        y=top,
        width=right - left + 1,
        height=bottom - top + 1,
        page_width=old.width,
        page_height=old.height,
    )


def _whole(image: _Image) -> Region:
    size = {"page_width": image.width, "page_height": image.height}
    return Region(x=0, y=0, width=image.width, height=image.height, **size)


def _decode(png: bytes) -> _Image | None:
    """Return a PNG's rows, unfiltered, or None if it is not one it reads."""
    if not png.startswith(SIGNATURE):
        return None
    at, header, data = len(SIGNATURE), b"", bytearray()
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        body = png[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
    if len(header) != 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in _CHANNELS or interlace or width * height > MAX_PIXELS:
        return None
    try:
        raw = zlib.decompress(bytes(data))
    except zlib.error:
        return None
    step = _CHANNELS[colour]
    stride = width * step
    if len(raw) < (stride + 1) * height:
        return None
    rows: list[bytes] = []
    previous = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], raw[start + 1 : start + 1 + stride], previous, step)
        rows.append(line)
        previous = line
    return _Image(width, height, (depth, colour), rows)


def _unfilter(kind: int, line: bytes, previous: bytes, step: int) -> bytes:
    """Return a row as its filter (PNG's five: none, sub, up, average, Paeth) had it."""
    if kind == 0:
        return line
    if kind == 2:
        return bytes((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
    out = bytearray(line)
    for i in range(len(out)):
        left = out[i - step] if i >= step else 0
        if kind == 1:
            out[i] = (out[i] + left) & 0xFF
        elif kind == 3:
            out[i] = (out[i] + (left + previous[i]) // 2) & 0xFF
        else:
            above = previous[i]
            corner = previous[i - step] if i >= step else 0
            out[i] = (out[i] + _paeth(left, above, corner)) & 0xFF
    return bytes(out)


def _paeth(left: int, above: int, corner: int) -> int:
    estimate = left + above - corner
    to_left, to_above, to_corner = (
        abs(estimate - left),
        abs(estimate - above),
        abs(estimate - corner),
    )
    if to_left <= to_above and to_left <= to_corner:
        return left
    return above if to_above <= to_corner else corner
