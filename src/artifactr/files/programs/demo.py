"""Demo: the whole story of a native file, on SQLite, with no server (``make demo``).

It uploads a document, lets a scripted agent propose an edit that a person accepts, checks the
file out and in, shows the agent refused meanwhile, turns a stale check-in into a proposal, prints
the history (who edited, who accepted) and writes the final .docx and the page the agent viewed.
The app is :func:`choose_app`'s, which it names: WordCraft when ``WORDCRAFT_CLI`` is set,
LibreOffice when it can run here, FakeApp otherwise or with ``ARTIFACTR_FILES_APP=fake``. The
agent's model is a script: no network, no key.
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

from artifactr import AgentActor, Runner, UserActor, Workspaces
from artifactr.agent import ArtifactWorkspace, Session, function_model
from artifactr.core import (
    ArtifactChanged,
    ArtifactCreated,
    ProposalCreated,
    ProposalResolved,
    RespondToProposal,
    SystemActor,
)
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import Workspace
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from artifactr.files.agent.tools import native_file_tools
from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.libreoffice import Availability, LibreOffice, available, machine_size
from artifactr.files.core.app_port import App, AppCommand
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.documents import Cell, build_docx, build_pptx, build_xlsx
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.core.manifests import NativeFile, Presentation, Spreadsheet, WordDocument
from artifactr.files.native import NativeFiles
from artifactr.files.sql import (
    SqlBlobs,
    SqlCheckouts,
    SqlHistory,
    SqlLeases,
    SqlRenders,
    sqlite_engine,
)
from artifactr.files.sql import migrate as migrate_files

CORPUS = Path(os.environ.get("ARTIFACTR_FILES_CORPUS", "../shared/corpus/real"))
"""Where the real documents are: ``$ARTIFACTR_FILES_CORPUS``, or ``../shared/corpus/real``."""

DOCUMENT = "pydocx-test.docx"
"""The corpus document the demo uploads."""

ALICE = UserActor(id="alice", name="Alice")
BOB = UserActor(id="bob", name="Bob")

KINDS: list[type[NativeFile]] = [WordDocument, Spreadsheet, Presentation]
"""The kinds the demo holds: documents, and on LibreOffice workbooks and decks."""

Say = Callable[[str], None]

FORCE_FAKE = "ARTIFACTR_FILES_APP"
"""The variable that, set to ``fake``, makes the demo and the served job use FakeApp."""


class DemoClock:
    """Real time, plus however far the story has jumped ahead."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)
        """How far ahead of real time the story is."""

    def __call__(self) -> datetime:
        """Return the story's time."""
        return datetime.now(UTC) + self.ahead


def append_paragraph(app: str, text: str) -> list[AppCommand]:
    """Return the batch that adds a paragraph at the end, in the app's own commands.

    LibreOffice has ``paragraph.append``; WordCraft (and FakeApp, which speaks its commands)
    moves the caret to the end, starts a paragraph and types.
    """
    if app == "libreoffice":
        return [AppCommand(command="paragraph.append", params={"text": text})]
    return [
        AppCommand(command="caret.docEnd"),
        AppCommand(command="text.newParagraph"),
        AppCommand(command="text.insert", params={"text": text}),
    ]


