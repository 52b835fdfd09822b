"""Demo: the whole story of a native file, on the embedded default (RFC-0003, ADR-0006).

``make demo`` runs it (``python -m artifactr.files.demo``): a SQLite file and no server. It
uploads a document, lets a scripted agent propose an edit through its tools, has a person accept
it, check the file out and in, shows the agent refused while the file is checked out, turns a
stale check-in into a proposal, prints the history with actors and summaries, and writes the
final .docx to disk. The app is WordCraft when ``WORDCRAFT_CLI`` names its binary, FakeApp
otherwise. The agent's model is a script, so the demo needs no network and no key.
"""

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from artifactr import Runner, UserActor, Workspaces
from artifactr.agent import ArtifactWorkspace, Session, function_model
from artifactr.core import (
    ArtifactChanged,
    ArtifactCreated,
    ProposalCreated,
    ProposalResolved,
    RespondToProposal,
    SystemActor,
)
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from artifactr.workspace import Workspace
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from artifactr.files.app import App, AppCommand
from artifactr.files.documents import build_docx
from artifactr.files.fake import FakeApp
from artifactr.files.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.manifests import WordDocument
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from artifactr.files.tools import native_file_tools

CORPUS = Path(os.environ.get("ARTIFACTR_FILES_CORPUS", "../shared/corpus/real"))
"""Where the real documents are: ``$ARTIFACTR_FILES_CORPUS``, or ``../shared/corpus/real``."""

DOCUMENT = "pydocx-test.docx"
"""The corpus document the demo uploads."""

ALICE = UserActor(id="alice", name="Alice")
BOB = UserActor(id="bob", name="Bob")

Say = Callable[[str], None]


class DemoClock:
    """Real time, plus however far the story has jumped ahead."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)
        """How far ahead of real time the story is."""

    def __call__(self) -> datetime:
        """Return the story's time."""
        return datetime.now(UTC) + self.ahead


