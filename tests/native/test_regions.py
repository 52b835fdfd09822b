"""Regions: the box where two renders of a page differ, decoded from the PNGs themselves."""

import io
import random
import struct
import zlib

import pytest
from PIL import Image, ImageDraw

from artifactr.files.native.regions import MAX_PIXELS, Region, changed_region


def paeth(left: int, above: int, corner: int) -> int:
    estimate = left + above - corner
    near = min((abs(estimate - left), 0, left), (abs(estimate - above), 1, above))
    return min(near, (abs(estimate - corner), 2, corner))[2]


def encode(
    rows: list[bytes], width: int, colour: int = 2, filters: tuple[int, ...] = (0, 1, 2, 3, 4)
) -> bytes:
    """Return a PNG of the rows, each filtered by the next of ``filters`` in turn."""
    step = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    raw = bytearray()
    previous = bytes(len(rows[0]))
    for y, row in enumerate(rows):
        kind = filters[y % len(filters)]
        out = bytearray()
        for i, value in enumerate(row):
            left = row[i - step] if i >= step else 0
            corner = previous[i - step] if i >= step else 0
            guess = [0, left, previous[i], (left + previous[i]) // 2][kind] if kind < 4 else 0
            if kind == 4:
                guess = paeth(left, previous[i], corner)
            out.append((value - guess) & 0xFF)
        raw += bytes([kind]) + out
        previous = row
    return png(width, len(rows), colour, zlib.compress(bytes(raw)))


def png(width: int, height: int, colour: int, data: bytes, depth: int = 8, laced: int = 0) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, laced)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def noise(width: int, height: int, step: int, seed: int) -> list[bytes]:
    chance = random.Random(seed)
    return [bytes(chance.randrange(256) for _ in range(width * step)) for _ in range(height)]


@pytest.mark.parametrize("colour", [0, 2, 4, 6])
def test_the_box_holds_every_differing_pixel_whatever_the_rows_filters(colour: int) -> None:
    step = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    rows = noise(12, 10, step, seed=colour)
    changed = [bytearray(row) for row in rows]
    changed[3][5 * step] ^= 0xFF  # pixel (5, 3)
    changed[6][9 * step + step - 1] ^= 0x01  # pixel (9, 6), its last sample
    before = encode(rows, 12, colour)
    after = encode([bytes(row) for row in changed], 12, colour, filters=(4, 3, 2, 1, 0))
    assert changed_region(before, after) == Region(
        x=5, y=3, width=5, height=4, page_width=12, page_height=10
    )
    assert changed_region(before, encode(rows, 12, colour, filters=(2, 4))) is None


def test_renders_made_by_an_encoder_mark_the_changed_words() -> None:
    def render(words: str) -> bytes:
        image = Image.new("RGB", (300, 420), "white")
        ImageDraw.Draw(image).text((40, 200), words, fill="black")
        out = io.BytesIO()
        image.save(out, "PNG")
        return out.getvalue()

    region = changed_region(render("Draft terms"), render("Final terms"))
    assert region is not None
    assert region.x >= 40
    assert region.x + region.width <= 120
    assert region.y >= 195
    assert region.y + region.height <= 220


def test_renders_it_cannot_compare_differ_everywhere() -> None:
    rows = noise(4, 3, 3, seed=1)
    good = encode(rows, 4)
    whole = Region(x=0, y=0, width=4, height=3, page_width=4, page_height=3)
    assert changed_region(b"not a png", good) == whole
    assert changed_region(good, b"not a png") == whole
    assert changed_region(b"", b"") is None
    other = encode(noise(5, 3, 3, seed=2), 5)
    assert changed_region(good, other) == Region(
        x=0, y=0, width=5, height=3, page_width=5, page_height=3
    )
    unread = [
        b"\x89PNG\r\n\x1a\n",  # no header
        png(4, 3, 2, zlib.compress(b"\x00" * 39), depth=16),
        png(4, 3, 5, zlib.compress(b"\x00" * 39)),
        png(4, 3, 2, zlib.compress(b"\x00" * 39), laced=1),
        png(MAX_PIXELS, 2, 2, zlib.compress(b"")),
        png(4, 3, 2, b"not zlib"),
        png(4, 3, 2, zlib.compress(b"\x00" * 10)),  # too short
    ]
    for image in unread:
        assert changed_region(image, good) == whole
