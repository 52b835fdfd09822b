"""Real WebDAV clients against the served surface: LibreOffice, cadaver and litmus (ADR-0018).

LibreOffice (Debian's, headless, driven over UNO by ``libreoffice_dav.py`` under the system
Python) opens a capability link: it locks, reads, saves under its lock and unlocks, and the test
asserts the requests, the revision by that person, the lease while open and after, and an
agent's edit refused as busy meanwhile; then again with someone else's revision while it was
open, kept as a proposal. cadaver is scripted (open, lock, put, unlock, propget). litmus runs
its five suites, signed in with HTTP Basic, past its scratch MKCOL (answered in front of the
surface) against a workspace's files; the test asserts its exact passes and failures, each
failure refused on purpose as ``docs/webdav.md`` lists. Each client skips with the reason where
it is absent (CI has them all).
"""

import asyncio
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from artifactr.core import Actor, AgentActor, RespondToProposal, UserActor
from artifactr.workspace import Scope
from fastapi import FastAPI

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.webdav import basic_actor, webdav_router
from tests.documents import build_docx
from tests.fastapi.conftest import WORKSPACE, Dav, Served, serving
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


# ─── litmus ───────────────────────────────────────────────────────────────────

SCRATCH = "/dav/workspaces/litmus/"
"""The collection litmus makes first: a workspace's, which exists already."""

LITMUS_FILES = ("lockme", "notlocked", "prop")
"""The files litmus's suites PUT first and then work on, uploaded as files are made here."""

LITMUS: dict[str, tuple[int, int, set[str], set[str]]] = {
    # suite: (tests run, passed, the passes, the failures); every failure is on purpose
    # (docs/webdav.md says why, test by test).
    "basic": (
        12,
        7,
        {"init", "begin", "options", "put_no_parent", "delete_null", "mkcol_no_parent", "finish"},
        {"put_get", "put_get_utf8_segment", "delete_fragment", "mkcol", "mkcol_with_body"},
    ),
    "copymove": (
        10,
        5,
        {"init", "begin", "copy_cleanup", "move_cleanup", "finish"},
        {"copy_init", "copy_coll", "copy_shallow", "move", "move_coll"},
    ),
    "props": (
        12,
        9,
        {
            *("init", "begin", "propfind_invalid", "propfind_invalid2", "propfind_d0"),
            *("propextended", "propwformed", "propcleanup", "finish"),
        },
        {"propinit", "propmanyns"},
    ),
    "locks": (
        28,
        19,
        {
            *("init", "begin", "options", "precond", "init_locks", "lock_excl", "discover"),
            *("refresh", "notowner_modify", "notowner_lock", "cond_put", "fail_cond_put"),
            *("cond_put_with_not", "cond_put_corrupt_token", "unlock"),
            *("fail_cond_put_unlocked", "finish"),
        },
        {
            *("put", "owner_modify", "copy", "complex_cond_put", "fail_complex_cond_put"),
            *("lock_shared", "prep_collection", "lock_collection", "unmapped_lock"),
        },
    ),
    "http": (4, 4, {"init", "begin", "expect100", "finish"}, set()),
}
LITMUS_TEST = re.compile(r"\b(\d+)\. (\w+)\.* ")
LITMUS_OUTCOME = re.compile(r"\b(\d+)\. \w+\.* (FAIL|SKIPPED)\b")
LITMUS_SUMMARY = re.compile(r"<- summary for `(\w+)': of (\d+) tests run: (\d+) passed")


def scratch(app: Any) -> Any:
    """Answer litmus's ``MKCOL`` of its scratch collection as made; pass all else to ``app``.

    litmus makes a collection for its tests before each suite and stops if it can't. The
    surface refuses MKCOL on purpose (a workspace is its one collection), so this answers
    that one request, for a workspace's collection that exists already; every other request,
    the workspace's own included, is the surface's.
    """

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (scope["method"], scope["path"]) == ("MKCOL", SCRATCH):
            await send({"type": "http.response.start", "status": 201, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return answer


def litmus_results(out: str) -> dict[str, tuple[int, int, set[str], set[str]]]:
    """Return each suite's tests run, passes, passed tests and failed tests, from its output."""
    found: dict[str, tuple[int, int, set[str], set[str]]] = {}
    for section in out.split("-> running `")[1:]:
        suite = section.split("'", 1)[0]
        summary = LITMUS_SUMMARY.search(section)
        assert summary is not None, section
        tests = dict(LITMUS_TEST.findall(section))
        outcomes = dict(LITMUS_OUTCOME.findall(section))
        passes = {name for number, name in tests.items() if number not in outcomes}
        failed = {tests[number] for number, outcome in outcomes.items() if outcome == "FAIL"}
        run, passed = int(summary.group(2)), int(summary.group(3))
        found[suite] = (run, passed, passes, failed)
    return found


async def test_litmus_runs_its_suites_and_fails_only_what_is_refused_on_purpose(
    dav: Dav, tmp_path: Path
) -> None:
    litmus = need("litmus")
    api = dav.api
    for name in LITMUS_FILES:
        await api.upload(build_docx([f"The file litmus calls {name}."]), name, "litmus")
    htdocs = tmp_path / "htdocs"
    htdocs.mkdir()
    (htdocs / "foo").write_bytes(build_docx(["What litmus puts."]))

    async def check(user: str, password: str) -> tuple[str, Actor] | None:
        return ("t1", UserActor(id=user, name=user.title())) if password == "litmus" else None

    app = FastAPI()
    app.include_router(
        webdav_router(
            api.files,
            api.workspaces,
            resolve_actor=basic_actor(check, require_tls=False),
            clock=api.clock,
        )
    )
    requests: list[tuple[str, str, int]] = []
    async with serving(scratch(app), requests) as base:
        out = await run(
            litmus,
            "--keep-going",
            f"{base}/dav/workspaces/",
            "alice",
            "litmus",
            cwd=tmp_path,
            TESTS=" ".join(LITMUS),
            HTDOCS=str(htdocs),
        )
    assert litmus_results(out) == LITMUS, out
    scratched = [(method, path) for method, path, _ in requests if path == SCRATCH]
    assert scratched.count(("MKCOL", SCRATCH)) == len(LITMUS), "one answer per suite's begin"
    assert any(status == 401 for _, _, status in requests), "it signed in when asked"
    # Its saves under its lock are one revision by Alice; its lock is gone; nothing else moved.
    ws = await api.workspaces.open("t1", "litmus", actor=UserActor(id="alice"))
    files = {a.data.name: a.id for a in await ws.artifacts(NativeFile)}
    assert sorted(files) == sorted(LITMUS_FILES)
    revisions = await ws.revisions(files["lockme"])
    assert [r.actor.participant for r in revisions] == ["user:alice", "user:alice"]
    for name in ("notlocked", "prop"):
        assert len(await ws.revisions(files[name])) == 1
    for artifact_id in files.values():
        assert await api.files.lease(ws, artifact_id) is None
    documented = (Path(__file__).parents[2] / "docs" / "webdav.md").read_text()
    for suite, (tests_run, passed, _, failed) in LITMUS.items():
        summary = f"<- summary for `{suite}': of {tests_run} tests run: {passed} passed, "
        assert f"{summary}{tests_run - passed} failed" in documented
        for name in failed:
            assert f"`{name}`" in documented, name
