"""Fixtures and helpers for FakeApp's tests: the app on a fixed clock, and readers of the bytes
it writes that never go through FakeApp (zipfile, lxml, python-docx)."""

import io
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import docx
import pytest
from lxml import etree

from artifactr.files import (
    AppCommand,
)
from artifactr.files.apps.fake import FakeApp
from tests.documents import W

NOW = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)
STAMP = "2025-05-06T07:08:09Z"
NS = {
    "w": W,
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dcterms": "http://purl.org/dc/terms/",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}
TEXT = [
    "Quarterly report",
    "Introduction",
    "The quick brown fox jumps over the lazy dog.",
    "Details",
    "Sales rose in the north and fell in the south.",
]


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(clock=lambda: NOW)


def cmd(command: str, **params: Any) -> AppCommand:
    """A command; ``with_`` stands for ``with``, a Python keyword."""
    return AppCommand(command=command, params={k.rstrip("_"): v for k, v in params.items()})


def part(content: bytes, name: str) -> bytes:
    return zipfile.ZipFile(io.BytesIO(content)).read(name)


def xml(content: bytes, name: str = "word/document.xml") -> Any:
    return etree.fromstring(part(content, name))


def texts(content: bytes) -> list[str]:
    return [p.text for p in docx.Document(io.BytesIO(content)).paragraphs]


def parts(content: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(content))
    return {name: archive.read(name) for name in archive.namelist()}


def rezip(
    content: bytes, *, drop: Sequence[str] = (), replace: Mapping[str, bytes] | None = None
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts(content).items():
            if name not in drop:
                archive.writestr(name, (replace or {}).get(name, data))
        for name, data in (replace or {}).items():
            if name not in archive.namelist():
                archive.writestr(name, data)
    return out.getvalue()


async def edit(app: FakeApp, source: bytes, *commands: AppCommand) -> bytes:
    return (await app.apply(source, commands, author="Grace Hopper")).content
