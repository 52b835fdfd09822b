"""Access through grantr: its real hooks decide every NativeFiles call and every tool's.

On SQLite and PostgreSQL, with grantr's ``authorize`` wrapped by the switch's gate and its
``hidden`` hook in ``Workspaces``, it checks that artifactr.files asks only artifactr's own
actions; what a viewer, an editor, a contributor (an editor who may not archive) and an admin
may do to a file; that a restricted file is answered as a missing one, word for word; that an
agent acting for a person has that person's rights and no more; and that the switch refuses
every write, for everyone, while reads go on.
"""

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from artifactr import AgentActor, SystemActor, UserActor
from artifactr.core import (
    ArchiveArtifact,
    EditArtifact,
    Forbidden,
    InvalidState,
    JsonPatch,
    NotFound,
    Proposal,
    Rejection,
    SetFocus,
)
from artifactr.workspace import ACTIONS, Access, Workspace
from grantr import Resource, User

from artifactr.files import AppCommand, Checkout
from artifactr.files.core.errors import NotEnabled
from artifactr.files.native import NativeFiles
from tests.access.conftest import (
    ABE,
    ADA,
    CARL,
    EDDIE,
    ERIN,
    OLIVE,
    RITA,
    TENANT,
    WORKSPACE,
    World,
    call,
    chunks,
    say,
)
from tests.documents import build_docx

REPLACE = [AppCommand(command="edit.replaceAll", params={"text": "fox", "with": "cat"})]
NO_OPS = JsonPatch(ops=())
EDITED = build_docx(("Final agreement", "The quick brown cat pays a fee."))


async def drain(stream: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in stream])


async def refusal(call: Awaitable[object]) -> Rejection:
    """Return the rejection a call raises; fail if it raises none."""
    try:
        await call
    except Rejection as rejection:
        return rejection
    raise AssertionError("the call was not refused")


async def _checked_out_as_an_editor(world: World, doc: str) -> Checkout:
    """Check a file out as Rita while she is an editor too, then make her a viewer again."""
    owner = User(id=OLIVE.id)
    on = Resource(kind="workspace", workspace=WORKSPACE)
    await world.grants.grant(TENANT, "editor", on=on, to=User(id=RITA.id), by=owner)
    record = await world.files.check_out(await world.ws(RITA), doc)
    await world.grants.revoke(TENANT, "editor", on=on, to=User(id=RITA.id), by=owner)
    return record


# ─── the actions asked ────────────────────────────────────────────────────────


async def test_every_native_files_method_asks_only_artifactrs_own_actions(world: World) -> None:
    files = world.files
    editor = await world.ws(EDDIE)
    doc = await world.upload(EDDIE)
    await drain(files.content(editor, doc))
    await files.text(editor, doc)
    await files.review(editor, doc)
    await files.render(editor, doc, page=1)
    await files.manifest(editor, doc)
    await files.lease(editor, doc)
    await files.edit(editor, doc, base_version=1, commands=REPLACE)
    checkout = await files.check_out(editor, doc)
    await files.extend(editor, checkout.id)
    await files.check_in(editor, checkout.id, chunks(EDITED))
    again = await files.check_out(editor, doc)
    await files.discard(await world.ws(ADA), again.id)
    await files.collect(await world.ws(SystemActor(name="collector")))

    asked = world.actions()
    assert asked <= ACTIONS
    assert {
        "artifactr:open",
        "artifactr:create_artifact",
        "artifactr:edit_artifact",
        "artifactr:archive_artifact",
        "artifactr:read_artifacts",
        "artifactr:read_proposals",
    } <= asked


async def test_the_gate_asks_grantr_first_so_a_refusal_stays_forbidden_while_the_app_is_off(
    world: World,
) -> None:
    doc = await world.upload(EDDIE)
    world.off()

    edit = Access(action="artifactr:edit_artifact", artifact_id=doc)

    refused = await refusal((await world.ws(RITA)).check(edit))
    off = await refusal((await world.ws(EDDIE)).check(edit))
    await (await world.ws(RITA)).check(Access(action="artifactr:read_artifacts", artifact_id=doc))

    assert isinstance(refused, Forbidden)
    assert refused.message == "artifactr:edit_artifact is refused in this workspace"
    assert isinstance(off, NotEnabled)


