"""NativeFiles: upload, edits by command batch, check-out and check-in, reads, the switch."""

import asyncio
import hashlib
import io
import json
import zipfile
from datetime import datetime, timedelta
from typing import Any

import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import (
    Actor,
    EditArtifact,
    Forbidden,
    InvalidState,
    JsonPatch,
    NotFound,
    PatchFailed,
    RespondToProposal,
    ValidationFailed,
    VersionConflict,
    Visibility,
)
from artifactr.workspace import Access, Scope, Workspace

from artifactr.files import (
    DOCX,
    AppCommand,
    AppCrashed,
    AppRefused,
    AppTimeout,
    ArtifactBusy,
    Blob,
    CheckoutOutdated,
    ContentDamaged,
    FileTooLarge,
    NotEnabled,
    Provenance,
    UnsafeFile,
    WordDocument,
)
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import Edited
from artifactr.files.core.checkouts import Checkout, Outcome
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.integrations import integration_gate
from artifactr.files.native import CheckedIn, NativeFiles, Unchanged
from tests.native.conftest import AGENT, ALICE, BOB, World, chunks, sample_docx

ADMIN = UserActor(id="admin", name="Admin")

REPLACE = AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": "Final"})
NOTHING = AppCommand(command="edit.replaceAll", params={"text": "no such words", "with": "x"})


async def read_all(env: World, artifact_id: str, version: int | None = None) -> bytes:
    ws = await env.ws()
    return b"".join([chunk async for chunk in env.files.content(ws, artifact_id, version)])


