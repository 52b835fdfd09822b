"""Hostile corpus: the files every worker must refuse in time, written to a folder (RFC-0003).

RFC-0003 lets an app on by default only once "its hostile files [are] refused in time". These
are those files, made on the fly from ``tests/hostile.py``'s generators so nothing binary is
committed, each with the reason the worker refuses it for (an
:class:`~artifactr.files.core.errors.UnsafeFile` reason):

====================== ===================================================== ==================
file                   what it is                                            refused as
====================== ===================================================== ==================
zip-bomb               a document that declares 4 GiB of zeros               part_too_large
nested-zip             a sound document holding a zip bomb as a part         part_too_large
many-entries           100,000 entries                                       too_many_entries
billion-laughs         nine levels of entities, ten each                     not_docx
deep-xml               elements nested a million deep (stored: no ratio)     too_deep
huge-image             a 100,000 x 100,000 PNG in a few dozen bytes          image_too_large
lying-part             a part that declares 1 MiB and inflates to 4 GiB      part_too_large
truncated              a sound package cut in half                           not_a_zip
not-a-zip              an OLE compound file's signature, no directory        not_docx
password               a .docx saved with a password (an encrypted package)  encrypted
empty                  no bytes at all                                       not_a_zip
====================== ===================================================== ==================

``python -m scripts.hostile_corpus FOLDER`` writes them as ``<file>.docx`` into FOLDER and prints
each one's size; the worker's tests and ``scripts/bench/hostile.py`` use :data:`CORPUS` directly.
"""

import argparse
import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from artifactr.files.core.errors import UnsafeReason
from tests import hostile

WORDPROCESSING: Final = b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"


@dataclass(frozen=True)
class Hostile:
    """A hostile file, how to make it, and why it is refused."""

    name: str
    """Its name in the folder, without ``.docx``."""
    description: str
    """What it is, in a few words."""
    make: Callable[[], bytes]
    """Returns its bytes."""
    reason: UnsafeReason
    """The reason the worker refuses it for."""


def _document(part: bytes, *, stored: bool = False) -> bytes:
    entry = hostile.stored if stored else hostile.deflated
    return hostile.build(hostile.package(entry("word/document.xml", part)))


def nested_zip() -> bytes:
    """Return a sound document that holds a zip bomb as an embedded part."""
    return hostile.build(
        hostile.package(
            hostile.deflated("word/document.xml", hostile.DOCUMENT),
            hostile.stored("word/embeddings/package.zip", hostile.zip_bomb()),
        )
    )


def billion_laughs() -> bytes:
    """Return a document whose one entity would expand to a billion ``lol``s."""
    entities = [b'<!ENTITY lol0 "lol">']
    entities += [
        b'<!ENTITY lol%d "%s">' % (level, b"&lol%d;" % (level - 1) * 10) for level in range(1, 10)
    ]
    return _document(
        b'<?xml version="1.0"?><!DOCTYPE lolz [' + b"".join(entities) + b"]>"
        b'<w:document xmlns:w="' + WORDPROCESSING + b'"><w:body><w:p><w:r><w:t>&lol9;'
        b"</w:t></w:r></w:p></w:body></w:document>"
    )


def deep_xml(depth: int = 1_000_000) -> bytes:
    """Return a document whose elements nest ``depth`` deep, stored so no ratio refuses it."""
    return _document(
        b"<w:document>" + b"<a>" * depth + b"</a>" * depth + b"</w:document>", stored=True
    )


def huge_image(width: int = 100_000, height: int = 100_000) -> bytes:
    """Return a document with a PNG that declares ``width`` x ``height`` pixels."""
    header = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + header
        + struct.pack(">I", zlib.crc32(header))
    )
    return hostile.build(
        hostile.package(
            hostile.deflated("word/document.xml", hostile.DOCUMENT),
            hostile.stored("word/media/image1.png", png),
        )
    )


CORPUS: Final[tuple[Hostile, ...]] = (
    Hostile(
        "zip-bomb", "a document that declares 4 GiB of zeros", hostile.zip_bomb, "part_too_large"
    ),
    Hostile("nested-zip", "a document holding a zip bomb as a part", nested_zip, "part_too_large"),
    Hostile("many-entries", "100,000 entries", hostile.many_entries, "too_many_entries"),
    Hostile("billion-laughs", "nine levels of entities, ten each", billion_laughs, "not_docx"),
    Hostile("deep-xml", "elements nested a million deep", deep_xml, "too_deep"),
    Hostile("huge-image", "a 100,000 x 100,000 PNG in a tiny file", huge_image, "image_too_large"),
    Hostile(
        "lying-part",
        "a part that declares 1 MiB and inflates to 4 GiB",
        hostile.lying_bomb,
        "part_too_large",
    ),
    Hostile(
        "truncated",
        "a sound package cut in half",
        lambda: hostile.truncated(hostile.sound()),
        "not_a_zip",
    ),
    Hostile("not-a-zip", "an OLE compound file's signature", hostile.not_a_zip, "not_docx"),
    Hostile("password", "a .docx saved with a password", hostile.password_protected, "encrypted"),
    Hostile("empty", "no bytes at all", hostile.empty, "not_a_zip"),
)
"""Every hostile file, in the order the benchmark sends them."""


def write(folder: Path) -> list[Path]:
    """Write every file of the corpus into ``folder`` (made if missing); return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for item in CORPUS:
        path = folder / f"{item.name}.docx"
        path.write_bytes(item.make())
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Write the corpus into the folder the command line names, and list it."""
    parser = argparse.ArgumentParser(description="Write the hostile corpus into a folder.")
    parser.add_argument("folder", type=Path, help="where to write the files")
    options = parser.parse_args(argv)
    for item, path in zip(CORPUS, write(options.folder), strict=True):
        size = path.stat().st_size
        print(f"{path.name:<22} {size:>12,} bytes  {item.reason:<17} {item.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
