"""Real WebDAV clients against the served surface: LibreOffice, cadaver and litmus (ADR-0018).

LibreOffice (Debian's, headless, driven over UNO by ``libreoffice_dav.py`` under the system
Python) opens a capability link: it locks, reads, saves under its lock and unlocks, and the test
asserts the requests, the revision by that person, the lease while open and after, and an
agent's edit refused as busy meanwhile; then again with someone else's revision while it was
open, kept as a proposal. cadaver is scripted (open, lock, put, unlock, propget). litmus runs
its basic, props and locks suites; what a versioned document store refuses on purpose is listed
in ``docs/webdav.md``. Each client skips with the reason where it is absent (CI has them all).
"""

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest
from artifactr.core import AgentActor, RespondToProposal, UserActor
from artifactr.workspace import Scope

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.leases import ArtifactBusy
from tests.documents import build_docx
from tests.fastapi.conftest import WORKSPACE, Served
from tests.office import REQUIRED, need_office

pytestmark = pytest.mark.timeout(180)  # each test starts a client: seconds on a busy machine

CLIENT = Path(__file__).with_name("libreoffice_dav.py")
EDIT = " Changed in LibreOffice over WebDAV."
SCOPE = Scope(tenant_id="t1", workspace_id=WORKSPACE)


def need(program: str) -> str:
    """Return a client's path; skip (fail in CI) where it is not installed."""
    found = shutil.which(program)
    if found is None:
        reason = f"{program} is not installed here (Debian's {program})"
        if REQUIRED:
            pytest.fail(reason + " (CI=true requires it)")
        pytest.skip(reason)
    return found