def with_part(data: bytes, name: str, content: bytes) -> bytes:
    """Return a package with one part's content replaced."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, content if info.filename == name else source.read(info))
    return out.getvalue()


def edited_body(data: bytes) -> bytes:
    body = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    return with_part(data, "word/document.xml", body.replace(b"Draft", b"Edited by hand"))


# ─── upload ───────────────────────────────────────────────────────────────────


async def test_an_upload_puts_the_bytes_then_creates_the_manifest(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    doc = await ws.get(WordDocument, artifact_id)
    assert doc.version == 1
    assert doc.data.content.sha256 == hashlib.sha256(data).hexdigest()
    assert doc.data.content.size == len(data)
    assert doc.data.fingerprint == fingerprint(data)
    assert doc.data.provenance.source == "upload"
    assert doc.data.provenance.app == "fake"
    assert await read_all(env, artifact_id) == data
    assert "Draft" in await env.files.text(ws, artifact_id)
    assert doc.updated_by == ALICE


async def test_an_agents_upload_is_a_proposal(env: World) -> None:
    outcome = await env.files.upload(await env.ws(AGENT), "a.docx", chunks(sample_docx()))
    assert outcome.type == "proposed"
    assert await (await env.ws()).artifacts(WordDocument) == []


async def test_an_upload_is_refused_while_the_app_is_off(env: World) -> None:
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    with pytest.raises(NotEnabled):
        await env.files.upload(await env.ws(), "a.docx", chunks(sample_docx()))
    assert await (await env.ws()).artifacts(WordDocument) == []


@pytest.mark.parametrize(
    ("data", "reason"), [(b"not a zip at all", "not_a_zip"), (b"", "not_a_zip")]
)
async def test_an_upload_that_is_not_a_package_is_refused_unstored(
    env: World, data: bytes, reason: str
) -> None:
    with pytest.raises(UnsafeFile) as caught:
        await env.files.upload(await env.ws(), "a.docx", chunks(data))
    assert caught.value.reason == reason
    assert await (await env.ws()).artifacts(WordDocument) == []


async def test_an_upload_over_the_size_limit_is_refused(memory_env: World) -> None:
    files = memory_env.files
    files._max_size = 100  # the constructor's max_size, set small for this one test
    with pytest.raises(FileTooLarge) as caught:
        await files.upload(await memory_env.ws(), "a.docx", chunks(sample_docx()))
    assert caught.value.payload()["limit"] == 100


async def test_an_upload_names_every_wrong_field(memory_env: World) -> None:
    with pytest.raises(ValidationFailed) as caught:
        await memory_env.files.upload(
            await memory_env.ws(), " ", chunks(sample_docx()), media_type="text/plain"
        )
    assert [error["loc"] for error in caught.value.errors] == [["name"], ["media_type"]]
    with pytest.raises(ValidationFailed) as caught:
        await memory_env.files.upload(await memory_env.ws(), "", chunks(sample_docx()))
    assert [error["loc"] for error in caught.value.errors] == [["name"]]
    with pytest.raises(ValidationFailed) as caught:
        await memory_env.files.upload(
            await memory_env.ws(), "a.docx", chunks(sample_docx()), media_type="text/plain"
        )
    assert [error["loc"] for error in caught.value.errors] == [["media_type"]]
    outcome = await memory_env.files.upload(
        await memory_env.ws(), "a.docx", chunks(sample_docx()), media_type=DOCX
    )
    assert outcome.type == "applied"


# ─── edits ────────────────────────────────────────────────────────────────────


async def test_a_persons_edit_commits_a_patch_that_tests_the_base_digest(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    before = await ws.get(WordDocument, artifact_id)
    outcome = await env.files.edit(
        ws, artifact_id, base_version=1, commands=[REPLACE], summary="finalise"
    )
    assert outcome.type == "applied"
    after = await ws.get(WordDocument, artifact_id)
    assert after.version == 2
    revision = (await ws.revisions(artifact_id))[-1]
    assert revision.patch is not None
    ops = revision.patch.model_dump()["ops"]
    assert ops[0] == {"op": "test", "path": "/content/sha256", "value": before.data.content.sha256}
    assert [op["path"] for op in ops[1:]] == [
        "/content",
        "/provenance",
        "/fingerprint",
        "/text",
        "/review",
        "/outline",
        "/pages",
        "/styles",
    ]
    assert after.data.provenance.source == "commands"
    assert after.data.provenance.base == before.data.content.sha256
    commands = after.data.provenance.commands
    assert commands is not None
    stored = await env.blobs.get(env.scope, artifact_id, commands.sha256)
    assert json.loads(stored or b"") == [
        {"command": "edit.replaceAll", "params": {"text": "Draft", "with": "Final"}}
    ]
    assert "Final" in await env.files.text(ws, artifact_id)
    assert "Draft" not in await env.files.text(ws, artifact_id)
    assert await env.files.lease(ws, artifact_id) is None


async def test_an_agents_edit_is_a_proposal_that_a_person_accepts(env: World) -> None:
    artifact_id = await env.upload()
    outcome = await env.files.edit(
        await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE]
    )
    assert outcome.type == "proposed"
    ws = await env.ws()
    assert (await ws.get(WordDocument, artifact_id)).version == 1
    resolved = await ws.commit(
        RespondToProposal(proposal_id=outcome.proposal_id, decision="accept")
    )
    assert resolved.version == 2
    assert "Final" in await env.files.text(ws, artifact_id)
    revision = (await ws.revisions(artifact_id))[-1]
    assert revision.patch is not None
    assert revision.patch.model_dump()["ops"][0]["op"] == "test"


async def test_accepting_a_stale_proposal_fails_and_keeps_it_pending(env: World) -> None:
    artifact_id = await env.upload()
    proposed = await env.files.edit(
        await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE]
    )
    ws = await env.ws()
    await env.files.edit(
        ws,
        artifact_id,
        base_version=1,
        commands=[
            AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": "Signed"})
        ],
    )
    assert proposed.type == "proposed"
    with pytest.raises(PatchFailed):
        await ws.commit(RespondToProposal(proposal_id=proposed.proposal_id, decision="accept"))
    assert (await ws.proposal(proposed.proposal_id)).status == "pending"
    assert "Signed" in await env.files.text(ws, artifact_id)


async def test_a_batch_that_changes_nothing_makes_no_revision(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    outcome = await env.files.edit(ws, artifact_id, base_version=1, commands=[NOTHING])
    assert outcome == Unchanged(artifact_id=artifact_id, version=1)
    assert len(await ws.revisions(artifact_id)) == 1


async def test_an_edit_on_a_stale_base_is_a_conflict_before_the_app_runs(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    await env.files.edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    env.app.fail_next("crashed")  # would fail the call if the app ran
    with pytest.raises(VersionConflict) as caught:
        await env.files.edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    assert caught.value.details() == {"artifact_id": artifact_id, "base": 1, "head": 2}


async def test_an_empty_batch_is_refused(memory_env: World) -> None:
    artifact_id = await memory_env.upload()
    with pytest.raises(ValidationFailed) as caught:
        await memory_env.files.edit(await memory_env.ws(), artifact_id, base_version=1, commands=[])
    assert caught.value.errors[0]["loc"] == ["commands"]


async def test_an_edit_while_a_person_has_the_file_checked_out_is_busy(env: World) -> None:
    artifact_id = await env.upload()
    checkout = await env.files.check_out(await env.ws(BOB), artifact_id)
    with pytest.raises(ArtifactBusy) as caught:
        await env.files.edit(await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE])
    assert caught.value.lease is not None
    assert caught.value.lease.holder == f"checkout:{checkout.id}:user:bob"
    assert caught.value.lease.expires_at == checkout.expires_at
    assert (await env.files.lease(await env.ws(), artifact_id)) == caught.value.lease


async def test_a_failed_app_call_commits_nothing_and_releases_the_lease(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    env.app.fail_next("refused")
    with pytest.raises(AppRefused):
        await env.files.edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    # A told timeout waits out the deadline: this call's is short, over the same parts.
    env.app.fail_next("timeout")
    with pytest.raises(AppTimeout):
        await env.with_deadline(0.01).edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    assert len(await ws.revisions(artifact_id)) == 1
    assert await env.files.lease(ws, artifact_id) is None
    unknown = AppCommand(command="no.such.command")
    with pytest.raises(AppRefused) as caught:
        await env.files.edit(ws, artifact_id, base_version=1, commands=[unknown])
    assert "no.such.command" in caught.value.reason


async def test_an_edit_is_refused_while_the_app_is_off_before_any_lease(env: World) -> None:
    artifact_id = await env.upload()
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    ws = await env.ws()
    with pytest.raises(NotEnabled):
        await env.files.edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    with pytest.raises(NotEnabled):
        await env.files.check_out(ws, artifact_id)
    assert await env.files.lease(ws, artifact_id) is None
    assert not await env.files.enabled(ws)
    assert "Draft" in await env.files.text(ws, artifact_id)


# ─── check-out and check-in ───────────────────────────────────────────────────


async def test_a_check_out_is_exclusive_and_two_tabs_are_two_check_outs(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    first = await env.files.check_out(ws, artifact_id)
    assert (first.base_version, first.actor) == (1, ALICE)
    assert first.expires_at == env.clock.now + timedelta(hours=8)
    with pytest.raises(ArtifactBusy):
        await env.files.check_out(ws, artifact_id)
    with pytest.raises(ArtifactBusy):
        await env.files.check_out(await env.ws(BOB), artifact_id)
    assert await env.files.checkout(ws, first.id) == first


async def test_a_check_out_is_extended_by_acquiring_again(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.clock.advance(timedelta(hours=7))
    extended = await env.files.extend(ws, checkout.id)
    assert extended.expires_at == env.clock.now + timedelta(hours=8)
    assert (await env.files.checkout(ws, checkout.id)).expires_at == extended.expires_at
    lease = await env.files.lease(ws, artifact_id)
    assert lease is not None
    assert lease.expires_at == extended.expires_at


async def test_only_the_person_who_checked_out_may_act_on_the_check_out(env: World) -> None:
    artifact_id = await env.upload()
    checkout = await env.files.check_out(await env.ws(), artifact_id)
    bob = await env.ws(BOB)
    with pytest.raises(Forbidden):
        await env.files.extend(bob, checkout.id)
    with pytest.raises(Forbidden):
        await env.files.check_in(bob, checkout.id, chunks(sample_docx()))
    with pytest.raises(NotFound):
        await env.files.extend(bob, "co_missing")


async def test_a_person_s_open_check_outs_of_a_file_include_those_whose_lease_lapsed(
    env: World,
) -> None:
    artifact_id = await env.upload()
    alice, bob = await env.ws(), await env.ws(BOB)
    first = await env.files.check_out(alice, artifact_id)
    env.clock.advance(timedelta(hours=8, minutes=1))
    assert await env.files.lease(alice, artifact_id) is None
    second = await env.files.check_out(alice, artifact_id)
    mine = await env.files.open_checkouts(alice, artifact_id)
    assert [record.id for record in mine] == [second.id, first.id]  # newest first
    assert await env.files.open_checkouts(bob, artifact_id) == []  # only the caller's own
    await env.files.discard(alice, first.id)
    assert [record.id for record in await env.files.open_checkouts(alice, artifact_id)] == [
        second.id
    ]
    with pytest.raises(NotFound):
        await env.files.open_checkouts(alice, "art_missing")


async def test_a_discarded_check_out_frees_the_file(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    await env.files.discard(ws, checkout.id)
    env.switch.set("t1", "w1", env.files.key, enabled=True)
    assert await env.files.lease(ws, artifact_id) is None
    ended = await env.files.checkout(ws, checkout.id)
    assert (ended.state, ended.ended_by, ended.ended_at) == ("discarded", ALICE, env.clock.now)
    assert (await env.files.check_out(await env.ws(BOB), artifact_id)).base_version == 1
    await env.files.discard(ws, checkout.id)  # a retry changes nothing
    assert await env.files.checkout(ws, checkout.id) == ended
    with pytest.raises(InvalidState) as caught:
        await env.files.extend(ws, checkout.id)
    assert caught.value.message.endswith(f"discarded by user:alice at {rfc3339(env.clock.now)}")
    assert caught.value.message.endswith("Z")


async def test_a_check_in_commits_as_the_person_and_a_retry_answers_the_same(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws(BOB)
    checkout = await env.files.check_out(ws, artifact_id)
    edited = edited_body(data)
    result = await env.files.check_in(ws, checkout.id, chunks(edited))
    assert result == CheckedIn(status="applied", artifact_id=artifact_id, version=2)
    doc = await ws.get(WordDocument, artifact_id)
    assert doc.updated_by == BOB
    assert doc.data.provenance.source == "check_in"
    assert doc.data.provenance.base == checkout.base_sha256
    assert await read_all(env, artifact_id) == edited
    assert await env.files.lease(ws, artifact_id) is None
    retried = await env.files.check_in(ws, checkout.id, chunks(edited))
    assert retried == result
    assert len(await ws.revisions(artifact_id)) == 2
    ended = await env.files.checkout(ws, checkout.id)
    assert (ended.state, ended.ended_by, ended.ended_at) == ("checked_in", BOB, env.clock.now)
    with pytest.raises(InvalidState):
        await env.files.check_in(ws, checkout.id, chunks(data))
    with pytest.raises(InvalidState):
        await env.files.extend(ws, checkout.id)


async def test_a_check_in_equal_to_the_head_commits_nothing(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    # WordCraft rewrites core.xml on every save: still the same document.
    resaved = with_part(data, "docProps/core.xml", b"<cp:coreProperties/>")
    result = await env.files.check_in(ws, checkout.id, chunks(resaved))
    assert result.status == "unchanged"
    assert len(await ws.revisions(artifact_id)) == 1
    assert await env.files.lease(ws, artifact_id) is None


async def test_a_stale_check_in_becomes_a_proposal_against_the_head(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))  # the lease lapses
    alice = await env.ws()
    await env.files.edit(alice, artifact_id, base_version=1, commands=[REPLACE])
    head = await alice.get(WordDocument, artifact_id)
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert result.status == "proposed"
    assert result.version == 2
    assert result.proposal_id is not None
    proposal = await alice.proposal(result.proposal_id)
    assert proposal.proposed_by == BOB
    change = proposal.change.model_dump(mode="json")
    assert change["base_version"] == 2
    assert change["patch"]["ops"][0] == {
        "op": "test",
        "path": "/content/sha256",
        "value": head.data.content.sha256,
    }
    assert "Final" in await env.files.text(alice, artifact_id)  # nothing overwritten
    accepted = await alice.commit(
        RespondToProposal(proposal_id=result.proposal_id, decision="accept")
    )
    assert accepted.version == 3


async def test_a_check_in_after_another_person_took_the_lapsed_file_is_a_proposal(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    await env.files.check_out(await env.ws(), artifact_id)
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert result.status == "proposed"
    assert len(await bob.revisions(artifact_id)) == 1


async def test_a_check_in_after_a_lapse_with_no_commit_still_commits(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.clock.advance(timedelta(hours=9))
    result = await env.files.check_in(ws, checkout.id, chunks(edited_body(data)))
    assert result.status == "applied"


async def test_check_in_and_extend_are_refused_while_the_app_is_off(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.switch.set("t1", "w1", env.files.key, enabled=False)
    with pytest.raises(NotEnabled):
        await env.files.extend(ws, checkout.id)
    with pytest.raises(NotEnabled):
        await env.files.check_in(ws, checkout.id, chunks(sample_docx()))
    assert len(await ws.revisions(artifact_id)) == 1


async def test_a_hostile_check_in_is_refused_and_keeps_the_check_out(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    with pytest.raises(UnsafeFile):
        await env.files.check_in(ws, checkout.id, chunks(b"PK\x03\x04 truncated"))
    assert (await env.files.lease(ws, artifact_id)) is not None
    assert len(await ws.revisions(artifact_id)) == 1


# ─── reads ────────────────────────────────────────────────────────────────────


async def test_every_revision_keeps_its_content_text_and_review(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    await env.files.edit(ws, artifact_id, base_version=1, commands=[REPLACE])
    assert await read_all(env, artifact_id, 1) == data
    assert "Draft" in await env.files.text(ws, artifact_id, 1)
    assert "Final" in await env.files.text(ws, artifact_id, 2)
    assert await env.files.review(ws, artifact_id, 1) == []
    with pytest.raises(NotFound):
        await env.files.text(ws, artifact_id, 7)


async def test_a_comment_shows_in_the_review_with_its_id(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    await env.files.edit(
        ws,
        artifact_id,
        base_version=1,
        commands=[
            AppCommand(command="select.text", params={"text": "Draft"}),
            AppCommand(command="review.newComment", params={"text": "Is this final?"}),
        ],
    )
    review = await env.files.review(ws, artifact_id)
    assert [(item.kind, item.text, item.author) for item in review] == [
        ("comment", "Is this final?", "Alice")
    ]
    assert review[0].id


async def test_a_rendered_page_is_a_png_served_from_the_cache_the_second_time(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    png = await env.files.render(ws, artifact_id, 1, 1)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    env.app.fail_next("crashed")
    assert await env.files.render(ws, artifact_id, None, 1) == png  # the app was not asked
    with pytest.raises(AppCrashed):  # another scale is another key: the app is asked
        await env.files.render(ws, artifact_id, 1, 1, scale=2.0)
    bigger = await env.files.render(ws, artifact_id, 1, 1, scale=2.0)
    assert bigger != png
    # A scale is rounded to the nearest 0.05: these are the pages already rendered.
    env.app.fail_next("crashed")
    assert await env.files.render(ws, artifact_id, 1, 1, scale=1.0241) == png
    assert await env.files.render(ws, artifact_id, 1, 1, scale=1.98) == bigger
    with pytest.raises(AppCrashed):
        await env.files.render(ws, artifact_id, 1, 1, scale=1.96)
    with pytest.raises(AppRefused):
        await env.files.render(ws, artifact_id, 1, 999)


async def test_a_hidden_file_is_answered_as_a_missing_one_by_every_method(env: World) -> None:
    artifact_id = await env.upload()

    async def hidden(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset({artifact_id}))

    blind = await Workspaces(env.storage, types=[WordDocument], hidden=hidden).open(
        "t1", "w1", actor=ALICE
    )
    calls = [
        env.files.edit(blind, artifact_id, base_version=1, commands=[REPLACE]),
        env.files.check_out(blind, artifact_id),
        env.files.lease(blind, artifact_id),
        env.files.text(blind, artifact_id),
        env.files.review(blind, artifact_id),
        env.files.render(blind, artifact_id),
        env.files.manifest(blind, artifact_id),
    ]
    for call in calls:
        with pytest.raises(NotFound) as caught:
            await call
        assert caught.value.payload() == {
            "type": "not_found",
            "message": f"artifact {artifact_id} does not exist",
            "entity": "artifact",
            "id": artifact_id,
        }
    with pytest.raises(NotFound):
        await read_all_as(env, blind, artifact_id)


async def read_all_as(env: World, ws: Workspace, artifact_id: str) -> bytes:
    return b"".join([chunk async for chunk in env.files.content(ws, artifact_id)])


# ─── collection ───────────────────────────────────────────────────────────────


async def test_collect_removes_only_what_nothing_references_after_the_grace(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    await env.files.discard(ws, checkout.id)
    # A proposal's blobs are referenced by its patch.
    proposed = await env.files.edit(
        await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE]
    )
    # A failed commit leaves its put blobs behind: a stray put of unrelated bytes stands for it.
    stray = await env.blobs.put(env.scope, artifact_id, chunks(b"orphan"), "text/plain")
    assert await env.files.collect(ws, grace=timedelta(hours=1)) == 0
    env.clock.advance(timedelta(hours=2))
    assert await env.files.collect(ws, grace=timedelta(hours=1)) == 1
    assert await env.blobs.get(env.scope, artifact_id, stray.sha256) is None
    assert await read_all(env, artifact_id) == data
    assert proposed.type == "proposed"
    accepted = await ws.commit(
        RespondToProposal(proposal_id=proposed.proposal_id, decision="accept")
    )
    assert accepted.version == 2
    assert "Final" in await env.files.text(ws, artifact_id)


async def test_collect_keeps_an_open_check_outs_base_and_refuses_a_partial_view(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.clock.advance(timedelta(hours=2))
    assert await env.files.collect(ws) == 0
    assert await env.blobs.get(env.scope, artifact_id, checkout.base_sha256) == data

    async def hidden(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset({artifact_id}))

    blind = await Workspaces(env.storage, types=[WordDocument], hidden=hidden).open(
        "t1", "w1", actor=ALICE
    )
    with pytest.raises(Forbidden):
        await env.files.collect(blind)


async def test_a_check_in_over_the_size_limit_is_refused_and_keeps_the_check_out(
    memory_env: World,
) -> None:
    artifact_id = await memory_env.upload()
    ws = await memory_env.ws()
    checkout = await memory_env.files.check_out(ws, artifact_id)
    memory_env.files._max_size = 100  # the constructor's max_size, set small for this one test
    with pytest.raises(FileTooLarge):
        await memory_env.files.check_in(ws, checkout.id, chunks(sample_docx()))
    assert await memory_env.files.lease(ws, artifact_id) is not None


async def test_an_agents_check_in_is_a_proposal_as_its_write_policy_says(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    agent = await env.ws(AGENT)
    checkout = await env.files.check_out(agent, artifact_id)
    result = await env.files.check_in(agent, checkout.id, chunks(edited_body(data)))
    assert result.status == "proposed"
    assert result.proposal_id is not None
    assert result.version == 1
    assert await env.files.lease(agent, artifact_id) is None


async def test_a_check_in_that_loses_the_race_to_a_commit_becomes_a_proposal(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sample_docx()
    artifact_id = await memory_env.upload(data)
    alice = await memory_env.ws()
    checkout = await memory_env.files.check_out(alice, artifact_id)
    renew = memory_env.leases.acquire

    async def acquire_then_someone_commits(*args: Any, **kwargs: Any) -> Any:
        lease = await renew(*args, **kwargs)
        # Between the lease check and the commit, a generic client renames the file.
        head = await alice.get(WordDocument, artifact_id)
        await alice.commit(
            EditArtifact(
                artifact_id=artifact_id,
                base_version=head.version,
                patch=JsonPatch(ops=({"op": "replace", "path": "/name", "value": "b.docx"},)),
            )
        )
        return lease

    monkeypatch.setattr(memory_env.leases, "acquire", acquire_then_someone_commits)
    result = await memory_env.files.check_in(alice, checkout.id, chunks(edited_body(data)))
    assert result.status == "proposed"
    assert result.version == 2


# ─── retries, races and late check-ins (ADR-0009) ─────────────────────────────


async def test_a_retried_check_in_kept_as_a_proposal_answers_the_same_proposal(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    await env.files.edit(await env.ws(), artifact_id, base_version=1, commands=[REPLACE])
    first = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    again = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert first.status == "proposed"
    assert again == first
    assert [p.id for p in await bob.proposals()] == [first.proposal_id]
    with pytest.raises(InvalidState) as caught:
        await env.files.check_in(bob, checkout.id, chunks(with_part(data, "x.xml", b"x")))
    assert "another file" in caught.value.message


async def test_a_check_in_of_a_check_out_someone_discarded_is_kept_and_says_who_and_when(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=2))
    await env.files.discard(await env.ws(ADMIN), checkout.id)
    broken_at = env.clock.now
    env.clock.advance(timedelta(minutes=5))
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert result.status == "proposed"
    assert (result.version, result.ended_by, result.ended_at) == (1, ADMIN, broken_at)
    assert result.proposal_id is not None
    proposal = await bob.proposal(result.proposal_id)
    assert proposal.proposed_by == BOB
    assert proposal.rationale is not None
    assert f"user:admin discarded at {rfc3339(broken_at)};" in proposal.rationale
    assert len(await bob.revisions(artifact_id)) == 1
    assert await env.files.lease(bob, artifact_id) is None
    assert await env.files.check_in(bob, checkout.id, chunks(edited_body(data))) == result
    record = await env.files.checkout(bob, checkout.id)
    assert (record.state, record.ended_by) == ("discarded", ADMIN)


async def test_a_check_in_the_app_fails_on_lets_a_retry_check_in(env: World) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    env.app.fail_next("crashed", "inspect")
    with pytest.raises(AppCrashed):
        await env.files.check_in(ws, checkout.id, chunks(edited_body(data)))
    result = await env.files.check_in(ws, checkout.id, chunks(edited_body(data)))
    assert (result.status, result.version) == ("applied", 2)


async def test_a_check_out_checked_in_before_outcomes_were_kept_refuses_a_retry(
    env: World,
) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    await env.checkouts.add(
        env.scope,
        checkout.model_copy(
            update={"state": "checked_in", "ended_by": ALICE, "ended_at": env.clock.now}
        ),
    )
    with pytest.raises(InvalidState):
        await env.files.check_in(ws, checkout.id, chunks(sample_docx()))


def claims_of(env: World, monkeypatch: pytest.MonkeyPatch) -> "asyncio.Queue[Checkout | None]":
    """Return a queue of what each claim of a check-out answers from now on, as it answers."""
    answers: asyncio.Queue[Checkout | None] = asyncio.Queue()
    claim = env.checkouts.claim

    async def claiming(
        scope: Scope, checkout_id: str, token: str, *, until: datetime, now: datetime
    ) -> Checkout | None:
        answer = await claim(scope, checkout_id, token, until=until, now=now)
        answers.put_nowait(answer)
        return answer

    monkeypatch.setattr(env.checkouts, "claim", claiming)
    return answers


async def held_by(answers: "asyncio.Queue[Checkout | None]", holder: str) -> None:
    """Wait for a claim that found the check-out claimed by ``holder``."""
    answer = await asyncio.wait_for(answers.get(), 30)
    assert answer is not None
    assert answer.claim == holder


async def test_a_check_in_waits_for_another_check_in_of_its_check_out_and_answers_alike(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sample_docx()
    artifact_id = await memory_env.upload(data)
    ws = await memory_env.ws()
    checkout = await memory_env.files.check_out(ws, artifact_id)
    now = memory_env.clock.now
    until = now + timedelta(seconds=45)
    await memory_env.checkouts.claim(
        memory_env.scope, checkout.id, "ci_other", until=until, now=now
    )
    answers = claims_of(memory_env, monkeypatch)
    waiting = asyncio.create_task(
        memory_env.files.check_in(ws, checkout.id, chunks(edited_body(data)))
    )
    # It finds the other's claim, and again after a wait: it waits for that one's outcome.
    await held_by(answers, "ci_other")
    await held_by(answers, "ci_other")
    assert not waiting.done()
    printed = fingerprint(edited_body(data))
    outcome = Outcome(status="applied", version=7, fingerprint=printed)
    await memory_env.checkouts.settle(memory_env.scope, checkout.id, outcome, by=ALICE, at=now)
    result = await asyncio.wait_for(waiting, 30)
    assert result == CheckedIn(status="applied", artifact_id=artifact_id, version=7)


async def test_a_check_in_waiting_on_a_check_out_that_was_removed_finds_none(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = sample_docx()
    artifact_id = await memory_env.upload(data)
    ws = await memory_env.ws()
    checkout = await memory_env.files.check_out(ws, artifact_id)
    now = memory_env.clock.now
    until = now + timedelta(seconds=45)
    await memory_env.checkouts.claim(
        memory_env.scope, checkout.id, "ci_other", until=until, now=now
    )
    answers = claims_of(memory_env, monkeypatch)
    waiting = asyncio.create_task(memory_env.files.check_in(ws, checkout.id, chunks(data)))
    await held_by(answers, "ci_other")
    assert not waiting.done()
    await memory_env.checkouts.remove(memory_env.scope, checkout.id)
    with pytest.raises(NotFound):
        await asyncio.wait_for(waiting, 30)


async def test_a_check_in_that_stalled_past_its_claim_answers_what_the_retry_did(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    inspect = env.app.inspect
    retried: list[CheckedIn] = []
    stalled: list[bool] = []

    async def stall_then_a_retry_takes_over(source: Any, **options: Any) -> Any:
        inspection = await inspect(source, **options)
        if not stalled:
            stalled.append(True)
            env.clock.advance(timedelta(minutes=1))  # the claim lapses
            retried.append(await env.files.check_in(ws, checkout.id, chunks(edited_body(data))))
        return inspection

    monkeypatch.setattr(env.app, "inspect", stall_then_a_retry_takes_over)
    result = await env.files.check_in(ws, checkout.id, chunks(edited_body(data)))
    assert retried == [result]
    assert (result.status, result.version) == ("applied", 2)
    assert len(await ws.revisions(artifact_id)) == 2


async def test_a_stale_check_in_proposes_against_whatever_head_it_finds(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    await env.files.check_out(await env.ws(), artifact_id)  # alice holds it now: stale
    manifest = env.files.manifest
    reads: list[int] = []

    async def someone_commits_after_the_second_read(*args: Any) -> Any:
        read = await manifest(*args)
        reads.append(read[0])
        if len(reads) == 3:  # the proposal's first read: the head moves under it
            alice = await env.ws()
            await alice.commit(
                EditArtifact(
                    artifact_id=artifact_id,
                    base_version=read[0],
                    patch=JsonPatch(ops=({"op": "replace", "path": "/name", "value": "b.docx"},)),
                )
            )
        return read

    monkeypatch.setattr(env.files, "manifest", someone_commits_after_the_second_read)
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert (result.status, result.version) == ("proposed", 2)
    assert reads == [1, 1, 1, 2]  # decided, held, proposed against 1 (too late), then 2


async def test_a_stale_check_in_that_finds_the_head_equal_to_it_is_unchanged(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    await env.files.check_out(await env.ws(), artifact_id)
    printed = fingerprint(edited_body(data))
    manifest = env.files.manifest
    reads: list[int] = []

    async def someone_commits_the_same_file_first(*args: Any) -> Any:
        reads.append(1)
        if len(reads) == 2:
            alice = await env.ws()
            head = await alice.get(WordDocument, artifact_id)
            ops = (
                {"op": "test", "path": "/content/sha256", "value": head.data.content.sha256},
                {"op": "replace", "path": "/fingerprint", "value": printed},
            )
            await alice.commit(
                EditArtifact(
                    artifact_id=artifact_id, base_version=head.version, patch=JsonPatch(ops=ops)
                )
            )
        return await manifest(*args)

    monkeypatch.setattr(env.files, "manifest", someone_commits_the_same_file_first)
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert (result.status, result.version) == ("unchanged", 2)


async def test_an_extend_that_finds_its_check_out_gone_lets_go_of_the_file(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    artifact_id = await env.upload()
    ws = await env.ws()
    checkout = await env.files.check_out(ws, artifact_id)
    extend = env.checkouts.extend

    async def removed_first(*args: Any) -> bool:
        await env.checkouts.remove(env.scope, checkout.id)
        return await extend(*args)

    monkeypatch.setattr(env.checkouts, "extend", removed_first)
    with pytest.raises(NotFound):
        await env.files.extend(ws, checkout.id)
    assert await env.files.lease(ws, artifact_id) is None


# ─── the lease first, then the head (ADR-0015) ────────────────────────────────


async def test_a_check_out_granted_just_after_an_edit_committed_is_based_on_that_edit(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    acquire = env.leases.acquire
    edits: list[Any] = []

    async def bob_edits_and_lets_go_first(*args: Any) -> Any:
        if str(args[2]).startswith("checkout:") and not edits:
            bob = await env.ws(BOB)
            edits.append(await env.files.edit(bob, artifact_id, base_version=1, commands=[REPLACE]))
        return await acquire(*args)

    monkeypatch.setattr(env.leases, "acquire", bob_edits_and_lets_go_first)
    alice = await env.ws()
    checkout = await env.files.check_out(alice, artifact_id)
    assert [(edit.type, edit.version) for edit in edits] == [("applied", 2)]
    head = await alice.get(WordDocument, artifact_id)
    assert (checkout.base_version, checkout.base_sha256) == (2, head.data.content.sha256)
    # She held the file the whole time: her check-in of the version she downloaded commits.
    downloaded = await read_all(env, artifact_id, checkout.base_version)
    body = zipfile.ZipFile(io.BytesIO(downloaded)).read("word/document.xml")
    signed = with_part(downloaded, "word/document.xml", body.replace(b"Final", b"Signed"))
    result = await env.files.check_in(alice, checkout.id, chunks(signed))
    assert result == CheckedIn(status="applied", artifact_id=artifact_id, version=3)


async def test_an_edit_whose_base_moved_on_before_it_held_the_file_conflicts_unrun(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    acquire = env.leases.acquire
    check_ins: list[CheckedIn] = []

    async def bob_checks_in_first(*args: Any) -> Any:
        if str(args[2]).startswith("edit:") and not check_ins:
            bob = await env.ws(BOB)
            checkout = await env.files.check_out(bob, artifact_id)
            check_ins.append(await env.files.check_in(bob, checkout.id, chunks(edited_body(data))))
            env.app.fail_next("crashed")  # would fail the edit if the app ran on version 1
        return await acquire(*args)

    monkeypatch.setattr(env.leases, "acquire", bob_checks_in_first)
    with pytest.raises(VersionConflict) as caught:
        await env.files.edit(await env.ws(AGENT), artifact_id, base_version=1, commands=[REPLACE])
    assert caught.value.details() == {"artifact_id": artifact_id, "base": 1, "head": 2}
    assert [result.status for result in check_ins] == ["applied"]
    assert await env.files.lease(await env.ws(), artifact_id) is None
    assert await (await env.ws()).proposals() == []


async def test_extending_a_lapsed_check_out_after_the_file_moved_on_lets_go_of_it(
    env: World,
) -> None:
    data = sample_docx()
    artifact_id = await env.upload(data)
    alice, bob = await env.ws(), await env.ws(BOB)
    first = await env.files.check_out(alice, artifact_id)
    env.clock.advance(timedelta(hours=9))  # her lease lapses; Bob checks the file in meanwhile
    bobs = await env.files.check_out(bob, artifact_id)
    await env.files.check_in(bob, bobs.id, chunks(edited_body(data)))
    with pytest.raises(CheckoutOutdated) as caught:
        await env.files.extend(alice, first.id)
    assert caught.value.code == "invalid_state"
    assert caught.value.details() == {"checkout_id": first.id, "base_version": 1, "version": 2}
    assert "check it in to keep your work as a proposal" in caught.value.message
    assert await env.files.lease(alice, artifact_id) is None
    assert (await env.files.checkout(alice, first.id)).state == "open"
    result = await env.files.check_in(alice, first.id, chunks(with_part(data, "x.xml", b"<x/>")))
    assert (result.status, result.version) == ("proposed", 2)
    # Bob's own check-out, lapsed with no one committing since, extends as before.
    again = await env.files.check_out(bob, artifact_id)
    env.clock.advance(timedelta(hours=9))
    assert (await env.files.extend(bob, again.id)).base_version == 2


async def test_a_check_out_whose_record_can_t_be_kept_lets_go_of_the_file(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    artifact_id = await env.upload()

    async def the_store_is_down(*args: Any) -> None:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(env.checkouts, "add", the_store_is_down)
    with pytest.raises(ConnectionError):
        await env.files.check_out(await env.ws(), artifact_id)
    assert await env.files.lease(await env.ws(), artifact_id) is None


async def test_a_check_in_discarded_after_its_lease_was_renewed_is_a_proposal(
    memory_env: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = memory_env
    data = sample_docx()
    artifact_id = await env.upload(data)
    bob = await env.ws(BOB)
    checkout = await env.files.check_out(bob, artifact_id)
    acquire = env.leases.acquire

    async def discarded_meanwhile(*args: Any) -> Any:
        lease = await acquire(*args)
        await env.files.discard(await env.ws(ADMIN), checkout.id)
        return lease

    monkeypatch.setattr(env.leases, "acquire", discarded_meanwhile)
    result = await env.files.check_in(bob, checkout.id, chunks(edited_body(data)))
    assert (result.status, result.ended_by) == ("proposed", ADMIN)
    assert await env.leases.current(env.scope, artifact_id) is None


async def test_a_manifest_without_text_reads_as_empty_and_a_lost_blob_as_damaged(
    memory_env: World,
) -> None:
    ws = await memory_env.ws()
    await ws.create(
        WordDocument(
            name="bare.docx",
            content=Blob(sha256="c" * 64, size=1, media_type=DOCX),
            fingerprint="d" * 64,
            provenance=Provenance(source="upload"),
        ),
        artifact_id="bare",
    )
    assert await memory_env.files.text(ws, "bare") == ""
    assert await memory_env.files.review(ws, "bare") == []
    with pytest.raises(ContentDamaged) as caught:
        await memory_env.files.render(ws, "bare")
    assert caught.value.details() == {
        "artifact_id": "bare",
        "version": 1,
        "sha256": "c" * 64,
        "problem": "missing",
    }


async def test_a_text_the_store_has_lost_reads_as_damaged(memory_env: World) -> None:
    ws = await memory_env.ws()
    await ws.create(
        WordDocument(
            name="lost.docx",
            content=Blob(sha256="c" * 64, size=1, media_type=DOCX),
            text=Blob(sha256="e" * 64, size=5, media_type="text/plain; charset=utf-8"),
            fingerprint="d" * 64,
            provenance=Provenance(source="upload"),
        ),
        artifact_id="lost",
    )
    with pytest.raises(ContentDamaged) as caught:
        await memory_env.files.text(ws, "lost")
    assert (caught.value.problem, caught.value.sha256) == ("missing", "e" * 64)


async def test_a_text_or_review_the_store_holds_with_another_size_reads_as_damaged(
    memory_env: World,
) -> None:
    artifact_id = await memory_env.upload()
    ws = await memory_env.ws()
    head = await ws.get(WordDocument, artifact_id)
    await ws.commit(
        EditArtifact(
            artifact_id=artifact_id,
            base_version=head.version,
            patch=JsonPatch(
                ops=(
                    {"op": "replace", "path": "/text/size", "value": 1},
                    {"op": "replace", "path": "/review/size", "value": 1},
                )
            ),
        )
    )
    for read in (memory_env.files.text, memory_env.files.review):
        with pytest.raises(ContentDamaged) as caught:
            await read(ws, artifact_id)
        assert caught.value.problem == "size"
        assert caught.value.code == "content_damaged"
    assert await memory_env.files.text(ws, artifact_id, 1)


async def test_without_integrations_every_app_is_on(memory_env: World) -> None:
    files = NativeFiles(
        blobs=memory_env.blobs,
        app=memory_env.app,
        leases=memory_env.leases,
        checkouts=memory_env.checkouts,
    )
    assert await files.enabled(await memory_env.ws())
    assert files.key_of("word_document") == "files:fake"
    assert files.key_of("markdown") is None


class BrokenSaver(FakeApp):
    """A FakeApp whose saves come out as something that is not a package."""

    async def apply(self, source: Any, commands: Any, **options: Any) -> Edited:
        edited = await super().apply(source, commands, **options)
        return edited.model_copy(update={"content": b"not a package"})


async def test_an_app_that_saves_an_unreadable_package_is_a_crash(memory_env: World) -> None:
    artifact_id = await memory_env.upload()
    memory_env.files.app = BrokenSaver()
    with pytest.raises(AppCrashed) as caught:
        await memory_env.files.edit(
            await memory_env.ws(), artifact_id, base_version=1, commands=[REPLACE]
        )
    assert "can't be read" in caught.value.reason


async def test_someone_else_may_break_a_check_out_only_if_they_may_archive_the_file(
    env: World,
) -> None:
    artifact_id = await env.upload()
    checkout = await env.files.check_out(await env.ws(), artifact_id)

    async def only_admins_archive(
        tenant: str, ws: str | None, actor: Actor, access: Access
    ) -> bool:
        return access.action != "artifactr:archive_artifact" or actor == ADMIN

    gate = integration_gate(
        env.switch, env.files.key_of, env.storage, authorize=only_admins_archive
    )
    workspaces = Workspaces(env.storage, types=[WordDocument], authorize=gate)
    bob = await workspaces.open("t1", "w1", actor=BOB)
    with pytest.raises(Forbidden):
        await env.files.discard(bob, checkout.id)
    assert await env.files.lease(bob, artifact_id) is not None
    env.switch.set("t1", "w1", env.files.key, enabled=False)  # breaking it stays allowed
    admin = await workspaces.open("t1", "w1", actor=ADMIN)
    await env.files.discard(admin, checkout.id)
    assert await env.files.lease(admin, artifact_id) is None
    broken = await env.files.checkout(await env.ws(), checkout.id)
    assert (broken.state, broken.ended_by) == ("discarded", ADMIN)


async def test_an_uploaded_name_keeps_no_control_or_direction_characters(env: World) -> None:
    ws = await env.ws()
    outcome = await env.files.upload(ws, " \u202ea\u0007b\u2028c.docx\n", chunks(sample_docx()))
    assert outcome.type == "applied"
    assert (await ws.get(WordDocument, outcome.artifact_id)).data.name == "ab c.docx"
    with pytest.raises(ValidationFailed) as caught:
        await env.files.upload(ws, "\u202e\u200f", chunks(sample_docx()))
    assert caught.value.errors[0]["type"] == "missing"


async def test_bad_names_ids_pages_and_scales_are_refused_before_any_work(env: World) -> None:
    artifact_id = await env.upload()
    ws = await env.ws()
    with pytest.raises(ValidationFailed) as caught:
        await env.files.upload(ws, "x" * 256 + ".docx", chunks(sample_docx()))
    assert caught.value.errors[0]["type"] == "too_long"
    for odd in ("co_\x00", "", "c" * 256):
        with pytest.raises(NotFound) as missing:
            await env.files.checkout(ws, odd)
        assert missing.value.payload()["entity"] == "checkout"
    for page, scale in ((0, 1.0), (2**31, 1.0), (1, float("nan")), (1, 0.05), (1, 4.5)):
        with pytest.raises(ValidationFailed):
            await env.files.render(ws, artifact_id, 1, page, scale=scale)
