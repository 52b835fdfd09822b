"""Who may do what to a lock, across the router, WOPI and WebDAV: a hypothesis state machine.

Eddie and Erin may edit, Rita may only read (issue 38, ADR-0023). In any order they check out,
check in and discard through the files router; Lock, RefreshLock, Unlock, UnlockAndRelock,
PutFile and GetLock over WOPI; and LOCK, PUT and UNLOCK over WebDAV, presenting their own
locks, each other's, and the WebDAV tokens of others; meanwhile time passes beyond a lease.
The app is the real one (the three routers over httpx's ASGI transport, on SQLite).

After every step, who may have changed what:

- Rita changes nothing: no lease, session, revision or proposal moves, and she is refused
  (403) every operation that takes, refreshes, swaps, saves under or ends a lock;
- nobody acts inside another person's WebDAV lock: presenting someone else's token changes
  nothing, over WebDAV (403) or WOPI (409, no lock shown); GetLock never shows a WebDAV token;
- every revision and proposal a step made is the stepper's own;
- no save is lost: every save answered as stored is the head or a pending proposal.
"""

import asyncio
import hashlib
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, ClassVar

import pytest
from artifactr.workspace import Workspace
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from artifactr.files.core.leases import scope_of
from artifactr.files.fastapi.webdav import webdav_router
from artifactr.files.native import EDITOR_TTL
from tests.databases import sql_engine
from tests.wopi import (
    EDDIE,
    ERIN,
    RITA,
    WORKSPACE,
    Host,
    build_host,
    document,
    in_process,
    resolve_actor,
)

PEOPLE = {"eddie": EDDIE, "erin": ERIN, "rita": RITA}
EDITORS = ("eddie", "erin")
WHO = st.sampled_from(sorted(PEOPLE))
WOPI_LOCKS = st.sampled_from(["W1", "W2"])
REFUSED = (403, 409, 412, 423)
"""Someone else's token, live (403) or of a session that ended (no such lock): refused."""
LOCKINFO = (
    b'<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:">'
    b"<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>"
    b"</D:lockinfo>"
)

