"""A page's PNG: pdftoppm's pixels, written as a PNG here (apps/libreoffice/_png.py).

The adapter asks pdftoppm for a PPM, which costs a fraction of its PNG, and writes the PNG
itself. The page must be pixel for pixel the one pdftoppm's own PNG holds; a PPM that isn't one
8-bit RGB page is the app's crash, never a broken image.
"""

import asyncio
import io
import subprocess

import pytest
from PIL import Image

from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.apps.libreoffice._png import SIGNATURE, png_from_ppm
from artifactr.files.core.errors import AppCrashed


def pixels(png: bytes) -> tuple[tuple[int, int], str, bytes]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size, image.mode, image.convert("RGB").tobytes()


async def test_a_rendered_page_has_the_pixels_of_pdftoppm_s_own_png(
    office: LibreOffice, report: bytes
) -> None:
    page = await office.render(report, 1, scale=0.75)
    pdf = await office.pdf(report)
    argv = ["pdftoppm", "-f", "1", "-l", "1", "-r", "72", "-png", "-"]
    own = await asyncio.to_thread(
        lambda: subprocess.run(argv, input=pdf, capture_output=True, check=True).stdout
    )

    assert page.startswith(SIGNATURE)
    assert pixels(page) == pixels(own)
    assert pixels(page)[0] == (612, 792)  # US Letter at 72 dpi


def test_a_ppm_becomes_a_png_of_the_same_pixels_whatever_its_header_s_spacing() -> None:
    body = bytes(range(256)) * 3 * 4  # 4 rows of 64 pixels, every byte value
    for header in (b"P6\n64 12\n255\n", b"P6 # pdftoppm\n64\t12 # size\n255\n"):
        png = png_from_ppm(header + body[: 64 * 12 * 3])
        assert pixels(png) == ((64, 12), "RGB", body[: 64 * 12 * 3])


@pytest.mark.parametrize(
    ("ppm", "said"),
    [
        (b"P5\n2 2\n255\n" + bytes(4), "not a PPM page"),  # grey, not RGB
        (b"%PDF-1.7", "not a PPM page"),
        (b"P6\n2 2\n65535\n" + bytes(24), "2x2 at 65535 levels in 24 bytes"),
        (b"P6\n2 2\n255\n" + bytes(11), "2x2 at 255 levels in 11 bytes"),
        (b"P6\n0 2\n255\n", "0x2 at 255 levels in 0 bytes"),
        (b"P6\n2 0\n255\n", "2x0 at 255 levels in 0 bytes"),
    ],
)
def test_what_is_not_one_8_bit_rgb_page_is_the_app_s_crash(ppm: bytes, said: str) -> None:
    with pytest.raises(AppCrashed, match=said):
        png_from_ppm(ppm)
