"""FakeApp's renders: a PNG per page whose size follows the scale.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import asyncio
import io
import itertools
import struct
import zlib

import pytest
from PIL import Image

from artifactr.files import (
    AppRefused,
)
from artifactr.files.apps.fake import FakeApp
from tests.documents import build_docx

# ─── render ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("scale", "size"), [(1.0, (595, 842)), (2.0, (1190, 1684)), (9, (2380, 3368)), (0.01, (60, 84))]
)
async def test_a_page_renders_as_a_png_whose_size_follows_the_scale(
    app: FakeApp, scale: float, size: tuple[int, int]
) -> None:
    png = await app.render(build_docx(), 1, scale=scale)
    image = Image.open(io.BytesIO(png))
    image.load()
    assert (image.format, image.mode, image.size) == ("PNG", "L", size)
    assert image.getextrema() == (0x40, 0xFF)
    assert png == await app.render(build_docx(), 1, scale=scale)


async def test_a_rendered_page_draws_a_bar_per_line(app: FakeApp) -> None:
    image = Image.open(io.BytesIO(await app.render(build_docx(["x" * 90, "", "x" * 45]), 1)))
    column = [image.getpixel((100, y)) for y in range(image.height)]
    assert sum(1 for a, b in itertools.pairwise(column) if a != b and b == 0x40) == 2
    assert image.getpixel((72 + 225 + 10, 72 + 2 * 15)) == 0xFF  # the third line is half as wide


async def test_each_page_of_a_long_document_renders(app: FakeApp) -> None:
    source = build_docx(["line"] * 50)
    assert len(await app.render(source, 2)) > 0
    with pytest.raises(AppRefused, match="no page 3"):
        await app.render(source, 3)
    with pytest.raises(AppRefused, match="no page 0"):
        await app.render(source, 0)


async def test_a_scale_that_is_not_a_number_is_refused(app: FakeApp) -> None:
    with pytest.raises(AppRefused, match="bad parameters: `scale` must be a number"):
        await app.render(build_docx(), 1, scale=float("nan"))


def test_a_render_is_a_valid_png_with_checksums() -> None:
    png = asyncio.run(FakeApp().render(build_docx(), 1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, kinds = 8, []
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        data = png[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", png[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + data)
        kinds.append(kind)
        position += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