class Office:
    """LibreOffice with a document open from a URL, driven one line at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def say(self, command: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command.encode() + b"\n")
        await self.process.stdin.drain()
        return await self.hear()

    async def hear(self) -> str:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 120)
        return line.decode().strip()


async def open_office(tmp_path: Path, url: str) -> Office:
    need_office()
    process = await asyncio.create_subprocess_exec(
        "/usr/bin/python3",
        str(CLIENT),
        str(tmp_path),
        url,
        EDIT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    return Office(process)


async def text_of(served: Served, artifact_id: str, version: int) -> str:
    ws = await served.dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return await served.dav.api.files.text(ws, artifact_id, version)


def order(methods: list[str], *wanted: str) -> bool:
    """Return whether ``wanted`` appear in ``methods`` in this order (others between)."""
    position = 0
    for method in methods:
        if position < len(wanted) and method == wanted[position]:
            position += 1
    return position == len(wanted)


async def test_libreoffice_opens_locks_saves_and_unlocks_as_a_check_out_and_check_in(
    served: Served, tmp_path: Path
) -> None:
    api = served.dav.api
    artifact_id = await api.upload(build_docx(["The first paragraph."]))
    url = served.base + await served.dav.link(artifact_id)
    office = await open_office(tmp_path, url)
    try:
        assert await office.hear() == "loaded"
        ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
        lease = await api.files.lease(ws, artifact_id)
        assert lease is not None
        assert lease.holder.endswith(":user:alice")
        agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="bob"))
        as_agent = await api.workspaces.open("t1", WORKSPACE, actor=agent)
        with pytest.raises(ArtifactBusy, match="user:alice"):
            await api.files.edit(
                as_agent, artifact_id, base_version=1, commands=[AppCommand(command="caret.docEnd")]
            )
        assert await office.say("edit") == "stored"
        assert await office.say("close") == "closed"
    finally:
        await office.process.wait()
    methods = served.methods()
    assert order(methods, "OPTIONS", "PROPFIND", "GET", "LOCK", "PUT", "UNLOCK"), methods
    assert [
        status for method, _, status in served.requests if method in ("LOCK", "PUT", "UNLOCK")
    ] == [
        200,
        204,
        204,
    ]
    revisions = await ws.revisions(artifact_id)
    assert [(r.version, r.actor.participant) for r in revisions] == [
        (1, "user:alice"),
        (2, "user:alice"),
    ]
    assert EDIT.strip() in await text_of(served, artifact_id, 2)
    assert await api.files.lease(ws, artifact_id) is None
    assert await api.files.checkouts.open_on(SCOPE, artifact_id) == []


async def test_libreoffice_s_save_after_someone_else_s_revision_is_kept_as_a_proposal(
    served: Served, tmp_path: Path
) -> None:
    api = served.dav.api
    artifact_id = await api.upload(build_docx(["The first paragraph."]))
    agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice"))
    as_agent = await api.workspaces.open("t1", WORKSPACE, actor=agent)
    suggested = await api.files.edit(
        as_agent,
        artifact_id,
        base_version=1,
        commands=[AppCommand(command="edit.replaceAll", params={"text": "first", "with": "1st"})],
    )
    proposal_id = suggested.model_dump()["proposal_id"]
    office = await open_office(tmp_path, served.base + await served.dav.link(artifact_id))
    try:
        assert await office.hear() == "loaded"
        # Bob accepts the assistant's suggestion while the document is open in LibreOffice:
        # accepting a proposal is not fenced by a lease, so the file moves on under the lock.
        bob = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="bob"))
        await bob.commit(RespondToProposal(proposal_id=proposal_id, decision="accept"))
        assert (await office.say("edit")).startswith("stored")
        assert await office.say("close") == "closed"
    finally:
        await office.process.wait()
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert [r.actor.participant for r in await ws.revisions(artifact_id)] == [
        "user:alice",
        "user:bob",
    ]
    assert "1st" in await text_of(served, artifact_id, 2)
    (kept,) = await ws.proposals()
    assert kept.proposed_by.participant == "user:alice"
    assert "moved to version 2" in (kept.rationale or "")
    assert await api.files.lease(ws, artifact_id) is None


async def run(
    program: str, *args: str, stdin: bytes = b"", cwd: Path | None = None, **env: str
) -> str:
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env={**os.environ, "HOME": str(cwd or Path.cwd()), **env},
    )
    out, _ = await asyncio.wait_for(process.communicate(stdin), 120)
    return out.decode(errors="replace")


async def test_cadaver_opens_locks_puts_unlocks_and_reads_the_new_etag(
    served: Served, tmp_path: Path
) -> None:
    cadaver = need("cadaver")
    api = served.dav.api
    artifact_id = await api.upload(build_docx(["The first paragraph."]))
    link = await served.dav.link(artifact_id)
    edited = tmp_path / "edited.docx"
    edited.write_bytes(build_docx(["The paragraph cadaver put."]))
    script = (
        "ls\n"
        "lock contract.docx\n"
        f"put {edited} contract.docx\n"
        "unlock contract.docx\n"
        "set namespace DAV:\n"
        "propget contract.docx getetag\n"
        "quit\n"
    )
    out = await run(
        cadaver,
        served.base + link.removesuffix("contract.docx"),
        stdin=script.encode(),
        cwd=tmp_path,
    )
    assert "contract.docx" in out
    assert "Locking `contract.docx': succeeded." in out, out
    assert "succeeded." in out.split("Uploading", 1)[1].split("\n", 1)[0], out
    assert "Unlocking `contract.docx': succeeded." in out, out
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    _, manifest = await api.files.manifest(ws, artifact_id)
    assert [r.actor.participant for r in await ws.revisions(artifact_id)] == ["user:alice"] * 2
    assert manifest.content.sha256 in out
    assert order(served.methods(), "PROPFIND", "LOCK", "PUT", "UNLOCK", "PROPFIND")
    assert await api.files.lease(ws, artifact_id) is None


LITMUS_SUMMARY = re.compile(r"<- summary for `(\w+)': of (\d+) tests run: (\d+) passed")


async def test_litmus_stops_where_a_versioned_store_refuses_to_make_a_scratch_collection(
    served: Served, tmp_path: Path
) -> None:
    litmus = need("litmus")
    artifact_id = await served.dav.api.upload()
    collection = served.base + (await served.dav.link(artifact_id)).removesuffix("contract.docx")
    out = await run(litmus, collection, cwd=tmp_path, TESTS="basic props locks")
    assert "init.................. pass" in out
    assert "Could not create new collection" in out
    assert "405 Method Not Allowed" in out
    assert LITMUS_SUMMARY.search(out) is not None
    documented = (Path(__file__).parents[2] / "docs" / "webdav.md").read_text()
    assert "405 Method Not Allowed" in documented
