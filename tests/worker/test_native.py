"""NativeFiles end to end through the worker: upload, edit, check out and check in.

FakeApp is replaced by the real chain: :class:`~artifactr.files.apps.worker.Worker`, HTTP
on loopback, the worker service, its screening and launcher, and the full stand-in editing the
.docx. Everything NativeFiles stores comes back from that chain.
"""

import io
from collections.abc import AsyncIterator

import docx
import pytest
from artifactr import UserActor

from artifactr.files import (
    AppCommand,
    UnsafeFile,
    WordDocument,
)
from artifactr.files.native import NativeFiles
from tests import hostile
from tests.worker.conftest import MakeWorker
from tests.world import world_in_memory

ALICE = UserActor(id="alice", name="Alice")


async def chunks(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 4096):
        yield data[start : start + 4096]


def texts(content: bytes) -> list[str]:
    return [paragraph.text for paragraph in docx.Document(io.BytesIO(content)).paragraphs]


async def read(files: NativeFiles, ws: object, artifact_id: str, version: int) -> bytes:
    return b"".join([chunk async for chunk in files.content(ws, artifact_id, version)])


async def test_a_document_is_uploaded_edited_checked_out_and_in_through_the_worker(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker("standin", build="sha256:" + "cd" * 32)
    world = world_in_memory(app=served.app())
    files = world.files
    ws = await world.ws(ALICE)

    uploaded = await files.upload(ws, "report.docx", chunks(report))
    assert uploaded.type == "applied"
    artifact_id = uploaded.artifact_id
    version, manifest = await files.manifest(ws, artifact_id)
    assert version == 1
    assert manifest.outline.splitlines() == ["Quarterly report", "Summary", "  Details"]
    assert manifest.provenance.app == "wordcraft"
    assert manifest.provenance.app_version == "0.4.0-standin"
    assert manifest.provenance.build == "sha256:" + "cd" * 32

    replace = AppCommand(command="edit.replaceAll", params={"text": "fox", "with": "cat"})
    edited = await files.edit(ws, artifact_id, base_version=1, commands=[replace])
    assert edited.type == "applied"
    assert "The quick brown cat jumps over the lazy dog." in texts(
        await read(files, ws, artifact_id, 2)
    )
    assert "cat" in await files.text(ws, artifact_id)

    checkout = await files.check_out(ws, artifact_id)
    document = docx.Document(io.BytesIO(await read(files, ws, artifact_id, 2)))
    document.add_paragraph("Signed by Alice.")
    changed = io.BytesIO()
    document.save(changed)
    checked_in = await files.check_in(ws, checkout.id, chunks(changed.getvalue()))
    assert checked_in.status == "applied"
    assert checked_in.version == 3
    assert "Signed by Alice." in await files.text(ws, artifact_id)
    assert await files.lease(ws, artifact_id) is None


async def test_a_hostile_upload_is_refused_by_the_worker_and_stores_nothing(
    make_worker: MakeWorker,
) -> None:
    served = make_worker()
    world = world_in_memory(app=served.app())
    files = world.files
    ws = await world.ws(ALICE)
    laughs = hostile.build(
        hostile.package(
            hostile.deflated(
                "word/document.xml",
                b'<!DOCTYPE a [<!ENTITY b "c">]><w:document>&b;</w:document>',
            )
        )
    )
    with pytest.raises(UnsafeFile) as refused:
        await files.upload(ws, "laughs.docx", chunks(laughs))
    assert refused.value.reason == "not_docx"
    assert await ws.artifacts(WordDocument) == []
