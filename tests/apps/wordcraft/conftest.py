"""Fixtures for the WordCraft adapter: the stand-in or the real binary, documents, and leftovers.

The adapter's behaviour suite runs against the stand-in (``standin.py``) over a real pipe, and
again, marked ``wordcraft``, against the real ``wordcraft-cli`` when ``WORDCRAFT_CLI`` names one.
Every test that starts the stand-in gets a file its processes write their pids to, and fails if
any of them is still alive when the test ends.

The stand-in imports the MCP SDK, which takes seconds to compile without bytecode; it writes its
bytecode to a temporary directory of this run's own (``PYTHONPYCACHEPREFIX``), never to the
virtual environment or the tree.
"""

import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import docx
import pytest
from docx.document import Document
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from artifactr.files.apps.wordcraft import Limits, Subprocess
from tests.pids import alive

STANDIN = Path(__file__).with_name("standin.py")
"""The stand-in for ``wordcraft-cli``."""

MakeStandin = Callable[..., Subprocess]


def recorded(pids: Path) -> list[int]:
    """Return the pids the stand-ins of a test wrote down."""
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


@pytest.fixture(scope="session")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """The file the test's stand-ins write their pids to; none may outlive the test."""
    path = tmp_path / "pids"
    yield path
    assert [pid for pid in recorded(path) if alive(pid)] == []


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The directory jobs make their temporary directories in, for this test alone."""
    path = tmp_path / "jobs"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


@pytest.fixture
def make_standin(pycache: Path, pids: Path) -> MakeStandin:
    """Return a factory of adapters over the stand-in, in a mode (``STANDIN_MODE``) if given."""

    def make(mode: str = "", *, limits: Limits | None = None) -> Subprocess:
        env = {"PYTHONPYCACHEPREFIX": str(pycache), "STANDIN_PIDS": str(pids)}
        if mode:
            env["STANDIN_MODE"] = mode
        return Subprocess([sys.executable, str(STANDIN)], env=env, limits=limits or Limits())

    return make


@pytest.fixture(params=["standin", pytest.param("real", marks=pytest.mark.wordcraft)])
def app(request: pytest.FixtureRequest, make_standin: MakeStandin) -> Subprocess:
    """The adapter over the stand-in, or over the real ``wordcraft-cli`` in ``WORDCRAFT_CLI``."""
    if request.param == "standin":
        return make_standin()
    cli = os.environ.get("WORDCRAFT_CLI")
    if not cli:
        pytest.skip("WORDCRAFT_CLI names no wordcraft-cli, so the real app's run is skipped")
    return Subprocess(cli=cli)


# ─── documents ────────────────────────────────────────────────────────────────


def saved(document: Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def report_document() -> Document:
    """A short report: a title, two headings, two paragraphs of body text."""
    document = docx.Document()
    document.add_heading("Quarterly report", 0)
    document.add_heading("Summary", 1)
    document.add_paragraph("The quick brown fox jumps over the lazy dog.")
    document.add_heading("Details", 2)
    document.add_paragraph("Draft figures follow.")
    return document


@pytest.fixture
def report() -> bytes:
    """The report, as .docx bytes."""
    return saved(report_document())


@pytest.fixture
def reviewed() -> bytes:
    """The report with a comment by Grace and a tracked insertion and deletion by Linus."""
    document = report_document()
    paragraph = document.paragraphs[4]
    document.add_comment(paragraph.runs, text="Check the figures", author="Grace", initials="G")
    body = document.paragraphs[2]._p
    stamp = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for kind, text, tag in (("w:ins", " Quickly.", "w:t"), ("w:del", " Slowly.", "w:delText")):
        change = OxmlElement(kind)
        change.set(qn("w:id"), "7" if kind == "w:ins" else "8")
        change.set(qn("w:author"), "Linus")
        change.set(qn("w:date"), stamp)
        run = OxmlElement("w:r")
        element = OxmlElement(tag)
        element.text = text
        element.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        run.append(element)
        change.append(run)
        body.append(change)
    return saved(document)
