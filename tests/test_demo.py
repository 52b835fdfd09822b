"""The demo: the whole story runs on the embedded default and tells it truthfully."""

import io
import runpy
import sys
import zipfile
from pathlib import Path

import pytest

from artifactr.files.demo import DOCUMENT, choose_app, run, source_document
from artifactr.files.fake import FakeApp
from tests.conftest import CORPUS


async def test_the_story_runs_from_upload_to_the_final_docx(tmp_path: Path) -> None:
    told: list[str] = []
    final = await run(tmp_path, say=told.append)
    story = "\n".join(told)
    assert story.startswith("app: FakeApp")
    assert "The agent edits through edit_native: Proposed as prp_" in story
    assert "is checked out by Alice (user:alice) until" in story
    assert "Alice checks it in: applied, v3" in story
    assert "retries the upload, answered alike: applied, v3" in story
    assert "Bob checks in: proposed" in story
    assert "v2 by Bob: add a review note at the end" in story
    assert "v4 by Alice: sign" in story
    with zipfile.ZipFile(final) as package:
        body = package.read("word/document.xml").decode()
    assert "Signed." in body
    assert "Approved." in body
    assert "Reviewed by the assistant." in body
    assert "Bob's aside." not in body  # his stale check-in is a proposal, not a revision


def test_the_demo_uses_wordcraft_only_when_told_where_it_is() -> None:
    app, label = choose_app({})
    assert isinstance(app, FakeApp)
    assert "FakeApp" in label
    app, label = choose_app({"WORDCRAFT_CLI": "/opt/wordcraft/bin/wordcraft-cli"})
    assert app.name == "wordcraft"
    assert label == "WordCraft (/opt/wordcraft/bin/wordcraft-cli)"


def test_the_demo_uploads_a_corpus_document_or_builds_one(tmp_path: Path) -> None:
    name, data = source_document(tmp_path)
    assert name == "contract.docx"
    assert zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    if not (CORPUS / DOCUMENT).is_file():
        pytest.skip(f"the corpus is not here: {CORPUS}")
    assert source_document(CORPUS) == (DOCUMENT, (CORPUS / DOCUMENT).read_bytes())


def test_the_module_runs_as_a_command_into_the_folder_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["demo", str(tmp_path / "out")])
    monkeypatch.delitem(sys.modules, "artifactr.files.demo")  # run it afresh, as -m does
    runpy.run_module("artifactr.files.demo", run_name="__main__")
    assert "8. The final .docx" in capsys.readouterr().out
    assert list((tmp_path / "out").glob("final-*.docx"))
