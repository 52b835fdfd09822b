"""WebDAV locks and saves in any order, against a model (ADR-0018): a hypothesis state machine.

Two people (Alice and Bob) LOCK a file, refresh their lock with its token, PUT with their
token, with none (and ``If-Match``), with a stale, foreign or made-up one, retry a PUT exactly,
UNLOCK with the right or a wrong token; meanwhile an agent edits, someone accepts a pending
proposal (which a lease does not fence), and time passes beyond a lease. The app is the real
one (both routers over httpx's ASGI transport, on SQLite, the test clock, FakeApp).

After every step: at most one lock holds the file and it is the one the model holds
(``current_lock``, the lease, ``lockdiscovery`` as Alice and as Bob in turn, with the token shown
to its holder only and the seconds left); the ETag is the digest of the last committed bytes and
``GET`` returns them; there is one revision per committed save (a retried PUT is never
doubled); the open sessions and the pending proposals are the model's (a save kept as a
proposal is never lost).
"""

import asyncio
import hashlib
import xml.etree.ElementTree as ET
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import httpx2
import pytest
from artifactr.core import AgentActor, PatchFailed, RespondToProposal, UserActor
from artifactr.sql import migrate
from artifactr.workspace import Workspace
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.leases import ArtifactBusy, scope_of
from artifactr.files.fastapi.webdav import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT
from artifactr.files.sql import migrate as migrate_files
from tests.clock import Clock
from tests.databases import sql_engine
from tests.documents import build_docx
from tests.fastapi.conftest import Dav, open_api, open_dav

D = "{DAV:}"
NAME = "contract.docx"
PEOPLE = ("alice", "bob")
LOCKINFO = (
    b'<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:">'
    b"<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>"
    b"<D:owner><D:href>an editor</D:href></D:owner></D:lockinfo>"
)
DISCOVER = (
    b'<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/><D:getetag/></D:prop></D:propfind>'
)
BODIES = tuple(build_docx([f"Save {n}: the first paragraph."]) for n in range(4))
"""What the people PUT; the file starts as the first."""
MADE_UP = "opaquelocktoken:00000000-0000-0000-0000-000000000000"
"""A token no LOCK gave."""
TIMEOUTS = ("Second-30", "Second-600", "Second-3600", "Infinite", None)
ADVANCES = (31, 97, 701, 4001)
"""Seconds time moves on by: sums of a few never land on a lease's exact end."""


def lease_for(timeout: str | None) -> timedelta:
    """The lease a LOCK's ``Timeout`` gets, as the router bounds it."""
    if timeout is None or not timeout.startswith("Second-"):
        return DEFAULT_TIMEOUT
    asked = timedelta(seconds=int(timeout.removeprefix("Second-")))
    return min(max(asked, MIN_TIMEOUT), MAX_TIMEOUT)


def etag_of(data: bytes) -> str:
    return f'"{hashlib.sha256(data).hexdigest()}"'


@dataclass
class Saved:
    """A save's outcome, kept by its session: a retry of the same file answers it again."""

    status: str
    version: int
    body: int
    proposal_id: str | None


@dataclass
class Session:
    """A lock: whose, on which version its saves apply, until when, and its last save."""

    token: str
    owner: str
    base: int
    expires: datetime
    open: bool = True
    last: Saved | None = None


@dataclass
class Pending:
    """A proposal: on which version, by whom, and which body (None: an agent's edit)."""

    base: int
    author: str
    body: int | None


@dataclass
class Put:
    """A PUT as sent, to send again."""

    who: str
    token: str | None
    if_match: str | None
    body: int