@dataclass
class Script:
    """The agent's model: a look at page 1, then ``edit_native`` once a turn, with ``note``.

    Each turn ends with what the tool said; the first begins with ``view_page``.
    """

    note: Sequence[AppCommand] = ()
    """The batch the agent proposes."""
    artifact_id: str = ""
    base_version: int = 1
    heard: list[str] = field(default_factory=list[str])
    page: bytes | None = None
    """The page ``view_page`` showed it, as a PNG."""

    def respond(self, messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
        """Return the next step of the script, from what the model was sent."""
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else ()
        returned = [
            part
            for part in parts
            if isinstance(part, ToolReturnPart) and part.tool_name == "edit_native"
        ]
        if returned:
            said = str(returned[-1].content)
            self.heard.append(said)
            return ModelResponse(parts=[TextPart(said)])
        self.page = next(iter(pictures(parts)), self.page)
        if self.page is None:
            look = {"artifact_id": self.artifact_id, "page": 1}
            return ModelResponse(parts=[ToolCallPart("view_page", json.dumps(look))])
        arguments: dict[str, object] = {
            "artifact_id": self.artifact_id,
            "base_version": self.base_version,
            "commands": [command.model_dump(mode="json") for command in self.note],
            "summary": "add a review note at the end",
        }
        return ModelResponse(parts=[ToolCallPart("edit_native", json.dumps(arguments))])


def pictures(parts: Sequence[ModelRequestPart]) -> list[bytes]:
    """Return the PNGs a request shows the model: a tool's return, or a prompt beside it."""
    shown: list[object] = []
    for part in parts:
        if isinstance(part, ToolReturnPart | UserPromptPart):
            content: object = part.content
            shown += content if isinstance(content, list) else [content]
    return [
        item.data
        for item in shown
        if isinstance(item, BinaryContent) and item.media_type == "image/png"
    ]


def choose_app(
    environ: Mapping[str, str] = os.environ,
    office: Callable[[], Availability] = available,
    pool: int | None = None,
) -> tuple[App, str]:
    """Return the app to run on, and a line saying which and why.

    WordCraft when ``WORDCRAFT_CLI`` names a binary; FakeApp when ``ARTIFACTR_FILES_APP`` is
    ``fake``; LibreOffice when ``office()`` says it can run here, with ``pool`` offices started
    ahead of its jobs (:func:`~artifactr.files.apps.libreoffice.machine_size` if None: one a
    core, as memory allows; ADR-0033), which :func:`start_app` fills; FakeApp otherwise.
    """
    cli = environ.get("WORDCRAFT_CLI")
    if cli:
        from artifactr.files.apps.wordcraft import Subprocess

        return Subprocess(cli=cli), f"WordCraft ({cli})"
    if environ.get(FORCE_FAKE) == "fake":
        return FakeApp(), f"FakeApp ({FORCE_FAKE}=fake)"
    found = office()
    if found:
        size = machine_size() if pool is None else pool
        ahead = f"{size} office{'' if size == 1 else 's'} started ahead" if size else "no pool"
        return LibreOffice(pool=size), (
            f"LibreOffice (real pages, run headless; opens {found.opens}; {ahead})"
        )
    return FakeApp(), (
        f"FakeApp (drawn pages; LibreOffice can't run here: {'; '.join(found.missing)}; "
        "or set WORDCRAFT_CLI to a wordcraft-cli binary)"
    )


def start_app(app: App) -> None:
    """Start the offices of a LibreOffice pool now, so no job pays a cold start (ADR-0033)."""
    if isinstance(app, LibreOffice):
        app.fill_pool()


async def stop_app(app: App) -> None:
    """Kill a LibreOffice's offices: its pool's and any still being reaped."""
    if isinstance(app, LibreOffice):
        await app.close()


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
    edited = await app.apply(data, append_paragraph(app.name, text), author=author)
    return edited.content


async def run(out: Path, say: Say = print, chosen: tuple[App, str] | None = None) -> Path:
    """Run the story into ``out``; return the final .docx.

    ``out`` gets the database, the page the agent saw (``page-1.png``) and the final .docx. The
    app is ``chosen``, or :func:`choose_app`'s; a LibreOffice's pool is filled first, and its
    offices are killed at the end.
    """
    chosen = chosen or choose_app()
    start_app(chosen[0])
    database = await asyncio.to_thread(_fresh, out)
    engine = sqlite_engine(database)
    try:
        return await _story(engine, out, say, chosen)
    finally:
        await engine.dispose()
        await stop_app(chosen[0])


def _fresh(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    database = out / "demo.db"
    # A write-ahead log left by a run that was killed belongs to the old file, never the new.
    for stale in (database, database.with_name("demo.db-wal"), database.with_name("demo.db-shm")):
        stale.unlink(missing_ok=True)
    return database


async def _story(engine: Any, out: Path, say: Say, chosen: tuple[App, str]) -> Path:
    await migrate(engine)
    await migrate_files(engine)
    app, label = chosen
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
        history=SqlHistory(engine),
        integrations=switch,
        clock=clock,
        types=KINDS,
    )
    workspaces = Workspaces(
        storage, types=KINDS, authorize=integration_gate(switch, files.key_of, storage)
    )
    alice = await workspaces.open("acme", "contracts", actor=ALICE)
    bob = alice.as_actor(BOB)

    name, data = source_document()
    uploaded = await files.upload(alice, name, stream(data))
    artifact_id = uploaded.artifact_id if uploaded.type == "applied" else ""
    head = await alice.get(WordDocument, artifact_id)
    say(f"\n1. Alice uploads {name}: {artifact_id} v{head.version}, {head.data.content.size} bytes")
    say("   the agent sees: " + head.data.render_for_agent().replace("\n", "\n   "))

    note = append_paragraph(app.name, "Reviewed by the assistant.")
    script = Script(note=note, artifact_id=artifact_id, base_version=head.version)
    agent = Agent(
        function_model(script.respond),
        deps_type=Session[None],
        capabilities=[ArtifactWorkspace(types=[WordDocument])],
        toolsets=[native_file_tools(files, view=True)],
    )
    runner = Runner(agent, app=None)
    thread = await alice.create_thread("tidy the contract")
    try:
        await _turn(runner, alice, thread.id, "Add a review note at the end.")
        assert script.page is not None, "the agent looked at no page"
        page = out / "page-1.png"
        page.write_bytes(script.page)
        say(f"\n2. The agent looks at page 1 through view_page, as {app.name} renders it")
        say(f"   ({len(script.page)} bytes of PNG): {page}")
        say(f"   and edits through edit_native: {script.heard[-1]}")
        proposal = (await alice.proposals())[-1]
        resolved = await bob.commit(RespondToProposal(proposal_id=proposal.id, decision="accept"))
        say(f"   Bob accepts proposal {proposal.id}: v{resolved.version}")

        checkout = await files.check_out(alice, artifact_id)
        say(
            f"\n3. Alice checks it out: {checkout.id}, base v{checkout.base_version}, "
            f"until {rfc3339(checkout.expires_at)}"
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
            commands=append_paragraph(app.name, "Signed."),
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
    await workbook_and_deck(files, alice, bob, out, say)
    return final


async def workbook_and_deck(
    files: NativeFiles, alice: Workspace, bob: Workspace, out: Path, say: Say
) -> None:
    """Show a workbook an agent edits (a formula, recalculated) and a deck's slide pages.

    Only on LibreOffice: FakeApp reads Word documents only, and the story says it leaves them
    out.
    """
    if not isinstance(files.app, LibreOffice):
        say(
            f"\n9. Workbooks and decks: {files.app.name} reads Word documents (.docx) only, so "
            "the demo leaves the workbook and the deck out (LibreOffice runs them)"
        )
        return
    rows: list[list[Cell]] = [["Item", "Cost"], ["Rent", 1200], ["Food", 300], ["Total", None]]
    uploaded = await files.upload(alice, "budget.xlsx", stream(build_xlsx({"Budget": rows})))
    book = uploaded.artifact_id if uploaded.type == "applied" else ""
    head = await alice.get(Spreadsheet, book)
    say(f"\n9. Alice uploads budget.xlsx: a {head.data.kind}, outline {head.data.outline!r}")
    thread = await alice.create_thread()
    agent = alice.as_actor(AgentActor(thread_id=thread.id, on_behalf_of=ALICE))
    batch = [
        AppCommand(command="cell.set", params={"cell": "B4", "value": "=SUM(B2:B3)"}),
        AppCommand(command="cell.set", params={"cell": "B3", "value": 450}),
    ]
    proposed = await files.edit(agent, book, base_version=1, commands=batch)
    proposal = proposed.proposal_id if proposed.type == "proposed" else ""
    await bob.commit(RespondToProposal(proposal_id=proposal, decision="accept"))
    text = await files.text(alice, book)
    total = next(line for line in text.splitlines() if line.startswith("4\t"))
    say(f"   the agent sets B4 to =SUM(B2:B3) and B3 to 450; Bob accepts; row 4 reads: {total!r}")
    slides = [("Quarterly review", "Draft for the board"), ("Costs", "Rent and food")]
    deck = await files.upload(alice, "review.pptx", stream(build_pptx(slides)))
    deck_id = deck.artifact_id if deck.type == "applied" else ""
    shown = await alice.get(Presentation, deck_id)
    say(f"   Alice uploads review.pptx: slides {shown.data.outline!r}")
    for number in range(1, (shown.data.pages or 0) + 1):
        page = out / f"slide-{number}.png"
        page.write_bytes(await files.render(alice, deck_id, 1, number))
        say(f"   slide {number} rendered: {page}")


async def _turn(runner: Runner[None], ws: Workspace, thread_id: str, content: str) -> None:
    sent = await runner.send(ws, thread_id, content)
    assert sent.run is not None, "the message started no run"
    await sent.run.wait()


async def history(ws: Workspace, artifact_id: str) -> Sequence[str]:
    """Return the artifact's story from the log: who did what, with each change's summary.

    A change made by accepting a proposal is its proposer's, accepted by the one who committed it.
    """
    lines: list[str] = []
    proposers: dict[str, str] = {}
    for envelope in await ws.read():
        event = envelope.event
        who = envelope.actor.display_name
        match event:
            case ArtifactCreated(artifact_id=a, version=v) if a == artifact_id:
                lines.append(f"v{v} created by {who}")
            case ArtifactChanged(artifact_id=a, version=v, summary=summary) if a == artifact_id:
                author = proposers.get(event.proposal_id or "")
                by = who if author is None else f"{author}, accepted by {who}"
                lines.append(f"v{v} by {by}: {summary}")
            case ProposalCreated(proposal_id=p, rationale=rationale):
                proposers[p] = who
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
