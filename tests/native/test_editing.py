"""An editor's session: its lock is a check-out, and it saves many times under it (ADR-0017).

On memory, SQLite and PostgreSQL: a lock holds the file as a check-out for the person, the same
lock again refreshes it, anyone else is refused as busy with the lock that holds it; each save
that changes something is a revision and moves the session's base, a save equal to the head is
unchanged, and a save after someone else's revision is kept as a proposal; unlock ends it.
"""

import asyncio
import io
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import Actor, EditArtifact, Forbidden, NotFound, ValidationFailed
from artifactr.workspace import Access, Workspace
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from artifactr.files import WordDocument
from artifactr.files.core.checkouts import Checkout, holder_of
from artifactr.files.core.errors import FileTooLarge, NotEnabled, UnsafeFile
from artifactr.files.core.integrations import integration_gate
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.core.revisions import revision_patch
from artifactr.files.native import EDITOR_TTL, MAX_LOCK, LockMismatch
from tests.native.conftest import AGENT, ALICE, BOB, World, chunks, make_env, sample_docx
from tests.native.test_native import REPLACE, read_all, with_part


def edited(data: bytes, word: bytes) -> bytes:
    body = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    return with_part(data, "word/document.xml", body.replace(b"Draft", word))


async def test_a_lock_is_a_check_out_for_the_person_with_the_lock_recorded(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1")
    assert (held.lock, held.actor, held.base_version, held.state) == ("L1", ALICE, 1, "open")
    assert held.expires_at == env.clock() + EDITOR_TTL
    assert await env.files.current_lock(ws, artifact_id) == "L1"
    lease = await env.files.lease(ws, artifact_id)
    assert lease is not None
    assert lease.holder == held.holder
    assert await env.files.open_checkouts(ws, artifact_id) == [held]


async def test_the_same_lock_again_refreshes_the_same_record(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    first = await env.files.lock(ws, artifact_id, lock="L1")
    env.clock.advance(timedelta(minutes=15))
    again = await env.files.lock(ws, artifact_id, lock="L1")
    assert again.id == first.id
    assert again.expires_at == env.clock() + EDITOR_TTL
    env.clock.advance(timedelta(minutes=20))
    refreshed = await env.files.refresh(ws, artifact_id, lock="L1", ttl=timedelta(minutes=5))
    assert refreshed.id == first.id
    assert refreshed.expires_at == env.clock() + timedelta(minutes=5)
    stored = await env.checkouts.get(env.scope, first.id)
    assert stored is not None
    assert stored.expires_at == refreshed.expires_at


async def test_another_lock_is_refused_with_the_lock_that_holds_the_file(env: World) -> None:
    artifact_id = await env.upload()
    held = await env.files.lock(await env.ws(), artifact_id, lock="L1")
    with pytest.raises(LockMismatch) as caught:
        await env.files.lock(await env.ws(BOB), artifact_id, lock="L2")
    assert caught.value.lock == "L1"
    assert caught.value.code == "lock_mismatch"
    assert caught.value.details()["holder"] == held.holder
    assert caught.value.details()["lock"] == "L1"
    for refused in (
        env.files.refresh(await env.ws(), artifact_id, lock="L2"),
        env.files.unlock(await env.ws(), artifact_id, lock="L2"),
        env.files.relock(await env.ws(), artifact_id, old="L2", new="L3"),
        env.files.save(await env.ws(), artifact_id, chunks(b"never read"), lock="L2"),
    ):
        with pytest.raises(LockMismatch) as caught:
            await refused
        assert caught.value.lock == "L1"


async def test_a_person_s_check_out_or_an_agent_s_edit_is_busy_without_a_lock(env: World) -> None:
    artifact_id = await env.upload()
    checkout = await env.files.check_out(await env.ws(BOB), artifact_id)
    with pytest.raises(ArtifactBusy) as caught:
        await env.files.lock(await env.ws(), artifact_id, lock="L1")
    assert not isinstance(caught.value, LockMismatch)
    assert caught.value.lease is not None
    assert caught.value.lease.holder == checkout.holder
    assert await env.files.current_lock(await env.ws(), artifact_id) is None
    with pytest.raises(LockMismatch) as mismatch:
        await env.files.unlock(await env.ws(), artifact_id, lock="L1")
    assert mismatch.value.lock is None
    assert mismatch.value.lease is not None


async def test_an_agent_s_edit_is_busy_while_an_editor_holds_the_lock(env: World) -> None:
    artifact_id = await env.upload()
    held = await env.files.lock(await env.ws(BOB), artifact_id, lock="L1")
    with pytest.raises(ArtifactBusy) as caught:
        await env.files.edit(await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE])
    assert caught.value.details()["holder"] == f"checkout:{held.id}:user:bob"
    assert caught.value.lease is not None
    assert caught.value.lease.expires_at == held.expires_at
    with pytest.raises(ArtifactBusy):
        await env.files.check_out(await env.ws(), artifact_id)


async def test_an_unlocked_file_is_refused_with_no_lock(env: World) -> None:
    artifact_id = await env.upload()
    with pytest.raises(LockMismatch) as caught:
        await env.files.unlock(await env.ws(), artifact_id, lock="L1")
    assert (caught.value.lock, caught.value.lease) == (None, None)
    assert str(caught.value) == f"artifact {artifact_id} is not locked"
    assert caught.value.details()["holder"] is None


async def test_lock_strings_are_ascii_of_one_to_1024_characters_stored_as_given(
    env: World,
) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    longest = '{"S":"' + "x" * (MAX_LOCK - 8) + '"}'
    assert len(longest) == MAX_LOCK
    held = await env.files.lock(ws, artifact_id, lock=longest)
    assert held.lock == longest
    assert await env.files.current_lock(ws, artifact_id) == longest
    for bad, kind in (
        ("", "missing"),
        ("x" * (MAX_LOCK + 1), "too_long"),
        ("verrou é", "not_ascii"),
    ):
        with pytest.raises(ValidationFailed) as caught:
            await env.files.lock(ws, artifact_id, lock=bad)
        assert caught.value.errors[0]["type"] == kind
    with pytest.raises(ValidationFailed):
        await env.files.relock(ws, artifact_id, old=longest, new="")
    assert await env.files.current_lock(ws, artifact_id) == longest


async def test_saves_are_revisions_as_the_person_and_the_check_out_stays(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws(BOB)
    held = await env.files.lock(ws, artifact_id, lock="L1")
    first = edited(data, b"First")
    saved = await env.files.save(ws, artifact_id, chunks(first), lock="L1", summary="autosave")
    assert (saved.status, saved.version) == ("applied", 2)
    second = edited(data, b"Second")
    saved = await env.files.save(ws, artifact_id, chunks(second), lock="L1")
    assert (saved.status, saved.version) == ("applied", 3)
    revisions = await ws.revisions(artifact_id)
    assert [revision.actor for revision in revisions[1:]] == [BOB, BOB]
    assert await read_all(env, artifact_id, 3) == second
    record = await env.checkouts.get(env.scope, held.id)
    assert record is not None
    assert (record.state, record.base_version) == ("open", 3)
    assert await env.files.current_lock(ws, artifact_id) == "L1"
    doc = await ws.get(WordDocument, artifact_id)
    assert doc.data.provenance.source == "check_in"
    ended = await env.files.unlock(ws, artifact_id, lock="L1")
    assert (ended.state, ended.ended_by) == ("checked_in", BOB)
    assert await env.files.lease(ws, artifact_id) is None
    assert await env.files.current_lock(ws, artifact_id) is None


async def test_a_save_equal_to_the_head_is_unchanged_and_a_retry_is_never_doubled(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    unchanged = await env.files.save(ws, artifact_id, chunks(data), lock="L1")
    assert (unchanged.status, unchanged.version) == ("unchanged", 1)
    body = edited(data, b"Once")
    assert (await env.files.save(ws, artifact_id, chunks(body), lock="L1")).version == 2
    retried = await env.files.save(ws, artifact_id, chunks(body), lock="L1")
    assert (retried.status, retried.version) == ("unchanged", 2)
    assert len(await ws.revisions(artifact_id)) == 2
    ended = await env.files.unlock(ws, artifact_id, lock="L1")
    assert ended.state == "checked_in"


async def test_a_session_with_no_save_ends_as_a_discard(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    await env.files.save(ws, artifact_id, chunks(sample_docx()), lock="L1")
    ended = await env.files.unlock(ws, artifact_id, lock="L1")
    assert (ended.state, ended.ended_by) == ("discarded", ALICE)


async def test_a_save_after_someone_else_s_revision_is_a_proposal_and_the_base_stays(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1", ttl=timedelta(minutes=1))
    env.clock.advance(timedelta(minutes=2))  # the lease lapses, and Bob commits
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    theirs = edited(data, b"Theirs")
    await env.files.check_in(bob, checkout.id, chunks(theirs))
    # Alice's editor locks again with its lock: the same session, its base still version 1.
    again = await env.files.lock(ws, artifact_id, lock="L1")
    assert (again.id, again.base_version) == (held.id, 1)
    mine = edited(data, b"Mine")
    saved = await env.files.save(ws, artifact_id, chunks(mine), lock="L1")
    assert (saved.status, saved.version) == ("proposed", 2)
    assert saved.proposal_id is not None
    assert await read_all(env, artifact_id) == theirs
    retried = await env.files.save(ws, artifact_id, chunks(mine), lock="L1")
    assert retried == saved
    record = await env.checkouts.get(env.scope, held.id)
    assert record is not None
    assert (record.state, record.base_version) == ("open", 1)
    proposal = await ws.proposal(saved.proposal_id)
    assert "after the file moved to version 2" in proposal.rationale
    ended = await env.files.unlock(ws, artifact_id, lock="L1")
    assert ended.state == "checked_in"


async def test_a_lapsed_session_taken_over_by_another_lock_ends_and_its_save_is_a_proposal(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    old = await env.files.lock(ws, artifact_id, lock="L1")
    env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
    assert await env.files.current_lock(ws, artifact_id) is None
    new = await env.files.lock(await env.ws(BOB), artifact_id, lock="L2")
    ended = await env.checkouts.get(env.scope, old.id)
    assert ended is not None
    assert ended.state == "discarded"
    late = await env.files.save(ws, artifact_id, chunks(edited(data, b"Late")), lock="L1")
    assert (late.status, late.ended_by) == ("proposed", BOB)
    assert await read_all(env, artifact_id) == data
    with pytest.raises(LockMismatch) as caught:
        await env.files.lock(ws, artifact_id, lock="L1")
    assert caught.value.lock == "L2"
    assert await env.files.current_lock(ws, artifact_id) == "L2"
    assert (await env.files.open_checkouts(await env.ws(BOB), artifact_id)) == [new]


async def test_a_lapsed_session_with_saves_ends_checked_in_when_another_lock_takes_it(
    memory_env: World,
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    old = await env.files.lock(ws, artifact_id, lock="L1")
    await env.files.save(ws, artifact_id, chunks(edited(data, b"Saved")), lock="L1")
    env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
    await env.files.lock(ws, artifact_id, lock="L2")
    ended = await env.checkouts.get(env.scope, old.id)
    assert ended is not None
    assert ended.state == "checked_in"


async def test_a_lapsed_session_whose_file_another_holds_is_refused_as_busy(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
    checkout = await env.files.check_out(await env.ws(BOB), artifact_id)
    with pytest.raises(ArtifactBusy) as caught:
        await env.files.lock(ws, artifact_id, lock="L1")
    assert not isinstance(caught.value, LockMismatch)
    assert caught.value.details()["holder"] == checkout.holder


async def test_relock_swaps_the_lock_of_the_same_session(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1")
    env.clock.advance(timedelta(minutes=10))
    moved = await env.files.relock(ws, artifact_id, old="L1", new="L2")
    assert (moved.id, moved.lock) == (held.id, "L2")
    assert moved.expires_at == env.clock() + EDITOR_TTL
    assert await env.files.current_lock(ws, artifact_id) == "L2"
    with pytest.raises(LockMismatch) as caught:
        await env.files.refresh(ws, artifact_id, lock="L1")
    assert caught.value.lock == "L2"


async def test_the_lock_is_the_session_s_so_a_co_editor_saves_as_themselves(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    held = await env.files.lock(await env.ws(), artifact_id, lock="shared")
    bob = await env.ws(BOB)
    saved = await env.files.save(bob, artifact_id, chunks(edited(data, b"Bob")), lock="shared")
    assert saved.status == "applied"
    assert (await bob.revisions(artifact_id))[-1].actor == BOB
    again = await env.files.lock(bob, artifact_id, lock="shared")
    assert again.id == held.id


async def test_hidden_missing_forbidden_and_off_are_refused_as_a_check_out_is(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    with pytest.raises(NotFound):
        await env.files.lock(ws, "art_missing", lock="L1")
    with pytest.raises(NotFound):
        await env.files.current_lock(ws, "art_missing")
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    with pytest.raises(NotEnabled):
        await env.files.lock(ws, artifact_id, lock="L1")
    assert await env.files.lease(ws, artifact_id) is None
    env.switch.set("t1", "w1", env.files.key, enabled=True)
    await env.files.lock(ws, artifact_id, lock="L1")
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    with pytest.raises(NotEnabled):
        await env.files.save(ws, artifact_id, chunks(sample_docx()), lock="L1")
    with pytest.raises(NotEnabled):
        await env.files.refresh(ws, artifact_id, lock="L1")
    with pytest.raises(NotEnabled):
        await env.files.relock(ws, artifact_id, old="L1", new="L2")
    ended = await env.files.unlock(ws, artifact_id, lock="L1")  # letting go stays allowed
    assert ended.state == "discarded"


async def test_a_viewer_may_not_lock_or_save(env: World) -> None:
    artifact_id = await env.upload()

    async def viewers_only_read(tenant: str, ws: str | None, actor: Actor, access: Access) -> bool:
        return actor != BOB or access.action in ("artifactr:open", "artifactr:read_artifacts")

    gate = integration_gate(env.switch, env.files.key_of, env.storage, authorize=viewers_only_read)
    workspaces = Workspaces(env.storage, types=[WordDocument], authorize=gate)
    bob = await workspaces.open("t1", "w1", actor=BOB)
    with pytest.raises(Forbidden):
        await env.files.lock(bob, artifact_id, lock="L1")
    await env.files.lock(await env.ws(), artifact_id, lock="L1")
    with pytest.raises(Forbidden):
        await env.files.save(bob, artifact_id, chunks(edited(sample_docx(), b"B")), lock="L1")
    assert len(await bob.revisions(artifact_id)) == 1


async def test_a_hostile_save_is_refused_and_keeps_the_session(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    with pytest.raises(UnsafeFile):
        await env.files.save(ws, artifact_id, chunks(b"PK\x03\x04 truncated"), lock="L1")
    assert len(await ws.revisions(artifact_id)) == 1
    assert await env.files.current_lock(ws, artifact_id) == "L1"


async def test_an_oversized_save_is_refused_and_keeps_the_session(tmp_path: Path) -> None:
    data = sample_docx()
    made = make_env("memory", tmp_path, max_size=len(data) + 10)
    env = await anext(made)
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    with pytest.raises(FileTooLarge):
        await env.files.save(ws, artifact_id, chunks(data + b"x" * 100), lock="L1")
    assert len(await ws.revisions(artifact_id)) == 1
    assert await env.files.current_lock(ws, artifact_id) == "L1"
    await made.aclose()


async def test_a_save_that_loses_the_race_to_a_commit_becomes_a_proposal(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    inspect = env.app.inspect

    async def someone_commits_first(*args: Any, **kwargs: Any) -> Any:
        # The lease holds off an agent's edit and a check-out: a generic commit gets by.
        after = await inspect(*args, **kwargs)
        head = await ws.get(WordDocument, artifact_id)
        theirs = head.data.model_copy(update={"outline": "theirs"})
        await (await env.ws(BOB)).commit(
            EditArtifact(
                artifact_id=artifact_id,
                base_version=1,
                patch=revision_patch(head.data.content.sha256, theirs),
                summary="theirs",
            )
        )
        return after

    monkeypatch.setattr(env.app, "inspect", someone_commits_first)
    saved = await env.files.save(ws, artifact_id, chunks(edited(data, b"Mine")), lock="L1")
    assert (saved.status, saved.version) == ("proposed", 2)


async def test_a_renewal_that_loses_to_an_unlock_lets_go_and_is_a_mismatch(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1")
    extend = env.checkouts.extend

    async def ended_first(*args: Any) -> bool:
        await env.checkouts.end(env.scope, held.id, "discarded", by=BOB, at=env.clock())
        return await extend(*args)

    monkeypatch.setattr(env.checkouts, "extend", ended_first)
    with pytest.raises(LockMismatch) as caught:
        await env.files.refresh(ws, artifact_id, lock="L1")
    assert caught.value.lock is None
    assert await env.files.lease(ws, artifact_id) is None


async def test_a_relock_that_loses_to_an_unlock_is_a_mismatch(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1")
    relock = env.checkouts.relock

    async def ended_first(*args: Any) -> bool:
        await env.checkouts.end(env.scope, held.id, "discarded", by=BOB, at=env.clock())
        return await relock(*args)

    monkeypatch.setattr(env.checkouts, "relock", ended_first)
    with pytest.raises(LockMismatch):
        await env.files.relock(ws, artifact_id, old="L1", new="L2")


async def test_a_lock_that_fails_after_its_lease_lets_go_of_the_file(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws()

    async def broken(*args: Any) -> None:
        raise RuntimeError("the store is down")

    monkeypatch.setattr(env.checkouts, "add", broken)
    with pytest.raises(RuntimeError):
        await env.files.lock(ws, artifact_id, lock="L1")
    assert await env.files.lease(ws, artifact_id) is None


async def test_a_lease_held_by_a_check_out_whose_record_is_gone_has_no_lock(
    memory_env: World,
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock="L1")
    await env.checkouts.remove(env.scope, held.id)
    assert await env.files.current_lock(ws, artifact_id) is None
    await env.leases.release(env.scope, artifact_id, held.holder)
    await env.leases.acquire(env.scope, artifact_id, "edit:someone", timedelta(seconds=5))
    assert await env.files.current_lock(ws, artifact_id) is None


# ─── a state machine: locks, saves and others' edits in any order ────────────


class EditorSessions(RuleBasedStateMachine):
    """Two editors' locks, saves, unlocks, an agent's edit and time, in any order.

    Always: at most one lock holds the file, and that lock is what :meth:`current_lock` says;
    the head is always a file someone saved, and a save under the lock is never lost.
    """

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.env_gen: Any = None
        self.env: World
        self.artifact_id = ""
        self.held: str | None = None
        self.open: str | None = None
        self.ever: set[str] = set()
        self.heads: set[bytes] = set()
        self.count = 0

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    @initialize()
    def start(self) -> None:
        self.env_gen = make_env("memory", Path("/tmp"))
        self.env = self.run(anext(self.env_gen))
        data = sample_docx()
        self.heads.add(data)
        self.artifact_id = self.run(self.env.upload(data))

    def teardown(self) -> None:
        if self.env_gen is not None:
            self.run(self.env_gen.aclose())
        self.loop.close()

    def ws(self, who: str) -> Workspace:
        return self.run(self.env.ws(UserActor(id=who)))

    @rule(who=st.sampled_from(["alice", "bob"]), lock=st.sampled_from(["A", "B"]))
    def lock(self, who: str, lock: str) -> None:
        try:
            self.run(self.env.files.lock(self.ws(who), self.artifact_id, lock=lock))
        except LockMismatch:
            assert self.held is not None
            assert self.held != lock
            return
        assert self.held in (None, lock)
        self.held = self.open = lock
        self.ever.add(lock)

    @rule(lock=st.sampled_from(["A", "B"]))
    def save(self, lock: str) -> None:
        self.count += 1
        body = edited(sample_docx(), f"Save{self.count}".encode())
        try:
            saved = self.run(
                self.env.files.save(self.ws("alice"), self.artifact_id, chunks(body), lock=lock)
            )
        except LockMismatch:
            assert lock not in self.ever
            return
        if self.held is None and self.open == lock:
            self.held = lock  # its lease lapsed with no one else holding: taken up again
        assert saved.status in ("applied", "proposed")
        if self.held != lock:
            assert saved.status == "proposed"  # its session ended: kept, never lost
        if saved.status == "applied":
            self.heads.add(body)
        else:
            assert saved.proposal_id is not None

    @rule(lock=st.sampled_from(["A", "B"]))
    def unlock(self, lock: str) -> None:
        try:
            self.run(self.env.files.unlock(self.ws("alice"), self.artifact_id, lock=lock))
        except LockMismatch:
            assert self.held != lock
            return
        assert self.held == lock
        self.held = self.open = None

    @rule()
    def time_passes(self) -> None:
        self.env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
        self.held = None

    @rule()
    def agent_edits(self) -> None:
        async def go() -> None:
            version, _ = await self.env.files.manifest(await self.env.ws(), self.artifact_id)
            ws = await self.env.ws(AGENT)
            try:
                await self.env.files.edit(
                    ws, self.artifact_id, base_version=version, commands=[REPLACE]
                )
            except ArtifactBusy:
                assert self.held is not None

        self.run(go())

    @invariant()
    def one_lock_and_a_head_someone_saved(self) -> None:
        if not self.artifact_id:
            return
        ws = self.ws("alice")
        assert self.run(self.env.files.current_lock(ws, self.artifact_id)) == self.held
        assert self.run(read_all(self.env, self.artifact_id)) in self.heads


def test_no_order_of_locks_saves_and_edits_loses_a_save_or_shares_the_lock() -> None:
    case = EditorSessions.TestCase
    case.settings = settings(max_examples=10, stateful_step_count=12, deadline=None)
    case().runTest()


async def test_a_lock_after_a_person_s_lapsed_check_out_leaves_that_check_out_to_check_in(
    env: World,
) -> None:
    artifact_id = await env.upload()
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    await env.files.lock(await env.ws(), artifact_id, lock="L1")
    assert await env.files.open_checkouts(bob, artifact_id) == [checkout]


async def test_a_save_of_a_version_the_head_moved_on_from_is_a_proposal(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1")
    first = await env.files.save(ws, artifact_id, chunks(edited(data, b"One")), lock="L1")
    assert first.version == 2
    # The editor loaded version 1, and says so: the head moved on since, so it proposes.
    stale = await env.files.save(ws, artifact_id, chunks(edited(data, b"Two")), lock="L1", loaded=1)
    assert (stale.status, stale.version) == ("proposed", 2)
    fresh = await env.files.save(ws, artifact_id, chunks(edited(data, b"3")), lock="L1", loaded=2)
    assert (fresh.status, fresh.version) == ("applied", 3)


async def test_an_editor_that_reloaded_the_head_saves_on_it_in_the_same_session(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.lock(ws, artifact_id, lock="L1", ttl=timedelta(minutes=1))
    env.clock.advance(timedelta(minutes=2))
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    await env.files.check_in(bob, checkout.id, chunks(edited(data, b"Bob")))
    await env.files.lock(ws, artifact_id, lock="L1")  # the same, stale session
    stale = await env.files.save(ws, artifact_id, chunks(edited(data, b"Old")), lock="L1", loaded=1)
    assert stale.status == "proposed"
    # The editor reloads version 2 and says so: its save is on the head.
    fresh = await env.files.save(ws, artifact_id, chunks(edited(data, b"New")), lock="L1", loaded=2)
    assert (fresh.status, fresh.version) == ("applied", 3)


async def test_a_lock_refused_while_the_winner_writes_its_record_names_the_winner_s_lock(
    memory_env: World,
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws(BOB)
    version, head = await env.files.manifest(ws, artifact_id)
    # Another session took the lease an instant ago and writes its record a moment later.
    holder = holder_of("co_winner", ALICE)
    assert await env.leases.acquire(env.scope, artifact_id, holder, EDITOR_TTL) is not None
    record = Checkout(
        id="co_winner",
        artifact_id=artifact_id,
        base_version=version,
        base_sha256=head.content.sha256,
        actor=ALICE,
        expires_at=env.clock.now + EDITOR_TTL,
        lock="from-a",
    )

    async def written_later() -> None:
        await asyncio.sleep(0.05)
        await env.checkouts.add(env.scope, record)

    writing = asyncio.create_task(written_later())
    with pytest.raises(LockMismatch) as refused:
        await env.files.lock(ws, artifact_id, lock="from-b")
    await writing
    assert refused.value.lock == "from-a"


async def test_a_check_out_lease_whose_record_never_comes_is_busy_without_a_lock(
    memory_env: World,
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    holder = holder_of("co_lost", ALICE)
    assert await env.leases.acquire(env.scope, artifact_id, holder, EDITOR_TTL) is not None
    with pytest.raises(ArtifactBusy) as refused:
        await env.files.lock(await env.ws(BOB), artifact_id, lock="from-b")
    assert not isinstance(refused.value, LockMismatch)
    assert refused.value.details()["holder"] == holder


# ─── who may do what to a lock (issue 38) ─────────────────────────────────────

CAROL = UserActor(id="carol", name="Carol")
TOKEN = "opaquelocktoken:4f2c0c1e-0000-4000-8000-000000000001"


async def _viewer(env: World) -> Workspace:
    """Carol, who may read the file and never edit it."""

    async def carol_reads(tenant: str, ws: str | None, actor: Actor, access: Access) -> bool:
        return actor != CAROL or access.action in ("artifactr:open", "artifactr:read_artifacts")

    gate = integration_gate(env.switch, env.files.key_of, env.storage, authorize=carol_reads)
    workspaces = Workspaces(env.storage, types=[WordDocument], authorize=gate)
    return await workspaces.open("t1", "w1", actor=CAROL)


@pytest.mark.parametrize("lock", ["L1", TOKEN])
async def test_a_viewer_who_knows_the_lock_changes_nothing(env: World, lock: str) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    held = await env.files.lock(ws, artifact_id, lock=lock)
    carol = await _viewer(env)
    for refused in (
        lambda: env.files.unlock(carol, artifact_id, lock=lock),
        lambda: env.files.relock(carol, artifact_id, old=lock, new="Hijacked"),
        lambda: env.files.refresh(carol, artifact_id, lock=lock, ttl=timedelta(seconds=1)),
        lambda: env.files.lock(carol, artifact_id, lock=lock),
        lambda: env.files.save(carol, artifact_id, chunks(edited(data, b"Carol")), lock=lock),
        lambda: env.files.current_lock(carol, artifact_id),
    ):
        with pytest.raises(Forbidden):
            await refused()
    stored = await env.checkouts.get(env.scope, held.id)
    assert stored == held
    lease = await env.files.lease(ws, artifact_id)
    assert lease is not None
    assert (lease.holder, lease.expires_at) == (held.holder, held.expires_at)
    saved = await env.files.save(ws, artifact_id, chunks(edited(data, b"Mine")), lock=lock)
    assert saved.status == "applied"


async def test_a_webdav_token_is_its_taker_s_alone_and_never_shown_to_another(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    held = await env.files.lock(alice, artifact_id, lock=TOKEN)
    bob = await env.ws(BOB)
    assert await env.files.current_lock(bob, artifact_id) is None
    assert await env.files.current_lock(alice, artifact_id) == TOKEN
    assert await env.files.current_lock(alice, artifact_id, personal=False) is None
    for refused in (
        lambda: env.files.unlock(bob, artifact_id, lock=TOKEN),
        lambda: env.files.relock(bob, artifact_id, old=TOKEN, new="Mine"),
        lambda: env.files.refresh(bob, artifact_id, lock=TOKEN),
        lambda: env.files.lock(bob, artifact_id, lock=TOKEN),
        lambda: env.files.lock(bob, artifact_id, lock="L2"),
        lambda: env.files.save(bob, artifact_id, chunks(edited(data, b"Bob")), lock=TOKEN),
    ):
        with pytest.raises(LockMismatch) as caught:
            await refused()
        assert caught.value.lock is None
        assert TOKEN not in str(caught.value.details())
    assert await env.checkouts.get(env.scope, held.id) == held
    assert len(await alice.revisions(artifact_id)) == 1


async def test_a_wopi_lock_is_shown_only_to_those_who_may_edit(env: World) -> None:
    artifact_id = await env.upload()
    await env.files.lock(await env.ws(), artifact_id, lock="L1")
    bob = await env.ws(BOB)
    assert await env.files.current_lock(bob, artifact_id, personal=False) == "L1"
    with pytest.raises(LockMismatch) as caught:
        await env.files.lock(bob, artifact_id, lock="L2")
    assert caught.value.lock == "L1"
    with pytest.raises(Forbidden):
        await env.files.current_lock(await _viewer(env), artifact_id, personal=False)


async def test_a_save_after_the_session_was_ended_by_a_colleague_is_a_proposal(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    held = await env.files.lock(alice, artifact_id, lock="L1")
    bob = await env.ws(BOB)
    await env.files.unlock(bob, artifact_id, lock="L1")  # a co-editor of the shared session
    late = edited(data, b"Late")
    saved = await env.files.save(alice, artifact_id, chunks(late), lock="L1")
    assert saved.status == "proposed"
    assert saved.proposal_id is not None
    assert saved.ended_by == BOB
    proposal = await alice.proposal(saved.proposal_id)
    assert "discarded" in proposal.rationale
    assert held.id in proposal.rationale
    assert await read_all(env, artifact_id) == data
    assert await env.files.current_lock(alice, artifact_id) is None


async def test_a_save_after_a_person_s_check_out_was_discarded_is_a_proposal(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    held = await env.files.lock(alice, artifact_id, lock=TOKEN)
    await env.files.discard(alice, held.id)
    await env.files.check_out(await env.ws(BOB), artifact_id)
    saved = await env.files.save(alice, artifact_id, chunks(edited(data, b"Kept")), lock=TOKEN)
    assert (saved.status, saved.ended_by) == ("proposed", ALICE)
    with pytest.raises(LockMismatch):  # another's ended token is no one else's to save under
        await env.files.save(await env.ws(BOB), artifact_id, chunks(data), lock=TOKEN)


async def test_a_save_after_the_lease_lapsed_with_no_one_else_takes_the_lock_up_again(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    await env.files.lock(alice, artifact_id, lock="L1")
    env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
    saved = await env.files.save(alice, artifact_id, chunks(edited(data, b"Idle")), lock="L1")
    assert (saved.status, saved.version) == ("applied", 2)
    assert await env.files.current_lock(alice, artifact_id) == "L1"


async def test_a_save_after_the_lease_lapsed_and_someone_checked_out_is_a_proposal(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    await env.files.lock(alice, artifact_id, lock="L1")
    env.clock.advance(EDITOR_TTL + timedelta(seconds=1))
    checkout = await env.files.check_out(await env.ws(BOB), artifact_id)
    saved = await env.files.save(alice, artifact_id, chunks(edited(data, b"Late")), lock="L1")
    assert (saved.status, saved.ended_by) == ("proposed", None)
    lease = await env.files.lease(alice, artifact_id)
    assert lease is not None
    assert lease.holder == checkout.holder
    assert await read_all(env, artifact_id) == data


async def test_a_check_out_a_colleague_ended_is_offered_until_checked_in(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice = await env.ws()
    own = await env.files.check_out(alice, artifact_id)
    await env.files.discard(alice, own.id)
    assert await env.files.ended_by_others(alice, artifact_id) == []
    broken = await env.files.check_out(alice, artifact_id)
    await env.files.discard(await env.ws(BOB), broken.id)  # Bob may archive: he breaks it
    (offered,) = await env.files.ended_by_others(alice, artifact_id)
    assert (offered.id, offered.ended_by) == (broken.id, BOB)
    assert await env.files.ended_by_others(await env.ws(BOB), artifact_id) == []
    kept = await env.files.check_in(alice, broken.id, chunks(edited(data, b"Mine")))
    assert (kept.status, kept.ended_by) == ("proposed", BOB)
    assert await env.files.ended_by_others(alice, artifact_id) == []


async def test_an_ended_webdav_token_is_never_taken_by_another(env: World) -> None:
    artifact_id = await env.upload()
    alice = await env.ws()
    await env.files.lock(alice, artifact_id, lock=TOKEN)
    await env.files.unlock(alice, artifact_id, lock=TOKEN)
    with pytest.raises(LockMismatch) as caught:
        await env.files.lock(await env.ws(BOB), artifact_id, lock=TOKEN)
    assert caught.value.lock is None
    assert await env.files.lease(alice, artifact_id) is None
    again = await env.files.lock(alice, artifact_id, lock=TOKEN)
    assert again.actor == ALICE