class DavSessions(RuleBasedStateMachine):
    """The model: the versions, the locks taken, the proposals pending."""

    loop: ClassVar[asyncio.AbstractEventLoop]
    dav: ClassVar[Dav]
    made: ClassVar[list[int]] = [0]

    def __init__(self) -> None:
        super().__init__()
        self.workspace = ""
        self.artifact_id = ""
        self.versions: list[bytes] = []
        self.keys: list[int | str] = []
        """Each version's body, or ``agent-N``: equal keys are equal files."""
        self.sessions: dict[str, Session] = {}
        self.tokens: list[str] = []
        self.pending: dict[str, Pending] = {}
        self.last_put: Put | None = None
        self.last_saved = False
        """Whether the last PUT was answered as a save (204)."""
        self.last_count = 0
        """How many versions there were after it."""
        self.looks = 0
        self.got = 0
        """How many versions there were when GET last read the file."""

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    @property
    def clock(self) -> Clock:
        clock = self.dav.api.clock
        assert clock is not None
        return clock

    async def ws(self, who: str) -> Workspace:
        return await self.dav.api.workspaces.open("t1", self.workspace, actor=UserActor(id=who))

    def live(self) -> Session | None:
        """The session whose lease holds the file now, if one does."""
        now = self.clock()
        held = [s for s in self.sessions.values() if s.open and s.expires > now]
        assert len(held) <= 1
        return held[0] if held else None

    def token(self, pick: int) -> str:
        """A token a LOCK gave, the newest first, or one none gave."""
        known = [*reversed(self.tokens), MADE_UP]
        return known[pick % len(known)]

    def sender(self, token: str, by_its_taker: bool) -> str:
        """Who sends a token: the person who took its lock, or the other one."""
        session = self.sessions.get(token)
        taker = PEOPLE[0] if session is None else session.owner
        return taker if by_its_taker else next(p for p in PEOPLE if p != taker)

    def locked_once(self) -> bool:
        return bool(self.tokens)

    def request(self, method: str, who: str, **options: Any) -> httpx2.Response:
        headers = {"x-user": who, **options.pop("headers", {})}
        url = self.dav.url(NAME, self.workspace)
        return self.run(self.dav.client.request(method, url, headers=headers, **options))

    def end_open_sessions(self) -> None:
        """A new lock ends the sessions whose lease lapsed (ADR-0017)."""
        for session in self.sessions.values():
            session.open = False

    # ─── rules ────────────────────────────────────────────────────────────────

    @initialize(
        suggested=st.booleans(), who=st.sampled_from(PEOPLE), timeout=st.sampled_from(TIMEOUTS)
    )
    def open_in_an_editor(self, suggested: bool, who: str, timeout: str | None) -> None:
        """Upload the file, maybe an agent suggests an edit, and someone opens it to edit."""
        # Each example works in a workspace of its own, so one database serves them all.
        self.made[0] += 1
        self.workspace = f"w{self.made[0]}"
        self.artifact_id = self.run(self.dav.api.upload(BODIES[0], workspace=self.workspace))
        self.versions, self.keys = [BODIES[0]], [0]
        if suggested:
            self.agent_edits()
        self.lock(who, timeout)

    @rule(who=st.sampled_from(PEOPLE), timeout=st.sampled_from(TIMEOUTS))
    def lock(self, who: str, timeout: str | None) -> None:
        headers = {} if timeout is None else {"Timeout": timeout}
        answer = self.request("LOCK", who, content=LOCKINFO, headers=headers)
        live = self.live()
        if live is not None:
            assert answer.status_code == 423, answer.text
            assert f"user:{live.owner}" in answer.text
            if who != live.owner:
                assert live.token not in answer.text, "another's token is never shown"
            return
        assert answer.status_code == 200, answer.text
        token = answer.headers["Lock-Token"].strip("<>")
        assert token not in self.sessions
        self.end_open_sessions()
        expires = self.clock() + lease_for(timeout)
        self.sessions[token] = Session(token, who, len(self.versions), expires)
        self.tokens.append(token)

    @precondition(locked_once)
    @rule(pick=st.integers(0, 7), by_its_taker=st.booleans(), timeout=st.sampled_from(TIMEOUTS))
    def refresh(self, pick: int, by_its_taker: bool, timeout: str | None) -> None:
        token = self.token(pick)
        who = self.sender(token, by_its_taker)
        headers = {"If": f"(<{token}>)"} | ({} if timeout is None else {"Timeout": timeout})
        answer = self.request("LOCK", who, headers=headers)
        session = self.sessions.get(token)
        if session is None or not session.open:
            assert answer.status_code == 412, answer.text
        elif session.owner != who:
            assert answer.status_code == 403, answer.text
        else:
            # A session whose lease lapsed is taken up again: no other lock ended it.
            assert answer.status_code == 200, answer.text
            assert "Lock-Token" not in answer.headers, "a refresh keeps the token"
            session.expires = self.clock() + lease_for(timeout)

    @precondition(locked_once)
    @rule(pick=st.integers(0, 7), by_its_taker=st.booleans(), body=st.integers(0, 3))
    def put_with_a_token(self, pick: int, by_its_taker: bool, body: int) -> None:
        token = self.token(pick)
        self.put(Put(self.sender(token, by_its_taker), token, None, body))

    @rule(
        who=st.sampled_from(PEOPLE),
        match=st.sampled_from(["none", "head", "stale"]),
        body=st.integers(0, 3),
    )
    def put_without_a_token(self, who: str, match: str, body: int) -> None:
        if_match = {"none": None, "head": etag_of(self.versions[-1]), "stale": '"0"'}[match]
        self.put(Put(who, None, if_match, body))

    @precondition(lambda self: self.last_put is not None)
    @rule()
    def put_again(self) -> None:
        """The last PUT, sent again as it was: a client retrying after a lost answer."""
        assert self.last_put is not None
        count = len(self.versions)
        moved = count != self.last_count  # the file moved since: the retry may apply anew
        saved = self.last_saved
        self.put(self.last_put)
        if saved and not moved:
            assert len(self.versions) == count, "a retried save is never a second revision"

    def put(self, sent: Put) -> None:
        self.last_put = sent
        try:
            self.sent(sent)
        finally:
            self.last_count = len(self.versions)

    def sent(self, sent: Put) -> None:
        headers = {} if sent.token is None else {"If": f"(<{sent.token}>)"}
        if sent.if_match is not None:
            headers["If-Match"] = sent.if_match
        answer = self.request("PUT", sent.who, content=BODIES[sent.body], headers=headers)
        self.last_saved = answer.status_code == 204
        live = self.live()
        if sent.token is None:
            if live is not None:
                assert answer.status_code == 423, answer.text
                assert "lock-token-submitted" in answer.text
                return
            if sent.if_match is None:
                assert answer.status_code == 428, answer.text
                return
            # A check-out and a save in one step: its lock ends the lapsed sessions first.
            self.end_open_sessions()
            if sent.if_match != etag_of(self.versions[-1]):
                assert answer.status_code == 412, answer.text
                return
            one_step = Session("", sent.who, len(self.versions), self.clock())
            self.check_saved(answer, one_step, sent.body)
            return
        session = self.sessions.get(sent.token)
        if session is None or not session.open:
            assert answer.status_code == 412, answer.text
        elif session.owner != sent.who:
            assert answer.status_code == 403, answer.text
        else:
            if session is not live:  # taken up again, its base where it was
                session.expires = self.clock() + DEFAULT_TIMEOUT
            self.check_saved(answer, session, sent.body)

    def check_saved(self, answer: httpx2.Response, session: Session, body: int) -> None:
        """Check a save's answer against the model's, and move the model on."""
        assert answer.status_code == 204, answer.text
        status = answer.headers["X-Artifactr-Outcome"]
        head = len(self.versions)
        if self.keys[-1] == body:
            assert status == "unchanged"
            assert answer.headers["ETag"] == etag_of(self.versions[-1])
            return
        last = session.last
        if last is not None and last.body == body:  # a retry: the same answer again
            assert status == last.status
            assert answer.headers.get("X-Artifactr-Proposal") == last.proposal_id
            return
        if session.base == head:
            assert status == "applied", "a save under the lock on its base is committed"
            self.versions.append(BODIES[body])
            self.keys.append(body)
            session.base = head + 1
            session.last = Saved("applied", head + 1, body, None)
            assert answer.headers["ETag"] == etag_of(BODIES[body])
            return
        assert status == "proposed", "a save after someone else's revision is kept"
        proposal_id = answer.headers["X-Artifactr-Proposal"]
        assert proposal_id not in self.pending
        self.pending[proposal_id] = Pending(head, session.owner, body)
        session.last = Saved("proposed", head, body, proposal_id)

    @precondition(locked_once)
    @rule(pick=st.integers(0, 7), by_its_taker=st.booleans())
    def unlock(self, pick: int, by_its_taker: bool) -> None:
        token = self.token(pick)
        who = self.sender(token, by_its_taker)
        answer = self.request("UNLOCK", who, headers={"Lock-Token": f"<{token}>"})
        session = self.sessions.get(token)
        if session is None or not session.open:
            assert answer.status_code == 409, answer.text
        elif session.owner != who:
            assert answer.status_code == 403, answer.text
        else:
            assert answer.status_code == 204, answer.text
            session.open = False

    @rule()
    def agent_edits(self) -> None:
        live = self.live()
        agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice"))
        commands = [
            AppCommand(command="caret.docEnd"),
            AppCommand(command="text.insert", params={"text": " An agent's line."}),
        ]

        async def edit() -> Any:
            ws = await self.dav.api.workspaces.open("t1", self.workspace, actor=agent)
            try:
                return await self.dav.api.files.edit(
                    ws, self.artifact_id, base_version=len(self.versions), commands=commands
                )
            except ArtifactBusy as busy:
                return busy

        outcome = self.run(edit())
        if isinstance(outcome, ArtifactBusy):
            assert live is not None, "an agent is refused only while a lock holds the file"
            assert f"user:{live.owner}" in str(outcome), "the refusal names the person"
            return
        assert live is None
        assert outcome.type == "proposed", "an agent's edit is a proposal"
        self.pending[outcome.proposal_id] = Pending(len(self.versions), "agent", None)

    @precondition(lambda self: bool(self.pending))
    @rule(pick=st.integers(0, 7))
    def accept(self, pick: int) -> None:
        """Someone who isn't its author accepts a pending proposal: no lease fences it."""
        proposal_id = sorted(self.pending)[pick % len(self.pending)]
        proposal = self.pending[proposal_id]
        who = "alice" if proposal.author == "bob" else "bob"

        async def accept() -> None:
            ws = await self.ws(who)
            await ws.commit(RespondToProposal(proposal_id=proposal_id, decision="accept"))

        if self.versions[proposal.base - 1] != self.versions[-1]:
            # Its patch tests the digest of the file it was made on: that file is gone.
            try:
                self.run(accept())
            except PatchFailed:
                return
            raise AssertionError("a proposal on a file that moved on was accepted")
        self.run(accept())
        del self.pending[proposal_id]
        if proposal.body is None:
            self.versions.append(self.run(self.read()))
            self.keys.append(f"agent-{len(self.versions)}")
        else:
            self.versions.append(BODIES[proposal.body])
            self.keys.append(proposal.body)

    async def read(self) -> bytes:
        ws = await self.ws("alice")
        return b"".join([chunk async for chunk in self.dav.api.files.content(ws, self.artifact_id)])

    @rule(seconds=st.sampled_from(ADVANCES))
    def time_passes(self, seconds: int) -> None:
        self.clock.advance(timedelta(seconds=seconds))

    # ─── invariants ──────────────────────────────────────────────────────────

    @invariant()
    def one_holder_one_revision_per_save_and_every_proposal_kept(self) -> None:
        if not self.artifact_id:
            return
        live = self.live()

        async def stored() -> tuple[str | None, str | None, set[str | None], int, set[str]]:
            ws = await self.ws("alice")
            files = self.dav.api.files
            lease = await files.lease(ws, self.artifact_id)
            # A token is its taker's alone: only they are shown it.
            taker = await self.ws("alice" if live is None else live.owner)
            current = await files.current_lock(taker, self.artifact_id)
            other = await self.ws("bob" if live is None or live.owner == "alice" else "alice")
            assert await files.current_lock(other, self.artifact_id) is None
            records = await files.checkouts.open_on(scope_of(ws), self.artifact_id)
            revisions = await ws.revisions(self.artifact_id)
            pending = {p.id for p in await ws.proposals() if p.artifact_id == self.artifact_id}
            holder = None if lease is None else lease.holder
            return holder, current, {r.lock for r in records}, len(revisions), pending

        holder, current, open_locks, revisions, pending = self.run(stored())
        assert current == (None if live is None else live.token)
        if live is None:
            assert holder is None
        else:
            assert holder is not None
            assert holder.endswith(f":user:{live.owner}")
        assert open_locks == {s.token for s in self.sessions.values() if s.open}
        assert revisions == len(self.versions)
        assert pending == set(self.pending)

    @invariant()
    def lockdiscovery_and_get_agree(self) -> None:
        if not self.artifact_id:
            return
        live = self.live()
        # The holder sees its token, anyone else the lock without it; no lock, no one sees one.
        # Alice and Bob look in turn, a step each, and the ETag is the head's digest each time.
        self.looks += 1
        who = PEOPLE[self.looks % 2]
        found = self.request("PROPFIND", who, content=DISCOVER, headers={"Depth": "0"})
        assert found.status_code == 207
        answer = ET.fromstring(found.content)
        assert answer.findtext(f".//{D}getetag") == etag_of(self.versions[-1])
        locks = list(answer.iter(f"{D}activelock"))
        if live is None:
            assert locks == []
        else:
            (active,) = locks
            assert f"user:{live.owner}" in (active.findtext(f"{D}owner") or "")
            left = int((live.expires - self.clock()).total_seconds())
            assert active.findtext(f"{D}timeout") == f"Second-{left}"
            shown = active.findtext(f"{D}locktoken/{D}href")
            assert shown == (live.token if who == live.owner else None)
        if self.got != len(self.versions):  # a new head: GET returns its bytes
            got = self.request("GET", who)
            assert got.status_code == 200
            assert got.content == self.versions[-1]
            assert got.headers["ETag"] == etag_of(self.versions[-1])
            self.got = len(self.versions)


@pytest.mark.timeout(180)  # CPU-bound: a minute or more when the machine is shared
def test_no_order_of_locks_saves_edits_and_time_loses_a_save_or_shares_a_lock(
    tmp_path: Path,
) -> None:
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()

    async def start() -> Dav:
        engine = await stack.enter_async_context(sql_engine("sqlite", tmp_path))
        await migrate(engine)
        await migrate_files(engine)
        return await open_dav(await open_api(engine, stack, clock=Clock()), stack)

    try:
        dav = loop.run_until_complete(start())
        machine = type("OnSqlite", (DavSessions,), {"loop": loop, "dav": dav})
        case = machine.TestCase
        # One database for every example (each in its own workspace): about 15 s alone. A
        # failure prints its steps as they ran: shrinking them would take minutes here.
        case.settings = settings(
            max_examples=25,
            stateful_step_count=20,
            deadline=None,
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )
        case().runTest()
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()
