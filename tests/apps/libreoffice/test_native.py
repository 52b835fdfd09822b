"""NativeFiles end to end on LibreOffice: upload, an agent's edit as a proposal, renders.

The chain the demo runs, on the real office: an upload is inspected by LibreOffice, an agent's
batch becomes a proposal with LibreOffice's provenance and, once accepted, a version whose text,
review and pages the office read; a page of it renders as a real PNG.
"""

import io
import zipfile

import pytest
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import RespondToProposal
from artifactr.workspace import InMemoryStorage
from PIL import Image

from artifactr.files import (
    AppCommand,
    InMemoryBlobs,
    InMemoryCheckouts,
    InMemoryLeases,
    WordDocument,
)
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.native import NativeFiles
from tests.native.conftest import chunks

# Each test starts a real office (or a few): one to ten seconds a start on two shared cores.
pytestmark = pytest.mark.timeout(180)

ALICE = UserActor(id="alice", name="Alice")


async def test_native_files_runs_on_libreoffice_from_upload_to_a_rendered_page(
    office: LibreOffice, report: bytes
) -> None:
    files = NativeFiles(
        blobs=InMemoryBlobs(),
        app=office,
        leases=InMemoryLeases(),
        checkouts=InMemoryCheckouts(),
        render_deadline=45,
    )
    ws = await Workspaces(InMemoryStorage(), types=[WordDocument]).open("t", "w", actor=ALICE)
    uploaded = await files.upload(ws, "report.docx", chunks(report))
    assert uploaded.type == "applied"
    artifact_id = uploaded.artifact_id

    thread = await ws.create_thread()
    agent = ws.as_actor(AgentActor(thread_id=thread.id, on_behalf_of=ALICE))
    batch = [
        AppCommand(command="changes.track", params={"value": True}),
        AppCommand(command="text.replaceAll", params={"find": "fox", "replace": "cat"}),
        AppCommand(
            command="paragraph.insertAfter",
            params={"heading": "Summary", "text": "Reviewed by the agent."},
        ),
    ]
    proposed = await files.edit(agent, artifact_id, base_version=1, commands=batch)
    assert proposed.type == "proposed"
    bob = ws.as_actor(UserActor(id="bob"))
    accepted = await bob.commit(
        RespondToProposal(proposal_id=proposed.proposal_id, decision="accept")
    )
    assert accepted.version == 2
    head = await ws.get(WordDocument, artifact_id)
    assert head.data.provenance.app == "libreoffice"
    assert head.data.provenance.source == "commands"
    text = await files.text(ws, artifact_id)
    assert "Reviewed by the agent." in text
    assert "cat jumps" in text

    content = b"".join([c async for c in files.content(ws, artifact_id)])
    with zipfile.ZipFile(io.BytesIO(content)) as package:
        body = package.read("word/document.xml").decode()
    # A tracked insertion by the agent's name, as artifactr's actor names it.
    assert "Reviewed by the agent." in body
    assert "<w:ins " in body
    png = await files.render(ws, artifact_id, 2, 1)
    with Image.open(io.BytesIO(png)) as page:
        assert page.size == (816, 1056)