Snapshot = tuple[Any, ...]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LockRights(RuleBasedStateMachine):
    """Two editors and a viewer on one file, over every surface, in any order."""

    loop: ClassVar[asyncio.AbstractEventLoop]
    host: ClassVar[Host]

    def __init__(self) -> None:
        super().__init__()
        self.artifact_id = ""
        self.name = ""
        self.count = 0
        self.tokens: dict[str, str] = {}
        """Each person's last WebDAV token."""
        self.checkouts: dict[str, str] = {}
        """Each person's last check-out through the router."""
        self.saved: list[tuple[str, str | None]] = []
        """Every save answered as stored: its digest, and the proposal it became if one."""

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def ws(self, who: str = "eddie") -> Workspace:
        return self.run(self.host.ws(PEOPLE[who]))

    def body(self) -> bytes:
        self.count += 1
        return document(f"Save {self.count} of the contract.")

    @initialize()
    def start(self) -> None:
        # A name of its own: WebDAV finds a file by name, and every example shares one workspace.
        self.name = f"contract-{uuid.uuid4().hex}.docx"
        self.artifact_id = self.run(self.host.upload(document("Draft"), name=self.name))

    # ─── what is stored, and who changed it ───────────────────────────────────

    def snapshot(self) -> Snapshot:
        async def read() -> Snapshot:
            ws = await self.host.ws(EDDIE)
            files = self.host.files
            lease = await files.lease(ws, self.artifact_id)
            records = await files.checkouts.open_on(scope_of(ws), self.artifact_id)
            revisions = await ws.revisions(self.artifact_id)
            proposals = [p for p in await ws.proposals() if p.artifact_id == self.artifact_id]
            return (
                None if lease is None else (lease.holder, lease.expires_at),
                tuple((r.id, r.lock, r.expires_at, r.base_version, r.outcome) for r in records),
                tuple((r.version, r.actor.participant) for r in revisions),
                tuple(sorted((p.id, p.proposed_by.participant, p.status) for p in proposals)),
            )

        return self.run(read())

    def step(self, who: str, act: Any) -> Any:
        """Run one step as ``who``; check it changed only what ``who`` may change."""
        before = self.snapshot()
        answer = act()
        after = self.snapshot()
        if who == "rita":
            assert after == before, "a viewer changed something"
        me = f"user:{who}"
        assert {actor for _, actor in after[2][len(before[2]) :]} <= {me}
        assert {p[1] for p in set(after[3]) - set(before[3]) if p[2] == "pending"} <= {me}
        return answer

    def unchanged_by(self, act: Any) -> Any:
        before = self.snapshot()
        answer = act()
        assert self.snapshot() == before, "someone acted inside another person's lock"
        return answer

    def kept(self, data: bytes, proposal_id: str | None) -> None:
        """A save answered as stored: the head now, or a proposal."""
        if proposal_id is None:
            ws = self.ws()
            _, head = self.run(self.host.files.manifest(ws, self.artifact_id))
            assert head.content.sha256 == _digest(data), (
                "a save answered as applied is not the head"
            )
        self.saved.append((_digest(data), proposal_id))

    # ─── the files router ─────────────────────────────────────────────────────

    def files_url(self, tail: str = "") -> str:
        return f"/workspaces/{WORKSPACE}/files/{self.artifact_id}{tail}"

    @rule(who=WHO)
    def check_out(self, who: str) -> None:
        answer = self.step(
            who,
            lambda: self.run(
                self.host.http.post(self.files_url("/checkouts"), headers={"x-user": who})
            ),
        )
        if who == "rita":
            assert answer.status_code == 403
        if answer.status_code == 200:
            self.checkouts[who] = answer.json()["id"]

    @rule(who=WHO)
    def check_in(self, who: str) -> None:
        checkout = self.checkouts.get(who)
        if checkout is None:
            return
        data = self.body()
        answer = self.step(
            who,
            lambda: self.run(
                self.host.http.post(
                    self.files_url(f"/checkouts/{checkout}/check-in"),
                    content=data,
                    headers={"x-user": who},
                )
            ),
        )
        if answer.status_code == 200:
            self.kept(data, answer.json().get("proposal_id"))

    @rule(who=WHO, whose=st.sampled_from(EDITORS))
    def discard(self, who: str, whose: str) -> None:
        checkout = self.checkouts.get(whose)
        if checkout is None:
            return
        answer = self.step(
            who,
            lambda: self.run(
                self.host.http.delete(
                    self.files_url(f"/checkouts/{checkout}"), headers={"x-user": who}
                )
            ),
        )
        if who == "rita":
            assert answer.status_code in (403, 404)

    # ─── WOPI ─────────────────────────────────────────────────────────────────

    def wopi(self, who: str, override: str, **headers: str) -> Any:
        return self.run(self.host.call(self.artifact_id, override, person=PEOPLE[who], **headers))

    @rule(who=WHO, lock=WOPI_LOCKS)
    def wopi_lock(self, who: str, lock: str) -> None:
        answer = self.step(who, lambda: self.wopi(who, "LOCK", X_WOPI_Lock=lock))
        assert answer.status_code in ((403,) if who == "rita" else (200, 409))

    @rule(who=WHO, lock=WOPI_LOCKS)
    def wopi_refresh(self, who: str, lock: str) -> None:
        answer = self.step(who, lambda: self.wopi(who, "REFRESH_LOCK", X_WOPI_Lock=lock))
        assert answer.status_code in ((403,) if who == "rita" else (200, 409))

    @rule(who=WHO, lock=WOPI_LOCKS)
    def wopi_unlock(self, who: str, lock: str) -> None:
        answer = self.step(who, lambda: self.wopi(who, "UNLOCK", X_WOPI_Lock=lock))
        assert answer.status_code in ((403,) if who == "rita" else (200, 409))

    @rule(who=WHO, old=WOPI_LOCKS, new=WOPI_LOCKS)
    def wopi_relock(self, who: str, old: str, new: str) -> None:
        answer = self.step(who, lambda: self.wopi(who, "LOCK", X_WOPI_Lock=new, X_WOPI_OldLock=old))
        assert answer.status_code in ((403,) if who == "rita" else (200, 409))

    @rule(who=WHO, lock=WOPI_LOCKS)
    def wopi_put(self, who: str, lock: str) -> None:
        data = self.body()
        answer = self.step(
            who,
            lambda: self.run(
                self.host.call(
                    self.artifact_id,
                    "PUT",
                    contents=True,
                    person=PEOPLE[who],
                    body=data,
                    X_WOPI_Lock=lock,
                )
            ),
        )
        if who == "rita":
            assert answer.status_code == 403
        elif answer.status_code == 200:
            self.kept(data, None)
        elif answer.status_code == 409 and "proposal_id" in answer.text:
            self.kept(data, answer.json()["proposal_id"])
        else:
            assert answer.status_code == 409, answer.text

    @rule(who=WHO)
    def wopi_get_lock(self, who: str) -> None:
        answer = self.step(who, lambda: self.wopi(who, "GET_LOCK"))
        if who == "rita":
            assert answer.status_code == 403
        else:
            assert not answer.headers["X-WOPI-Lock"].startswith("opaquelocktoken:")

    @rule(who=st.sampled_from(EDITORS), whose=st.sampled_from(EDITORS))
    def wopi_with_a_webdav_token(self, who: str, whose: str) -> None:
        token = self.tokens.get(whose)
        if token is None or who == whose:
            return
        for override in ("UNLOCK", "REFRESH_LOCK", "LOCK"):
            answer = self.unchanged_by(
                lambda override=override: self.wopi(who, override, X_WOPI_Lock=token)
            )
            assert (answer.status_code, answer.headers["X-WOPI-Lock"]) == (409, "")

    # ─── WebDAV ───────────────────────────────────────────────────────────────

    def dav(self, method: str, who: str, **options: Any) -> Any:
        url = f"/dav/workspaces/{WORKSPACE}/{self.name}"
        headers = {"x-user": who, **options.pop("headers", {})}
        return self.run(self.host.http.request(method, url, headers=headers, **options))

    @rule(who=WHO)
    def dav_lock(self, who: str) -> None:
        answer = self.step(who, lambda: self.dav("LOCK", who, content=LOCKINFO))
        assert answer.status_code in ((403,) if who == "rita" else (200, 423))
        if answer.status_code == 200:
            self.tokens[who] = answer.headers["Lock-Token"].strip("<>")

    @rule(who=WHO, whose=st.sampled_from(EDITORS))
    def dav_put(self, who: str, whose: str) -> None:
        token = self.tokens.get(whose)
        if token is None:
            return
        data = self.body()

        def act() -> Any:
            return self.dav("PUT", who, content=data, headers={"If": f"(<{token}>)"})

        if who != whose:
            assert self.unchanged_by(act).status_code in REFUSED
            return
        answer = self.step(who, act)
        if answer.status_code == 204:
            self.kept(data, answer.headers.get("X-Artifactr-Proposal"))

    @rule(who=WHO, whose=st.sampled_from(EDITORS))
    def dav_refresh(self, who: str, whose: str) -> None:
        token = self.tokens.get(whose)
        if token is None:
            return
        headers = {"If": f"(<{token}>)", "Timeout": "Second-600"}

        def act() -> Any:
            return self.dav("LOCK", who, headers=headers)

        if who != whose:
            assert self.unchanged_by(act).status_code in REFUSED
            return
        self.step(who, act)

    @rule(who=WHO, whose=st.sampled_from(EDITORS))
    def dav_unlock(self, who: str, whose: str) -> None:
        token = self.tokens.get(whose)
        if token is None:
            return

        def act() -> Any:
            return self.dav("UNLOCK", who, headers={"Lock-Token": f"<{token}>"})

        if who != whose:
            assert self.unchanged_by(act).status_code in REFUSED
            return
        self.step(who, act)

    @rule()
    def time_passes(self) -> None:
        self.host.clock.advance(EDITOR_TTL)

    # ─── after every step ─────────────────────────────────────────────────────

    @invariant()
    def no_save_is_lost(self) -> None:
        if not self.artifact_id:
            return

        async def stored() -> tuple[str, set[str]]:
            ws = await self.host.ws(EDDIE)
            _, head = await self.host.files.manifest(ws, self.artifact_id)
            proposals = {p.id for p in await ws.proposals() if p.artifact_id == self.artifact_id}
            return head.content.sha256, proposals

        _, proposals = self.run(stored())
        for _, proposal_id in self.saved:
            if proposal_id is not None:
                assert proposal_id in proposals, "a save kept as a proposal was lost"


@pytest.mark.timeout(180)  # CPU-bound: under a minute alone, more when the machine is shared
def test_no_one_acts_inside_another_s_lock_and_no_save_is_lost(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()

    async def start() -> Host:
        engine = await stack.enter_async_context(sql_engine("sqlite", tmp_path))
        host = await build_host(engine)
        host.app.include_router(
            webdav_router(host.files, host.workspaces, resolve_actor=resolve_actor)
        )
        return await stack.enter_async_context(in_process(host))

    try:
        host = loop.run_until_complete(start())
        machine = type("OnSqlite", (LockRights,), {"loop": loop, "host": host})
        case = machine.TestCase
        case.settings = settings(
            max_examples=20,
            stateful_step_count=20,
            deadline=None,
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )
        case().runTest()
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()
