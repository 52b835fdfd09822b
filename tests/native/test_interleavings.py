"""Interleavings: a hypothesis state machine over every way to write a native file.

Agents' edits, people's check-outs, extensions, check-ins and discards, direct edits through
artifactr's generic path, proposal acceptance and the clock moving, in any order, on memory,
SQLite and PostgreSQL; and at once: a check-in retried while it is in flight, a check-in racing
an extend or a discard of its check-out (ADR-0009), and a check-out asked for again and again
while someone else's edit or check-in commits and lets go (ADR-0015). At every step:

- no revision replaces content it was not based on (its test names the previous revision's digest);
- at most one live holder per artifact, and it is one the model knows about, and never a
  check-out that ended;
- a retried check-in answers what the first did, at once or later;
- a granted check-out's base is the head once it holds the file, never the version before;
- a stale check-in never overwrites newer content;
- every revision after the first begins with the digest test;
- accepting a stale proposal fails with ``PatchFailed``.
"""

import asyncio
import io
import itertools
import zipfile
from collections.abc import Awaitable
from contextvars import ContextVar
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from artifactr import UserActor
from artifactr.core import (
    EditArtifact,
    InvalidState,
    JsonPatch,
    NotFound,
    PatchFailed,
    RespondToProposal,
)
from artifactr.workspace import Scope
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
)

from artifactr.files import AppCommand, ArtifactBusy, ArtifactLease, Checkout, Leases, WordDocument
from artifactr.files.native import CheckedIn
from tests.databases import BACKENDS
from tests.native.conftest import AGENT, ALICE, BOB, World, chunks, make_env, sample_docx

PEOPLE = [ALICE, BOB]
ADMIN = UserActor(id="admin", name="Admin")
WORDS = ["Draft", "Final", "Signed", "Agreed"]


def rewritten(data: bytes, old: str, new: str) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            part = source.read(info)
            if info.filename == "word/document.xml":
                part = part.replace(old.encode(), new.encode())
            target.writestr(info, part)
    return out.getvalue()


async def attempt(call: Awaitable[Any]) -> Any:
    """Return what a call returns, or the exception it raises, to assert on afterwards."""
    try:
        return await call
    except Exception as error:
        return error


LAG: ContextVar[float] = ContextVar("LAG", default=0.0)
"""Seconds the lease store takes to answer an acquire, in the context that set it."""


class Lagging:
    """Leases that answer an acquire :data:`LAG` seconds late: a store a round trip away."""

    def __init__(self, leases: Leases) -> None:
        self._leases = leases

    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        await asyncio.sleep(LAG.get())
        return await self._leases.acquire(scope, artifact_id, holder, ttl)

    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        return await self._leases.current(scope, artifact_id)

    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        return await self._leases.release(scope, artifact_id, holder)


