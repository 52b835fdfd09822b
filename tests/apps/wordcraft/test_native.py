"""NativeFiles end to end through the Subprocess adapter: the app edits, inspects and renders.

The same chain the demo runs when ``WORDCRAFT_CLI`` is set, here over the stand-in (and the
real binary when it is named): an agent's edit becomes a proposal with WordCraft's provenance,
a person's check-in commits, and a no-op save is no revision.
"""

import io

import docx
from artifactr import AgentActor, UserActor
from artifactr.core import RespondToProposal

from artifactr.files import (
    AppCommand,
    WordDocument,
)
from artifactr.files.apps.wordcraft import Subprocess
from tests.native.conftest import chunks
from tests.world import world_in_memory

ALICE = UserActor(id="alice", name="Alice")


async def test_native_files_runs_on_wordcraft_from_upload_to_check_in(
    app: Subprocess, report: bytes
) -> None:
    world = world_in_memory(app=app)
    files = world.files
    ws = await world.ws(ALICE)
    uploaded = await files.upload(ws, "report.docx", chunks(report))
    assert uploaded.type == "applied"
    artifact_id = uploaded.artifact_id

    thread = await ws.create_thread()
    agent = ws.as_actor(AgentActor(thread_id=thread.id, on_behalf_of=ALICE))
    replace = AppCommand(command="edit.replaceAll", params={"text": "fox", "with": "cat"})
    proposed = await files.edit(agent, artifact_id, base_version=1, commands=[replace])
    assert proposed.type == "proposed"
    bob = ws.as_actor(UserActor(id="bob"))
    accepted = await bob.commit(
        RespondToProposal(proposal_id=proposed.proposal_id, decision="accept")
    )
    assert accepted.version == 2
    head = await ws.get(WordDocument, artifact_id)
    assert head.data.provenance.app == "wordcraft"
    assert head.data.provenance.source == "commands"
    assert "cat" in await files.text(ws, artifact_id)

    checkout = await files.check_out(ws, artifact_id)
    current = b"".join([c async for c in files.content(ws, artifact_id)])
    unchanged = await files.check_in(ws, checkout.id, chunks(current))
    assert unchanged.status == "unchanged"
    checkout = await files.check_out(ws, artifact_id)
    document = docx.Document(io.BytesIO(current))
    document.add_paragraph("Signed by Alice.")
    signed = io.BytesIO()
    document.save(signed)
    applied = await files.check_in(ws, checkout.id, chunks(signed.getvalue()))
    assert (applied.status, applied.version) == ("applied", 3)
    assert "Signed by Alice." in await files.text(ws, artifact_id)
    png = await files.render(ws, artifact_id, 3, 1)
    assert png.startswith(b"\x89PNG")