# ─── a viewer, an editor, an admin ────────────────────────────────────────────


async def test_a_viewer_downloads_revisions_views_pages_and_sees_who_holds_the_file(
    world: World,
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await world.files.check_out(await world.ws(EDDIE), doc)
    reader = await world.ws(RITA)

    content = await drain(world.files.content(reader, doc, 1))
    page = await world.files.render(reader, doc, 1, 1)
    lease = await world.files.lease(reader, doc)
    text = await world.files.text(reader, doc)

    assert content.startswith(b"PK")
    assert page.startswith(b"\x89PNG")
    assert lease is not None
    assert lease.holder == checkout.holder
    assert "quick brown fox" in text


async def test_a_viewer_is_refused_check_out_discard_uploads_and_edits(
    world: World,
) -> None:
    files = world.files
    doc = await world.upload(EDDIE)
    checkout = await files.check_out(await world.ws(EDDIE), doc)
    reader = await world.ws(RITA)

    refusals = [
        await refusal(files.check_out(reader, doc)),
        await refusal(files.edit(reader, doc, base_version=1, commands=REPLACE)),
        await refusal(files.discard(reader, checkout.id)),
        await refusal(files.upload(reader, "new.docx", chunks(EDITED))),
    ]

    assert [type(refused) for refused in refusals] == [Forbidden] * 4
    assert [refused.message for refused in refusals] == [
        "artifactr:edit_artifact is refused in this workspace",
        "artifactr:edit_artifact is refused in this workspace",
        "artifactr:archive_artifact is refused in this workspace",
        "artifactr:create_artifact is refused in this workspace",
    ]
    assert await files.lease(reader, doc) is not None  # her refusals broke nothing


async def test_a_viewer_who_held_a_check_out_may_no_longer_use_it_and_an_admin_breaks_it(
    world: World,
) -> None:
    # Rita was an editor when she checked the file out; she is a viewer now.
    files = world.files
    doc = await world.upload(EDDIE)
    record = await _checked_out_as_an_editor(world, doc)
    demoted = await world.ws(RITA)

    refusals = [
        await refusal(files.extend(demoted, record.id)),
        await refusal(files.check_in(demoted, record.id, chunks(EDITED))),
        await refusal(files.discard(demoted, record.id)),
    ]
    still = await files.lease(demoted, doc)
    await files.discard(await world.ws(ADA), record.id)

    assert [type(refused) for refused in refusals] == [Forbidden] * 3
    assert {refused.message for refused in refusals} == {
        "artifactr:edit_artifact is refused in this workspace"
    }
    assert still is not None
    assert still.holder == record.holder
    assert await files.lease(demoted, doc) is None


async def test_an_editor_uploads_edits_checks_out_extends_checks_in_and_discards(
    world: World,
) -> None:
    files = world.files
    editor = await world.ws(EDDIE)
    doc = await world.upload(EDDIE)

    edited = await files.edit(editor, doc, base_version=1, commands=REPLACE)
    checkout = await files.check_out(editor, doc)
    extended = await files.extend(editor, checkout.id)
    checked_in = await files.check_in(editor, checkout.id, chunks(EDITED))
    again = await files.check_out(editor, doc)
    await files.discard(editor, again.id)

    assert edited.type == "applied"
    assert extended.expires_at >= checkout.expires_at
    assert (checked_in.status, checked_in.version) == ("applied", 3)
    assert await files.lease(editor, doc) is None


async def test_an_admin_breaks_another_persons_check_out_and_a_contributor_cannot(
    world: World,
) -> None:
    files = world.files
    doc = await world.upload(EDDIE)
    checkout = await files.check_out(await world.ws(EDDIE), doc)

    refused = await refusal(files.discard(await world.ws(CARL), checkout.id))
    held = await files.lease(await world.ws(CARL), doc)
    await files.discard(await world.ws(ADA), checkout.id)

    assert isinstance(refused, Forbidden)
    assert refused.message == "artifactr:archive_artifact is refused in this workspace"
    assert held is not None
    assert held.holder == checkout.holder
    assert await files.lease(await world.ws(ADA), doc) is None
    extended = await refusal(files.extend(await world.ws(EDDIE), checkout.id))
    assert isinstance(extended, InvalidState)
    assert "discarded by user:ada" in extended.message


async def test_grantrs_editor_may_archive_so_it_breaks_another_editors_check_out(
    world: World,
) -> None:
    # ADR-0006 says archiving is never a plain editor's; grantr's built-in editor holds
    # ``artifactr:archive_artifact``, so under grantr's roles an editor may break a check-out.
    files = world.files
    doc = await world.upload(EDDIE)
    checkout = await files.check_out(await world.ws(EDDIE), doc)

    await files.discard(await world.ws(ERIN), checkout.id)

    assert await files.lease(await world.ws(ERIN), doc) is None


async def test_no_one_extends_or_checks_in_another_persons_check_out(world: World) -> None:
    files = world.files
    doc = await world.upload(EDDIE)
    checkout = await files.check_out(await world.ws(EDDIE), doc)
    admin = await world.ws(ADA)

    extended = await refusal(files.extend(admin, checkout.id))
    checked_in = await refusal(files.check_in(admin, checkout.id, chunks(EDITED)))

    assert isinstance(extended, Forbidden)
    assert isinstance(checked_in, Forbidden)
    assert extended.message == f"check-out {checkout.id} is someone else's"


# ─── a restricted file is a missing one ───────────────────────────────────────


type Call = Callable[[NativeFiles, Workspace, str, str], Awaitable[object]]
"""One NativeFiles call on an artifact (its id) or a check-out of it (its id)."""

ON_ARTIFACT: dict[str, Call] = {
    "manifest": lambda f, ws, doc, co: f.manifest(ws, doc),
    "content": lambda f, ws, doc, co: drain(f.content(ws, doc)),
    "text": lambda f, ws, doc, co: f.text(ws, doc),
    "review": lambda f, ws, doc, co: f.review(ws, doc),
    "render": lambda f, ws, doc, co: f.render(ws, doc, page=1),
    "lease": lambda f, ws, doc, co: f.lease(ws, doc),
    "edit": lambda f, ws, doc, co: f.edit(ws, doc, base_version=1, commands=REPLACE),
    "check_out": lambda f, ws, doc, co: f.check_out(ws, doc),
}
"""Every call that names an artifact."""

ON_CHECKOUT: dict[str, Call] = {
    "checkout": lambda f, ws, doc, co: f.checkout(ws, co),
    "extend": lambda f, ws, doc, co: f.extend(ws, co),
    "check_in": lambda f, ws, doc, co: f.check_in(ws, co, chunks(EDITED)),
    "discard": lambda f, ws, doc, co: f.discard(ws, co),
}
"""Every call that names a check-out."""


def _anonymous(rejection: Rejection, first: str, second: str) -> tuple[str, object]:
    """A rejection's type and payload, with either id it names replaced by a placeholder."""
    payload = {
        key: value.replace(first, "<id>").replace(second, "<id>")
        if isinstance(value, str)
        else value
        for key, value in rejection.payload().items()
    }
    return type(rejection).__name__, payload


@pytest.mark.parametrize("person", [RITA, EDDIE], ids=["viewer", "editor"])
@pytest.mark.parametrize("name", ON_ARTIFACT)
async def test_a_restricted_file_is_answered_as_a_missing_one_by_every_call_on_it(
    world: World, name: str, person: UserActor
) -> None:
    doc = await world.upload(EDDIE)
    await world.restrict(doc)
    missing = "art_0123456789abcdef0123456789abcdef"
    ws = await world.ws(person)

    hidden = await refusal(ON_ARTIFACT[name](world.files, ws, doc, ""))
    absent = await refusal(ON_ARTIFACT[name](world.files, ws, missing, ""))

    assert isinstance(hidden, NotFound)
    assert _anonymous(hidden, doc, missing) == _anonymous(absent, doc, missing)
    await ON_ARTIFACT[name](world.files, await world.ws(ADA), doc, "")  # the admin sees it


@pytest.mark.parametrize("name", ON_CHECKOUT)
async def test_a_check_out_of_a_restricted_file_is_answered_as_one_of_a_missing_file(
    world: World, name: str
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await world.files.check_out(await world.ws(EDDIE), doc)
    await world.restrict(doc)
    missing = "art_0123456789abcdef0123456789abcdef"
    orphan = checkout.model_copy(update={"id": "co_orphan", "artifact_id": missing})
    await world.files.checkouts.add(world.scope, orphan)
    editor = await world.ws(EDDIE)

    hidden = await refusal(ON_CHECKOUT[name](world.files, editor, doc, checkout.id))
    orphaned = await refusal(ON_CHECKOUT[name](world.files, editor, missing, orphan.id))
    absent = await refusal(ON_CHECKOUT[name](world.files, editor, missing, "co_missing"))

    assert isinstance(hidden, NotFound)
    # Answered as a check-out that doesn't exist: the id says nothing about the file.
    assert _anonymous(hidden, checkout.id, "co_missing") == _anonymous(
        absent, checkout.id, "co_missing"
    )
    assert _anonymous(orphaned, orphan.id, "co_missing") == _anonymous(
        absent, orphan.id, "co_missing"
    )


# ─── agents act for a person ──────────────────────────────────────────────────


async def test_an_agent_for_an_editor_edits_and_its_edit_becomes_a_proposal(
    world: World,
) -> None:
    doc = await world.upload(EDDIE)
    commands = [command.model_dump() for command in REPLACE]

    transcript = await world.run(
        EDDIE,
        [
            call("read_native", artifact_id=doc),
            call("edit_native", artifact_id=doc, base_version=1, commands=commands, summary="s"),
            say("Proposed."),
        ],
    )

    assert transcript.tool_returns() == [("read_native", "ok"), ("edit_native", "ok")]
    [proposal] = await (await world.ws(EDDIE)).proposals()
    assert isinstance(proposal, Proposal)
    assert proposal.artifact_id == doc
    agent = AgentActor(thread_id=world.threads[EDDIE.participant], on_behalf_of=EDDIE)
    assert proposal.proposed_by.participant == agent.participant


async def test_an_agent_for_an_asker_reads_a_file_and_is_refused_its_edit(world: World) -> None:
    doc = await world.upload(EDDIE)
    commands = [command.model_dump() for command in REPLACE]

    transcript = await world.run(
        ABE,
        [
            call("read_native", artifact_id=doc),
            call("view_page", artifact_id=doc, page=1),
            call("edit_native", artifact_id=doc, base_version=1, commands=commands, summary="s"),
            say("I may not change it."),
        ],
    )

    assert transcript.tool_returns() == [
        ("read_native", "ok"),
        ("view_page", "ok"),
        ("edit_native", "retry"),
    ]
    read, _, edit = transcript.answers()
    assert "quick brown fox" in read
    assert "artifactr:edit_artifact is refused in this workspace" in edit
    assert await (await world.ws(ABE)).proposals() == []
    assert (await (await world.ws(ABE)).artifact(doc)).version == 1


async def test_an_agent_for_a_viewer_starts_no_run_and_is_refused_even_a_read(
    world: World,
) -> None:
    # grantr's viewer holds no ``artifactr:record``, which a run's start and each tool call
    # ask, nor ``artifactr:set_focus``, which read_native asks as it follows the file.
    doc = await world.upload(EDDIE)
    thread = (await (await world.ws(EDDIE)).create_thread()).id
    agent = AgentActor(thread_id=thread, on_behalf_of=RITA)
    acting = (await world.ws(RITA)).as_actor(agent)

    started = await refusal(world.run(RITA, [say("never asked")], thread=thread))
    followed = await refusal(
        acting.commit(SetFocus(thread_id=thread, artifact_ids=(doc,)))  # what read_native asks
    )
    text = await world.files.text(acting, doc)  # NativeFiles itself lets the agent read

    assert started.message == "artifactr:record is refused in this workspace"
    assert followed.message == "artifactr:set_focus is refused in this workspace"
    assert "quick brown fox" in text
    assert isinstance(await refusal(world.files.check_out(acting, doc)), Forbidden)


async def test_an_agent_for_a_contributor_cannot_break_a_check_out_its_person_cannot(
    world: World,
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await world.files.check_out(await world.ws(EDDIE), doc)
    thread = (await (await world.ws(CARL)).create_thread()).id
    agent = (await world.ws(CARL)).as_actor(AgentActor(thread_id=thread, on_behalf_of=CARL))
    nobody = (await world.ws(CARL)).as_actor(AgentActor(thread_id=thread))

    refused = await refusal(world.files.discard(agent, checkout.id))
    alone = await refusal(world.files.lease(nobody, doc))

    assert isinstance(refused, Forbidden)
    assert refused.message == "artifactr:archive_artifact is refused in this workspace"
    assert isinstance(alone, Forbidden)  # an agent acting for no one holds nothing


# ─── the tools answer a restricted file as a missing one ──────────────────────


async def test_every_tool_tells_the_model_a_restricted_file_is_missing_word_for_word(
    world: World,
) -> None:
    doc = await world.upload(EDDIE)
    await world.restrict(doc)
    missing = "art_0123456789abcdef0123456789abcdef"
    commands = [command.model_dump() for command in REPLACE]
    asks = [
        ("read_native", {}),
        ("read_review", {}),
        ("view_page", {"page": 1}),
        ("edit_native", {"base_version": 1, "commands": commands, "summary": "s"}),
    ]

    transcript = await world.run(
        EDDIE,
        [
            *(
                call(tool, artifact_id=target, **args)
                for tool, args in asks
                for target in (doc, missing)
            ),
            say("Neither is there."),
        ],
    )

    # artifactr's own read_artifact takes one retry a run: a run for each id.
    generic = [
        await world.run(EDDIE, [call("read_artifact", artifact_id=target), say("Not there.")])
        for target in (doc, missing)
    ]

    answers = [
        answer.replace(doc, "<id>").replace(missing, "<id>")
        for answer in [*transcript.answers(), *(run.answers()[0] for run in generic)]
    ]
    assert [status for _, status in transcript.tool_returns()] == ["retry"] * len(asks) * 2
    assert answers[0::2] == answers[1::2]
    assert all("<id>" in answer for answer in answers)


# ─── the switch ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize("person", [EDDIE, ADA], ids=["editor", "admin"])
async def test_with_the_app_off_every_write_is_not_enabled_and_reads_go_on(
    world: World, person: UserActor
) -> None:
    files = world.files
    doc = await world.upload(EDDIE)
    checkout = await files.check_out(await world.ws(person), doc)
    world.off()
    ws = await world.ws(person)

    writes = [
        await refusal(files.upload(ws, "new.docx", chunks(EDITED))),
        await refusal(files.edit(ws, doc, base_version=1, commands=REPLACE)),
        await refusal(files.check_out(ws, doc)),
        await refusal(files.extend(ws, checkout.id)),
        await refusal(files.check_in(ws, checkout.id, chunks(EDITED))),
        await refusal(ws.commit(EditArtifact(artifact_id=doc, base_version=1, patch=NO_OPS))),
        await refusal(ws.commit(ArchiveArtifact(artifact_id=doc, base_version=1))),
    ]
    content = await drain(files.content(ws, doc, 1))
    page = await files.render(ws, doc, 1, 1)
    lease = await files.lease(ws, doc)
    text = await files.text(ws, doc)
    await files.discard(ws, checkout.id)  # letting go is allowed while the app is off

    assert [type(refused) for refused in writes] == [NotEnabled] * len(writes)
    assert {refused.message for refused in writes} == {
        "files:fake is not enabled in this workspace"
    }
    assert content.startswith(b"PK")
    assert page.startswith(b"\x89PNG")
    assert lease is not None
    assert lease.holder == checkout.holder
    assert "quick brown fox" in text
    assert await files.lease(ws, doc) is None