class Interleavings(RuleBasedStateMachine):
    """The model: what was committed, who checked out what, which proposals are pending."""

    checkouts = Bundle("checkouts")
    proposals = Bundle("proposals")
    backend = "memory"
    tmp_path = Path("/tmp")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.env_gen: Any = None
        self.env: World
        self.artifact_id = ""
        self.snapshots: dict[str, bytes] = {}  # checkout id -> what it downloaded
        self.holders: set[str] = set()  # every holder the model ever granted

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    @initialize()
    def start(self) -> None:
        self.env_gen = make_env(self.backend, self.tmp_path)
        self.env = self.run(anext(self.env_gen))
        self.env.files.leases = Lagging(self.env.leases)
        self.artifact_id = self.run(self.env.upload(sample_docx()))

    def teardown(self) -> None:
        if self.env_gen is not None:
            self.run(self.env_gen.aclose())
        self.loop.close()

    async def head(self) -> tuple[int, WordDocument]:
        doc = await (await self.env.ws()).get(WordDocument, self.artifact_id)
        assert isinstance(doc.data, WordDocument)
        return doc.version, doc.data

    async def bytes_of(self, version: int | None = None) -> bytes:
        ws = await self.env.ws()
        parts = [c async for c in self.env.files.content(ws, self.artifact_id, version)]
        return b"".join(parts)

    # ─── rules ────────────────────────────────────────────────────────────────

    @rule(target=proposals, old=st.sampled_from(WORDS), new=st.sampled_from(WORDS))
    def agent_edits(self, old: str, new: str) -> Any:
        async def go() -> Any:
            version, _ = await self.head()
            command = AppCommand(command="edit.replaceAll", params={"text": old, "with": new})
            ws = await self.env.ws(AGENT)
            edit = self.env.files.edit(
                ws, self.artifact_id, base_version=version, commands=[command]
            )
            outcome = await attempt(edit)
            if isinstance(outcome, ArtifactBusy):
                assert outcome.lease is None or outcome.lease.holder in self.holders
                return None
            return outcome.proposal_id if outcome.type == "proposed" else None

        return self.run(go())

    @rule(person=st.sampled_from(PEOPLE), new=st.sampled_from(WORDS))
    def person_edits(self, person: UserActor, new: str) -> None:
        async def go() -> None:
            version, _ = await self.head()
            command = AppCommand(command="edit.replaceAll", params={"text": "a", "with": new})
            ws = await self.env.ws(person)
            edit = self.env.files.edit(
                ws, self.artifact_id, base_version=version, commands=[command]
            )
            outcome = await attempt(edit)
            assert not isinstance(outcome, Exception) or isinstance(outcome, ArtifactBusy)

        self.run(go())

    @rule(target=checkouts, person=st.sampled_from(PEOPLE))
    def check_out(self, person: UserActor) -> Any:
        async def go() -> Any:
            ws = await self.env.ws(person)
            checkout = await attempt(self.env.files.check_out(ws, self.artifact_id))
            if isinstance(checkout, ArtifactBusy):
                assert checkout.lease is None or checkout.lease.holder in self.holders
                return None
            self.holders.add(checkout.holder)
            self.snapshots[checkout.id] = await self.bytes_of(checkout.base_version)
            return checkout

        return self.run(go())

    @rule(
        target=checkouts,
        person=st.sampled_from(PEOPLE),
        writer=st.sampled_from(["edit", "check-in"]),
        lag=st.sampled_from([0.0, 0.001, 0.003]),
    )
    def check_out_racing(self, person: UserActor, writer: str, lag: float) -> Any:
        """A person asks to check out while someone else commits and lets go (ADR-0015)."""

        async def go() -> Any:
            other = await self.env.ws(next(p for p in PEOPLE if p != person))
            version, _ = await self.head()
            if writer == "edit":
                command = AppCommand(command="edit.replaceAll", params={"text": "a", "with": "e"})
                writing = self.env.files.edit(
                    other, self.artifact_id, base_version=version, commands=[command]
                )
            else:
                theirs = await attempt(self.env.files.check_out(other, self.artifact_id))
                if isinstance(theirs, ArtifactBusy):
                    return None
                self.holders.add(theirs.holder)
                upload = rewritten(await self.bytes_of(version), "Draft", "Raced")
                writing = self.env.files.check_in(other, theirs.id, chunks(upload))
            task = asyncio.ensure_future(attempt(writing))
            ws = await self.env.ws(person)
            LAG.set(lag)  # this person's leases are a round trip away; the writer's are not
            while True:  # pressing "check out" until the file is free, or the writer is done
                done = task.done()
                checkout = await attempt(self.env.files.check_out(ws, self.artifact_id))
                if not isinstance(checkout, ArtifactBusy) or done:
                    break
                await asyncio.sleep(0)
            await task
            if isinstance(checkout, ArtifactBusy):
                assert checkout.lease is None or checkout.lease.holder in self.holders
                return None
            # It holds the file: nobody has committed since it was granted, so the head now
            # is the head at grant time, and its base must be that head.
            version, head = await self.head()
            assert (checkout.base_version, checkout.base_sha256) == (version, head.content.sha256)
            self.holders.add(checkout.holder)
            self.snapshots[checkout.id] = await self.bytes_of(checkout.base_version)
            return checkout

        return self.run(go())

    @rule(checkout=checkouts)
    def extend(self, checkout: Checkout | None) -> None:
        if checkout is None:
            return

        async def go() -> None:
            ws = await self.env.ws(checkout.actor)
            outcome = await attempt(self.env.files.extend(ws, checkout.id))
            if isinstance(outcome, Exception):  # lapsed and taken, checked in or discarded
                assert isinstance(outcome, ArtifactBusy | InvalidState | NotFound)

        self.run(go())

    @rule(checkout=consumes(checkouts), new=st.sampled_from(WORDS))
    def check_in(self, checkout: Checkout | None, new: str) -> None:
        if checkout is None or checkout.id not in self.snapshots:
            return

        async def go() -> None:
            ws = await self.env.ws(checkout.actor)
            before_version, before = await self.head()
            upload = rewritten(self.snapshots.pop(checkout.id), "Draft", new + " by hand")
            result = await attempt(self.env.files.check_in(ws, checkout.id, chunks(upload)))
            assert not isinstance(result, Exception), result
            if result.status == "applied":
                # Never over newer content: the head was still the check-out's base.
                assert before_version == checkout.base_version
                assert await self.bytes_of() == upload
            elif result.status == "proposed":
                assert await self.head() == (before_version, before)

        self.run(go())

    @rule(checkout=consumes(checkouts), new=st.sampled_from(WORDS), copies=st.integers(2, 3))
    def retries_at_once(self, checkout: Checkout | None, new: str, copies: int) -> None:
        """A client sends the same check-in again while the first is in flight."""
        if checkout is None or checkout.id not in self.snapshots:
            return

        async def go() -> None:
            ws = await self.env.ws(checkout.actor)
            upload = rewritten(self.snapshots.pop(checkout.id), "Draft", new + " again")
            results = await asyncio.gather(
                *(
                    attempt(self.env.files.check_in(ws, checkout.id, chunks(upload)))
                    for _ in range(copies)
                )
            )
            assert all(isinstance(result, CheckedIn) for result in results), results
            assert len(set(results)) == 1, results
            later = await self.env.files.check_in(ws, checkout.id, chunks(upload))
            assert later == results[0]

        self.run(go())

    @rule(
        checkout=consumes(checkouts),
        new=st.sampled_from(WORDS),
        other=st.sampled_from(["extend", "discard", "discard by someone else"]),
    )
    def check_in_racing(self, checkout: Checkout | None, new: str, other: str) -> None:
        """A check-in races an extend or a discard of its own check-out."""
        if checkout is None or checkout.id not in self.snapshots:
            return

        async def go() -> None:
            ws = await self.env.ws(checkout.actor)
            upload = rewritten(self.snapshots.pop(checkout.id), "Draft", new + " raced")
            if other == "extend":
                racer = self.env.files.extend(ws, checkout.id)
            else:
                by = ws if other == "discard" else await self.env.ws(ADMIN)
                racer = self.env.files.discard(by, checkout.id)
            result, raced = await asyncio.gather(
                attempt(self.env.files.check_in(ws, checkout.id, chunks(upload))),
                attempt(racer),
            )
            assert isinstance(result, CheckedIn), result
            assert raced is None or isinstance(raced, Checkout | InvalidState | ArtifactBusy)
            lease = await self.env.files.lease(ws, self.artifact_id)
            assert lease is None or lease.holder != checkout.holder
            assert await self.env.files.check_in(ws, checkout.id, chunks(upload)) == result

        self.run(go())

    @rule(checkout=consumes(checkouts))
    def discard(self, checkout: Checkout | None) -> None:
        if checkout is None:
            return

        async def go() -> None:
            ws = await self.env.ws(checkout.actor)
            outcome = await attempt(self.env.files.discard(ws, checkout.id))
            assert outcome is None or isinstance(outcome, NotFound)
            self.snapshots.pop(checkout.id, None)

        self.run(go())

    @rule(name=st.sampled_from(["a.docx", "b.docx", "renamed.docx"]))
    def generic_edit(self, name: str) -> None:
        """A careful client's direct edit over artifactr's generic path: test, then rename."""

        async def go() -> None:
            version, data = await self.head()
            ops = (
                {"op": "test", "path": "/content/sha256", "value": data.content.sha256},
                {"op": "replace", "path": "/name", "value": name},
            )
            command = EditArtifact(
                artifact_id=self.artifact_id, base_version=version, patch=JsonPatch(ops=ops)
            )
            outcome = await attempt((await self.env.ws()).commit(command))
            if isinstance(outcome, Exception):  # the same name again
                assert isinstance(outcome, PatchFailed)
                assert "unchanged" in outcome.message

        self.run(go())

    @rule(proposal=consumes(proposals))
    def accept(self, proposal: str | None) -> None:
        if proposal is None:
            return

        async def go() -> None:
            ws = await self.env.ws(BOB)
            pending = await ws.proposal(proposal)
            tested = pending.change.model_dump(mode="json")["patch"]["ops"][0]["value"]
            _, head = await self.head()
            accept = RespondToProposal(proposal_id=proposal, decision="accept")
            outcome = await attempt(ws.commit(accept))
            if tested == head.content.sha256:
                assert outcome.type == "resolved"
            else:
                assert isinstance(outcome, PatchFailed)

        self.run(go())

    @rule(minutes=st.sampled_from([1, 30, 60 * 5, 60 * 9]))
    def time_passes(self, minutes: int) -> None:
        self.env.clock.advance(timedelta(minutes=minutes))

    # ─── invariants ───────────────────────────────────────────────────────────

    @invariant()
    def every_revision_tests_the_digest_it_replaced(self) -> None:
        async def go() -> None:
            revisions = await (await self.env.ws()).revisions(self.artifact_id)
            for before, after in itertools.pairwise(revisions):
                assert after.patch is not None
                first = after.patch.model_dump(mode="json")["ops"][0]
                assert first["op"] == "test"
                assert first["path"] == "/content/sha256"
                assert first["value"] == before.data["content"]["sha256"]

        self.run(go())

    @invariant()
    def at_most_one_live_holder_and_the_model_knows_it(self) -> None:
        async def go() -> None:
            lease = await self.env.files.lease(await self.env.ws(), self.artifact_id)
            if lease is not None:
                assert lease.holder in self.holders
                # A check-out that was checked in or discarded never holds the file.
                if lease.holder.startswith("checkout:"):
                    checkout_id = lease.holder.split(":")[1]
                    record = await self.env.checkouts.get(self.env.scope, checkout_id)
                    assert record is not None
                    assert record.state == "open"

        self.run(go())


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_interleaving_loses_or_overwrites_a_change(backend: str, tmp_path: Path) -> None:
    machine = type(
        "On" + backend.title(), (Interleavings,), {"backend": backend, "tmp_path": tmp_path}
    )
    case = machine.TestCase
    # Each example builds a fresh database: fewer on SQL, so the test stays well under a minute.
    examples = 20 if backend == "memory" else 5
    case.settings = settings(max_examples=examples, stateful_step_count=20, deadline=None)
    case().runTest()