@dataclass
class Script:
    """The agent's model: each turn calls ``edit_native`` once, then reports what it said."""

    artifact_id: str = ""
    base_version: int = 1
    heard: list[str] = field(default_factory=list[str])

    def respond(self, messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        """Return the next step of the script, from what the model was sent."""
        last = messages[-1]
        returned = [
            part
            for part in (last.parts if isinstance(last, ModelRequest) else ())
            if isinstance(part, ToolReturnPart) and part.tool_name == "edit_native"
        ]
        if returned:
            said = str(returned[-1].content)
            self.heard.append(said)
            return ModelResponse(parts=[TextPart(said)])
        commands: list[dict[str, object]] = [
            {"command": "caret.docEnd", "params": {}},
            {"command": "text.newParagraph", "params": {}},
            {"command": "text.insert", "params": {"text": "Reviewed by the assistant."}},
        ]
        arguments: dict[str, object] = {
            "artifact_id": self.artifact_id,
            "base_version": self.base_version,
            "commands": commands,
            "summary": "add a review note at the end",
        }
        return ModelResponse(parts=[ToolCallPart("edit_native", json.dumps(arguments))])


def choose_app(environ: Mapping[str, str] = os.environ) -> tuple[App, str]:
    """Return WordCraft when ``WORDCRAFT_CLI`` names a binary, FakeApp otherwise."""
    cli = environ.get("WORDCRAFT_CLI")
    if cli:
        from artifactr.files.wordcraft import Subprocess

        return Subprocess(cli=cli), f"WordCraft ({cli})"
    return FakeApp(), "FakeApp (set WORDCRAFT_CLI to a wordcraft-cli binary to use WordCraft)"


def source_document(corpus: Path = CORPUS) -> tuple[str, bytes]:
    """Return the corpus document, or a small generated one where the corpus is absent."""
    path = corpus / DOCUMENT
    if path.is_file():
        return DOCUMENT, path.read_bytes()
    paragraphs = (("Title", "Contract"), ("Heading1", "Terms"), "Draft terms for review.")
    return "contract.docx", build_docx(paragraphs)


async def stream(data: bytes) -> AsyncIterator[bytes]:
    """Yield bytes as an upload would: in chunks."""
    for start in range(0, len(data), 64 * 1024):
        yield data[start : start + 64 * 1024]


async def download(files: NativeFiles, ws: Workspace, artifact_id: str) -> bytes:
    """Return the head revision's bytes."""
    return b"".join([chunk async for chunk in files.content(ws, artifact_id)])


async def person_edits(app: App, data: bytes, text: str, author: str) -> bytes:
    """Return the file as a person would save it from the app's browser build."""
    edited = await app.apply(
        data,
        [
            AppCommand(command="caret.docEnd"),
            AppCommand(command="text.newParagraph"),
            AppCommand(command="text.insert", params={"text": text}),
        ],
        author=author,
    )
    return edited.content


async def run(out: Path, say: Say = print) -> Path:
    """Run the story, writing the database and the final .docx into ``out``; return the .docx."""
    database = await asyncio.to_thread(_fresh, out)
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{database}")
    try:
        return await _story(engine, out, say)
    finally:
        await engine.dispose()


def _fresh(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    database = out / "demo.db"
    database.unlink(missing_ok=True)
    return database


async def _story(engine: Any, out: Path, say: Say) -> Path:
    await migrate(engine)
    await migrate_files(engine)
    app, label = choose_app()
    say(f"app: {label}")
    say(f"state: {out / 'demo.db'} (SQLite, the embedded default)")
    clock = DemoClock()
    switch = InMemoryIntegrations()
    storage = SqlStorage(engine)
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        app=app,
        leases=SqlLeases(engine, clock=clock),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        integrations=switch,
        clock=clock,
    )
    workspaces = Workspaces(
        storage, types=[WordDocument], authorize=integration_gate(switch, files.key_of, storage)
    )
    alice = await workspaces.open("acme", "contracts", actor=ALICE)
    bob = alice.as_actor(BOB)

    name, data = source_document()
    uploaded = await files.upload(alice, name, stream(data))
    artifact_id = uploaded.artifact_id if uploaded.type == "applied" else ""
    head = await alice.get(WordDocument, artifact_id)
    say(f"\n1. Alice uploads {name}: {artifact_id} v{head.version}, {head.data.content.size} bytes")
    say("   the agent sees: " + head.data.render_for_agent().replace("\n", "\n   "))

    script = Script(artifact_id=artifact_id, base_version=head.version)
    agent = Agent(
        function_model(script.respond),
        deps_type=Session[None],
        capabilities=[ArtifactWorkspace(types=[WordDocument])],
        toolsets=[native_file_tools(files)],
    )
    runner = Runner(agent, app=None)
    thread = await alice.create_thread("tidy the contract")
    try:
        await _turn(runner, alice, thread.id, "Add a review note at the end.")
        say(f"\n2. The agent edits through edit_native: {script.heard[-1]}")
        proposal = (await alice.proposals())[-1]
        resolved = await bob.commit(RespondToProposal(proposal_id=proposal.id, decision="accept"))
        say(f"   Bob accepts proposal {proposal.id}: v{resolved.version}")

        checkout = await files.check_out(alice, artifact_id)
        say(
            f"\n3. Alice checks it out: {checkout.id}, base v{checkout.base_version}, "
            f"until {checkout.expires_at:%H:%M} UTC"
        )
        script.base_version = checkout.base_version
        await _turn(runner, alice, thread.id, "Add another note, please.")
        say(f"\n4. The agent tries again and is told: {script.heard[-1]}")

        mine = await person_edits(
            app, await download(files, alice, artifact_id), "Approved.", "Alice"
        )
        checked_in = await files.check_in(alice, checkout.id, stream(mine))
        say(f"\n5. Alice checks it in: {checked_in.status}, v{checked_in.version}")
        again = await files.check_in(alice, checkout.id, stream(mine))
        say(f"   her browser retries the upload, answered alike: {again.status}, v{again.version}")

        late = await files.check_out(bob, artifact_id)
        bobs = await person_edits(
            app, await download(files, bob, artifact_id), "Bob's aside.", "Bob"
        )
        clock.ahead += timedelta(hours=9)
        say(f"\n6. Bob checks it out ({late.id}), and goes home; 9 hours pass and his lease lapses")
        edit = await files.edit(
            alice,
            artifact_id,
            base_version=checked_in.version,
            commands=[
                AppCommand(command="caret.docEnd"),
                AppCommand(command="text.newParagraph"),
                AppCommand(command="text.insert", params={"text": "Signed."}),
            ],
            summary="sign",
        )
        say(f"   Alice edits it meanwhile: {edit.type} v{getattr(edit, 'version', '?')}")
        stale = await files.check_in(bob, late.id, stream(bobs))
        say(
            f"   Bob checks in: {stale.status} (proposal {stale.proposal_id} against "
            f"v{stale.version}); nothing of Alice's was overwritten"
        )
    finally:
        await runner.aclose()

    say("\n7. The history:")
    for line in await history(alice, artifact_id):
        say(f"   {line}")

    final = out / f"final-{name}"
    final.write_bytes(await download(files, alice, artifact_id))
    head = await alice.get(WordDocument, artifact_id)
    say(f"\n8. The final .docx (v{head.version}, {head.data.content.size} bytes): {final}")
    system = alice.as_actor(SystemActor())
    removed = await files.collect(system, grace=timedelta(0))
    say(f"   collect removed {removed} unreferenced blob(s)")
    return final


async def _turn(runner: Runner[None], ws: Workspace, thread_id: str, content: str) -> None:
    sent = await runner.send(ws, thread_id, content)
    assert sent.run is not None, "the message started no run"
    await sent.run.wait()


async def history(ws: Workspace, artifact_id: str) -> Sequence[str]:
    """Return the artifact's story from the log: who did what, with each change's summary."""
    lines: list[str] = []
    for envelope in await ws.read():
        event = envelope.event
        who = envelope.actor.display_name
        match event:
            case ArtifactCreated(artifact_id=a, version=v) if a == artifact_id:
                lines.append(f"v{v} created by {who}")
            case ArtifactChanged(artifact_id=a, version=v, summary=summary) if a == artifact_id:
                lines.append(f"v{v} by {who}: {summary}")
            case ProposalCreated(proposal_id=p, rationale=rationale):
                lines.append(f"proposal {p} by {who}" + (f": {rationale}" if rationale else ""))
            case ProposalResolved(proposal_id=p, decision=decision):
                lines.append(f"proposal {p} {decision}ed by {who}")
            case _:
                pass
    return lines


def main(argv: Sequence[str] = ()) -> None:
    """Run the demo, writing into the folder named by the first argument (``out`` by default)."""
    out = Path(argv[0]) if argv else Path("out")
    asyncio.run(run(out))


if __name__ == "__main__":
    main(sys.argv[1:])
