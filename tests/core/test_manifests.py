"""Manifests: the fields and validation of native files, and their round trip through artifactr."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import Artifact, NotFound, get_artifact_type
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import InMemoryStorage, Storage
from pydantic import ValidationError

from artifactr.files import DOCX, Blob, NativeFile, Provenance, WordDocument
from artifactr.files.core.manifests import saved_name
from tests.databases import BACKENDS, sql_engine

SHA = "a" * 64


def document(**changes: object) -> WordDocument:
    fields: dict[str, object] = {
        "name": "contract.docx",
        "content": Blob(sha256=SHA, size=10, media_type=DOCX),
        "fingerprint": "b" * 64,
        "provenance": Provenance(source="upload", app="fake"),
    }
    return WordDocument.model_validate({**fields, **changes})


def test_a_word_document_is_registered_under_its_kind() -> None:
    assert WordDocument.kind == "word_document"
    assert get_artifact_type("word_document") is WordDocument
    assert WordDocument.formats == frozenset({DOCX})
    assert WordDocument.write_policy == "propose"


def test_the_abstract_native_file_is_not_registered() -> None:
    assert "kind" not in vars(NativeFile)
    with pytest.raises(NotFound):
        get_artifact_type("native_file")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", {"sha256": "A" * 64, "size": 1, "media_type": DOCX}),
        ("content", {"sha256": "a" * 63, "size": 1, "media_type": DOCX}),
        ("content", {"sha256": SHA, "size": -1, "media_type": DOCX}),
        ("fingerprint", "not a digest"),
        ("outline", "x" * 4_001),
        ("pages", -1),
        ("name", ""),
        ("provenance", {"source": "email"}),
        ("surprise", 1),
    ],
)
def test_a_manifest_refuses_a_bad_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as caught:
        document(**{field: value})
    assert caught.value.errors()[0]["loc"][0] == field


def test_an_outline_of_exactly_four_thousand_characters_is_kept() -> None:
    assert len(document(outline="x" * 4_000).outline) == 4_000


def test_the_agent_sees_the_name_pages_and_outline() -> None:
    shown = document(pages=3, outline="Terms\n  Payment").render_for_agent()
    assert shown == "contract.docx (word_document)\npages: 3\noutline:\nTerms\n  Payment"


def test_the_agent_is_told_when_there_is_no_outline_or_page_count() -> None:
    assert document().render_for_agent() == "contract.docx (word_document)\noutline: (none)"


@pytest.fixture(params=BACKENDS)
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    if request.param == "memory":
        yield InMemoryStorage()
        return
    async with sql_engine(request.param, tmp_path) as engine:
        await migrate(engine)
        yield SqlStorage(engine)


async def test_a_manifest_round_trips_through_every_storage(storage: Storage) -> None:
    ws = await Workspaces(storage, types=[WordDocument]).open(
        "t1", "w1", actor=UserActor(id="alice")
    )
    made = document(
        pages=2,
        outline="Terms",
        text=Blob(sha256="c" * 64, size=3, media_type="text/plain"),
        provenance=Provenance(source="commands", app="fake", base=SHA),
    )
    outcome = await ws.create(made, artifact_id="doc1")
    assert outcome.type == "applied"
    read = await ws.get(WordDocument, "doc1")
    assert read.data == made
    assert isinstance(read.data, Artifact)


@pytest.mark.parametrize(
    ("name", "saved"),
    [
        ("a" * 300, "a" * 255),
        ("a" * 200 + "." + "b" * 100, ("a" * 200 + "." + "b" * 100)[:255]),
        ("\u00e9" * 200 + ".docx", "\u00e9" * 125 + ".docx"),
        ("ok.docx", "ok.docx"),
    ],
    ids=["no extension", "a long extension", "two-byte characters", "short"],
)
def test_a_saved_name_fits_255_bytes_and_keeps_a_short_extension(name: str, saved: str) -> None:
    assert saved_name(name) == saved
    assert len(saved_name(name).encode()) <= 255


def test_a_revision_sets_the_styles_on_a_manifest_stored_before_it_had_them() -> None:
    from artifactr.core import apply_patch

    from artifactr.files.core.app_port import Styles
    from artifactr.files.core.revisions import revision_patch

    before = document().model_dump(mode="json")
    del before["styles"]  # as a manifest stored before styles were read
    after = document(styles=Styles(paragraph=("Title",), character=("Strong",)))
    patched = WordDocument.model_validate(apply_patch(before, revision_patch(SHA, after)))
    assert patched.styles == Styles(paragraph=("Title",), character=("Strong",))
    again = apply_patch(patched.model_dump(mode="json"), revision_patch(SHA, document()))
    assert WordDocument.model_validate(again).styles is None
