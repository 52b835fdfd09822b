"""The native file tools, run by a scripted model through artifactr's Runner (ADR-0006).

Each test sends a message to an agent with the ``ArtifactWorkspace`` capability and
``native_file_tools``, on SQLite and PostgreSQL, and asserts on what the model was sent (the
tools offered, the tool results and retries it got back) and on the workspace's log.
"""

import json
import re
from datetime import timedelta

import pytest
from artifactr.core import FocusChanged, Proposal, Versioned
from artifactr.workspace import Scope
from pydantic_ai import BinaryContent, ModelRequest, ModelResponse, UserPromptPart

from artifactr.files import AppCommand, ArtifactLease, WordDocument
from artifactr.files.agent.tools import MAX_RETRIES, READ_CHARS, REVIEW_ITEMS
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import FailureKind
from artifactr.files.core.leases import Leases
from tests.agent.conftest import (
    ALICE,
    BOB,
    RFC3339_Z,
    DirectDocument,
    Note,
    Request,
    World,
    call,
    calls,
    chunks,
    say,
)
from tests.documents import build_docx

GENERIC_TOOLS = [
    "archive_artifact",
    "create_artifact",
    "edit_text",
    "list_artifacts",
    "read_artifact",
]
NATIVE_TOOLS = ["edit_native", "find_commands", "list_files", "read_native", "read_review"]
REPLACE = [{"command": "edit.replaceAll", "params": {"text": "fox", "with": "cat"}}]


def read_on(request: Request) -> ModelResponse:
    """Read on where the last answer says, as a model would, or stop at the end."""
    returned = request.returned()
    found = re.search(r"read on with start=(\d+)", str(returned.content))
    if found is None:
        return say("I have read it all.")
    artifact_id = str(returned.content).split(" ", 1)[0]  # each answer opens with the file's id
    return call(returned.tool_name, artifact_id=artifact_id, start=int(found[1]))


def prompt_text(request: Request) -> str:
    """Everything the people and the workspace told the model in this request's messages."""
    return "\n".join(
        str(part.content)
        for message in request.messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    )


async def proposals(world: World) -> list[Proposal]:
    return await (await world.ws()).proposals()


async def head(world: World, artifact_id: str) -> Versioned[WordDocument]:
    return await (await world.ws()).get(WordDocument, artifact_id)


# ─── reading ──────────────────────────────────────────────────────────────────


async def test_a_long_text_is_read_in_pages_of_eight_thousand_characters(world: World) -> None:
    lines = [f"Line {n:03} " + "of the long report, which goes on and on. " * 2 for n in range(200)]
    doc = await world.upload(build_docx(lines))
    text = await world.files.text(await world.ws(), doc)
    assert len(text) > 2 * READ_CHARS

    run = await world.run([call("read_native", artifact_id=doc), read_on, read_on, read_on])

    answers = [str(r.returned().content) for r in run.requests[1:]]
    assert answers[0].startswith(f"{doc} (word_document, v1) 'report.docx': characters 0 to 8000")
    # The first page names the styles a command's `style` takes; the others don't.
    assert answers[0].splitlines()[1] == (
        "Paragraph styles: Normal, Title, Heading 1, Heading 2, Heading 3. Character styles: "
        "(none)."
    )
    assert "styles" not in answers[1]
    assert answers[0].endswith("The text goes on: read on with start=8000.")
    assert f"characters 8000 to 16000 of {len(text)}." in answers[1]
    assert answers[2].endswith("That is the end of the text.")
    pages = [answer.split("\n\n")[1] for answer in answers]
    assert "".join(pages) == text
    assert run.tool_returns() == [("read_native", "ok")] * 3
    assert run.requests[0].tools == sorted([*GENERIC_TOOLS, *NATIVE_TOOLS])
    thread = await (await world.ws()).thread(world.threads["main"])
    assert thread.focus == (doc,)
    assert len([e for e in run.events if isinstance(e.event, FocusChanged)]) == 1


async def test_the_review_is_read_marked_comment_or_change_with_the_apps_ids(world: World) -> None:
    doc = await world.upload(
        build_docx(comment="Check the figures", insertion=" new", deletion=" old")
    )

    run = await world.run([call("read_review", artifact_id=doc), say("Read.")])

    answer = str(run.requests[1].returned().content)
    assert answer.startswith(
        f"{doc} (word_document, v1) 'report.docx': items 0 to 3 of 3 (comments: 1, tracked "
        "changes: 2).\n\n"
    )
    items = [json.loads(line) for line in answer.splitlines() if line.startswith("{")]
    assert [(item["kind"], item["id"]) for item in items] == [
        ("comment", "0"),
        ("change", "1"),
        ("change", "2"),
    ]
    assert items[0]["text"] == "Check the figures"
    assert items[0]["author"] == "Ada Lovelace"
    assert [item.get("change") for item in items] == [None, "insert", "delete"]
    assert answer.endswith("That is the end of the review.")
    assert run.tool_returns() == [("read_review", "ok")]


async def test_a_long_review_is_read_fifty_items_a_call(world: World) -> None:
    doc = await world.upload()
    comment = {"command": "review.newComment", "params": {"text": "Why?"}}
    batch = [AppCommand.model_validate(comment)] * (REVIEW_ITEMS + 7)
    await world.files.edit(await world.ws(ALICE), doc, base_version=1, commands=batch)

    run = await world.run([call("read_review", artifact_id=doc), read_on, read_on])

    first, second = (str(r.returned().content) for r in run.requests[1:])
    assert "items 0 to 50 of 57 (comments: 57, tracked changes: 0)." in first
    assert first.endswith("The review goes on: read on with start=50.")
    assert "items 50 to 57 of 57 (comments: 57, tracked changes: 0)." in second
    assert len([line for line in second.splitlines() if line.startswith("{")]) == 7
    assert run.tool_returns() == [("read_review", "ok")] * 2


async def test_the_apps_commands_are_found_ten_at_most_with_their_parameters(world: World) -> None:
    run = await world.run(
        [
            calls(
                ("find_commands", {"query": ""}),
                ("find_commands", {"query": "COMMENT"}),
                ("find_commands", {"query": "no such thing"}),
            ),
            say("Found them."),
        ]
    )

    every, comment, none = (str(part.content) for part in run.requests[1].returns())
    listed = [line for line in every.splitlines() if line.startswith("- ")]
    assert len(listed) == 10
    assert every.startswith("Commands matching '': 13.\n")
    assert every.endswith("3 more match: narrow the query to see them.")
    assert every.splitlines()[1:4] == [
        "- select.text: Select text: the nth match (from 1), case-sensitive, within one "
        "paragraph (does not change the file)",
        "    text: string, required",
        "    occurrence: n, optional",
    ]
    assert (
        "- caret.docEnd: Move the caret to the document's end (does not change the file) "
        "(no parameters)"
    ) in listed
    assert comment == (
        "Commands matching 'COMMENT': 1.\n"
        "- review.newComment: New comment on the selection, or the word at the caret\n"
        "    text: string, required"
    )
    assert none == "No command matches 'no such thing': try another word, or an empty query."
    assert run.tool_returns() == [("find_commands", "ok")] * 3


# ─── editing ──────────────────────────────────────────────────────────────────


async def test_an_edit_of_a_kind_agents_may_change_is_applied_as_a_new_version(
    world: World,
) -> None:
    doc = await world.upload(kind=DirectDocument)
    edit = call(
        "edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="A cat now."
    )

    run = await world.run([edit, say("Done.")])

    assert str(run.requests[1].returned().content) == (
        f"Done: {doc} is now at version 2.\n"
        "What it changes, as the app read the document (1; words [-removed-]{+added+}):\n"
        '- paragraph 3: "The quick brown fox jumps over the lazy dog." → "The quick brown cat '
        'jumps over the lazy dog."; words: The quick brown [-fox-]{+cat+} jumps over the lazy dog.'
    )
    ws = await world.ws()
    now = await ws.get(DirectDocument, doc)
    assert now.version == 2
    assert now.data.provenance.source == "commands"
    assert now.updated_by.kind == "agent"
    assert "The quick brown cat jumps" in await world.files.text(ws, doc)
    [revision] = [r for r in await ws.revisions(doc) if r.version == 2]
    assert revision.patch is not None
    assert run.tool_returns() == [("edit_native", "ok")]
    assert await proposals(world) == []


async def test_an_agents_edit_of_a_word_document_becomes_a_proposal(world: World) -> None:
    doc = await world.upload()
    edit = call(
        "edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="A cat now."
    )

    run = await world.run([edit, say("Proposed.")])

    answer = str(run.requests[1].returned().content)
    [proposal] = await proposals(world)
    assert answer.startswith(
        f"Proposed as {proposal.id}. A person will review it; you will be told whether it was "
        "accepted.\nWhat it changes, as the app read the document (1; "
    )
    assert answer.endswith("words: The quick brown [-fox-]{+cat+} jumps over the lazy dog.")
    assert proposal.artifact_id == doc
    assert proposal.change.summary == "A cat now."
    assert (await head(world, doc)).version == 1
    assert run.tool_returns() == [("edit_native", "ok")]


async def test_a_word_edits_answer_tells_each_paragraph_heading_comment_and_style_it_changed(
    world: World,
) -> None:
    doc = await world.upload()
    batch = [
        {"command": "select.text", "params": {"text": "Sales rose"}},
        {"command": "review.newComment", "params": {"text": "Which year?"}},
        {"command": "select.text", "params": {"text": "Details"}},
        {"command": "para.style", "params": {"style": "Heading 1"}},
        {"command": "caret.docEnd"},
        {"command": "text.insert", "params": {"text": "\rA new closing line."}},
        {"command": "edit.replaceAll", "params": {"text": "lazy dog", "with": "sleepy hound"}},
    ]
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=batch, summary="More.")

    run = await world.run([edit, say("Proposed.")])

    [proposal] = await proposals(world)
    lines = str(run.requests[1].returned().content).splitlines()
    assert lines[0] == (
        f"Proposed as {proposal.id}. A person will review it; you will be told whether it was "
        "accepted."
    )
    assert (
        lines[1] == "What it changes, as the app read the document (6; words [-removed-]{+added+}):"
    )
    assert lines[2] == (
        '- paragraph 3: "The quick brown fox jumps over the lazy dog." → "The quick brown fox '
        'jumps over the sleepy hound."; words: …jumps over the [-lazy-]{+sleepy+} '
        "[-dog-]{+hound+}."
    )
    assert lines[3] == '- paragraph 6 added: "A new closing line."'
    assert lines[4:6] == [
        '- heading removed: "Details" (level 2)',
        '- heading added: "Details" (level 1)',
    ]
    assert re.fullmatch(r'- comment \S+ added: "Which year\?" on "Sales rose" by .+', lines[6])
    assert lines[7] == '- style set: "Heading 1"'


async def test_a_batch_that_changes_nothing_is_told_unchanged(world: World) -> None:
    doc = await world.upload()
    select = [{"command": "select.text", "params": {"text": "fox"}}]
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=select, summary=" ")

    run = await world.run([edit, say("Nothing to do.")])

    assert str(run.requests[1].returned().content) == (
        f"Unchanged: the batch left {doc} as it was, so no revision was made; it is still at "
        "version 1."
    )
    assert await proposals(world) == []
    assert run.tool_returns() == [("edit_native", "ok")]


# ─── busy files ───────────────────────────────────────────────────────────────


async def test_a_persons_check_out_is_answered_then_the_edit_goes_through_after_check_in(
    world: World,
) -> None:
    doc = await world.upload()
    bob = await world.ws(BOB)
    checkout = await world.files.check_out(bob, doc)
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    first = await world.run([edit, say("Bob has it checked out; I will wait.")])

    answer = str(first.requests[1].returned().content)
    until = rfc3339(checkout.expires_at)
    assert RFC3339_Z.fullmatch(until)  # UTC with a Z, as every time an answer gives
    assert answer.startswith(
        f"Not edited: {doc} is checked out by Bob (user:bob) until {until}, and nothing was "
        "changed."
    )
    assert "Plan again once it is checked in" in answer
    assert first.requests[1].returned().outcome == "success"
    assert first.tool_returns() == [("edit_native", "ok")]
    assert first.ended().status == "completed"
    assert await proposals(world) == []

    edited = build_docx(["Quarterly report", "The quick brown fox naps.", "Bob was here."])
    checked_in = await world.files.check_in(bob, checkout.id, chunks(edited))
    assert checked_in.status == "applied"
    again = call("edit_native", artifact_id=doc, base_version=2, commands=REPLACE, summary="Cat.")

    second = await world.run(
        [call("read_native", artifact_id=doc), again, say("Proposed.")],
        "Bob checked it in: try again.",
    )

    told = prompt_text(second.requests[0])
    assert "<workspace-changes>" in told
    assert doc in told.split("<workspace-changes>", 1)[1]
    assert "(word_document, v2)" in str(second.requests[1].returned().content)
    [proposal] = await proposals(world)
    assert str(second.requests[2].returned().content).startswith(f"Proposed as {proposal.id}.")
    assert second.tool_returns() == [("read_native", "ok"), ("edit_native", "ok")]


async def test_a_check_out_whose_record_is_gone_is_answered_with_its_holder(world: World) -> None:
    doc = await world.upload()
    checkout = await world.files.check_out(await world.ws(BOB), doc)
    await world.checkouts.remove(world.scope, checkout.id)
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    run = await world.run([edit, say("Later.")])

    answer = str(run.requests[1].returned().content)
    assert f"is checked out by user:bob until {rfc3339(checkout.expires_at)}," in answer
    assert "+00:00" not in answer


async def test_another_agents_edit_is_retried_and_the_edit_goes_through_once_it_ends(
    world: World,
) -> None:
    doc = await world.upload()
    held = await world.leases.acquire(world.scope, doc, "edit:other-run", timedelta(seconds=45))
    assert held is not None
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    async def after_the_other_edit(request: Request) -> ModelResponse:
        returned = request.returned()
        assert returned.outcome == "retried"
        until = rfc3339(held.expires_at)
        assert RFC3339_Z.fullmatch(until)
        assert f"artifact {doc} is held by edit:other-run until {until}" in str(returned.content)
        await world.leases.release(world.scope, doc, "edit:other-run")
        return edit

    run = await world.run([edit, after_the_other_edit, say("Proposed.")])

    [proposal] = await proposals(world)
    assert str(run.requests[2].returned().content).startswith(f"Proposed as {proposal.id}.")
    assert run.tool_returns() == [("edit_native", "retry"), ("edit_native", "ok")]
    assert run.ended().status == "completed"


class LapsingLeases:
    """Leases whose next acquire is refused by a lease that has ended by the time it is read."""

    def __init__(self, inner: Leases) -> None:
        self.inner = inner
        self.lapses = 1

    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        if self.lapses:
            self.lapses -= 1
            return None
        return await self.inner.acquire(scope, artifact_id, holder, ttl)

    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        return await self.inner.current(scope, artifact_id)

    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        return await self.inner.release(scope, artifact_id, holder)


async def test_a_lease_that_ended_before_it_was_read_is_retried(world: World) -> None:
    doc = await world.upload()
    world.files.leases = LapsingLeases(world.leases)
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    run = await world.run([edit, edit, say("Proposed.")])

    assert str(run.requests[1].returned().content) == (
        f"artifact {doc} was busy, and is free now: try again"
    )
    assert len(await proposals(world)) == 1
    assert run.tool_returns() == [("edit_native", "retry"), ("edit_native", "ok")]


# ─── refusals ─────────────────────────────────────────────────────────────────


async def test_a_stale_base_is_retried_with_read_the_artifact_again(world: World) -> None:
    doc = await world.upload()
    moved = [AppCommand(command="edit.replaceAll", params={"text": "dog", "with": "hen"})]
    await world.files.edit(await world.ws(ALICE), doc, base_version=1, commands=moved)
    stale = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")
    fresh = call("edit_native", artifact_id=doc, base_version=2, commands=REPLACE, summary="Cat.")

    run = await world.run([stale, call("read_native", artifact_id=doc), fresh, say("Proposed.")])

    retried = run.requests[1].returned()
    assert retried.outcome == "retried"
    assert str(retried.content) == (
        # artifactr's VersionConflict has no full stop, and the capability's hint follows it
        f"artifact {doc} is at version 2, but the change was based on 1 Read the artifact "
        "again, then retry."
    )
    assert "(word_document, v2)" in str(run.requests[2].returned().content)
    assert len(await proposals(world)) == 1
    assert run.tool_returns() == [
        ("edit_native", "retry"),
        ("read_native", "ok"),
        ("edit_native", "ok"),
    ]


async def test_the_apps_refusal_is_retried_with_its_reason(world: World) -> None:
    doc = await world.upload()
    missing = [{"command": "select.text", "params": {"text": "zebra"}}]
    refused = call("edit_native", artifact_id=doc, base_version=1, commands=missing, summary="Z.")
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    run = await world.run([refused, edit, say("Proposed.")])

    retried = run.requests[1].returned()
    assert retried.outcome == "retried"
    assert str(retried.content) == "not found: `zebra`"
    assert len(await proposals(world)) == 1
    assert run.tool_returns() == [("edit_native", "retry"), ("edit_native", "ok")]


@pytest.mark.parametrize(
    ("kind", "told"),
    [
        ("timeout", "it ran out of time"),
        ("crashed", "it crashed"),
        ("too_large", "the file is too large for it"),
    ],
)
async def test_a_timeout_a_crash_or_a_file_too_large_fails_the_call_not_the_run(
    world: World, kind: FailureKind, told: str
) -> None:
    doc = await world.upload()
    world.app.fail_next(kind, "apply")
    # A told timeout waits out the deadline: the agent's service here has a short one.
    world.files = world.with_deadline(0.01)
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=REPLACE, summary="Cat.")

    run = await world.run([edit, say("The app failed; I told the person.")])

    failed = run.requests[1].returned()
    assert failed.outcome == "failed"
    assert str(failed.content).startswith(f"The app could not edit {doc}: {told} (")
    assert str(failed.content).endswith(
        "Trying again at once won't help: tell the person, or try a smaller change later."
    )
    assert run.tool_returns() == [("edit_native", "error")]
    assert run.ended().status == "completed"
    assert await proposals(world) == []


async def test_arguments_the_model_got_wrong_are_retried_naming_every_wrong_one(
    world: World,
) -> None:
    doc = await world.upload()
    note = await (await world.ws()).create(Note(text="Not a file."))
    wrong = [
        {"command": "no.such"},
        {"command": "edit.replaceAll", "params": {"text": "fox", "with": "cat"}},
        {"command": "also.not"},
    ]
    first = calls(
        ("read_native", {"artifact_id": "art_missing", "start": -1}),
        ("read_review", {"artifact_id": note.artifact_id}),
        ("edit_native", {"artifact_id": doc, "base_version": 7, "commands": wrong, "summary": ""}),
        ("view_page", {"artifact_id": doc, "page": 0}),
    )
    second = calls(
        ("read_native", {"artifact_id": doc, "start": 10**6}),
        ("read_review", {"artifact_id": doc, "start": 1}),
        ("edit_native", {"artifact_id": "art_missing", "base_version": 1, "commands": []}),
        ("view_page", {"artifact_id": doc, "page": 2}),
    )

    run = await world.run([first, second, say("I will fix my arguments.")], view=True)

    answers = [{p.tool_name: str(p.content) for p in r.returns()} for r in run.requests[1:]]
    assert {p.outcome for r in run.requests[1:] for p in r.returns()} == {"retried"}
    assert answers[0] == {
        "read_native": "read_native did nothing, as some arguments are wrong:\n"
        "- artifact_id: there is no artifact 'art_missing' here; list_artifacts lists them\n"
        "- start: -1 is before the start; begin at 0",
        "read_review": "read_review did nothing, as some arguments are wrong:\n"
        f"- artifact_id: {note.artifact_id} is a tools_note, not a native file of fake's; "
        "read_artifact reads it",
        "edit_native": "edit_native did nothing, as some arguments are wrong:\n"
        "- commands[0].command: 'no.such' is not one of the app's commands; find_commands "
        "lists them\n"
        "- commands[2].command: 'also.not' is not one of the app's commands; find_commands "
        "lists them\n"
        f"- base_version: {doc} is at version 1, not 7; read it again before you edit it",
        "view_page": "view_page did nothing, as some arguments are wrong:\n"
        "- page: pages count from 1, not 0",
    }
    assert "summary" in answers[1]["edit_native"]  # the schema's own check comes first
    assert answers[1]["read_native"] == (
        "read_native did nothing, as some arguments are wrong:\n"
        "- start: 1000000 is past the end, as there are 129 characters"
    )
    assert answers[1]["read_review"] == (
        "read_review did nothing, as some arguments are wrong:\n"
        "- start: 1 is past the end, as there are 0 items"
    )
    assert answers[1]["view_page"] == (
        "view_page did nothing, as some arguments are wrong:\n"
        f"- page: {doc} has pages 1 to 1, not 2"
    )
    statuses = run.tool_returns()
    assert len(statuses) == 7  # a call the schema refuses never reaches the tool or the log
    assert {status for _, status in statuses} == {"retry"}
    assert run.ended().status == "completed"


async def test_an_empty_batch_on_a_missing_file_names_both(world: World) -> None:
    empty = call("edit_native", artifact_id="art_missing", base_version=1, commands=[], summary="")

    run = await world.run([empty, say("I will fix it.")])

    assert str(run.requests[1].returned().content) == (
        "edit_native did nothing, as some arguments are wrong:\n"
        "- artifact_id: there is no artifact 'art_missing' here; list_artifacts lists them\n"
        "- commands: the batch is empty; send at least one command"
    )
    assert run.tool_returns() == [("edit_native", "retry")]


async def test_a_loop_of_refusals_fails_the_run(world: World) -> None:
    doc = await world.upload()
    bad = [{"command": "no.such"}]
    edit = call("edit_native", artifact_id=doc, base_version=1, commands=bad, summary="Hm.")

    run = await world.run([edit] * (MAX_RETRIES + 1))

    assert len(run.requests) == MAX_RETRIES + 1
    assert run.tool_returns() == [("edit_native", "retry")] * MAX_RETRIES + [
        ("edit_native", "error")
    ]
    ended = run.ended()
    assert ended.status == "failed"
    assert ended.error is not None
    assert f"exceeded max retries count of {MAX_RETRIES}" in ended.error
    assert run.error is not None


# ─── the switch ───────────────────────────────────────────────────────────────


async def test_the_tools_are_hidden_from_every_step_while_the_app_is_off(world: World) -> None:
    await world.upload()
    world.switch.set("t1", "w1", world.files.key, enabled=False)
    world.switch.reads = 0

    off = await world.run([call("list_artifacts"), say("Nothing I can edit.")], view=True)

    assert [request.tools for request in off.requests] == [GENERIC_TOOLS] * 2
    assert world.switch.reads == len(off.requests)
    assert off.tool_returns() == [("list_artifacts", "ok")]

    world.switch.set("t1", "w1", world.files.key, enabled=True)
    on = await world.run([say("Now I can.")], view=True)

    assert set(NATIVE_TOOLS) | {"view_page"} <= set(on.requests[0].tools)


# ─── pages ────────────────────────────────────────────────────────────────────


async def test_view_page_shows_the_model_the_rendered_page(world: World) -> None:
    doc = await world.upload()

    run = await world.run([call("view_page", artifact_id=doc, page=1), say("I see it.")], view=True)

    returned = run.requests[1].returned()
    assert returned.outcome == "success"
    caption, image = returned.content
    assert caption == f"{doc} (word_document, v1) 'report.docx': page 1 of 1."
    assert isinstance(image, BinaryContent)
    assert image.media_type == "image/png"
    assert image.is_image
    assert image.data.startswith(b"\x89PNG\r\n\x1a\n")
    assert image.data == await world.files.render(await world.ws(), doc, 1, 1)
    assert run.tool_returns() == [("view_page", "ok")]


async def test_a_page_the_app_cannot_render_fails_the_call(world: World) -> None:
    doc = await world.upload()
    world.app.fail_next("crashed", "render")

    run = await world.run([call("view_page", artifact_id=doc, page=1), say("No.")], view=True)

    failed = run.requests[1].returned()
    assert failed.outcome == "failed"
    assert str(failed.content).startswith(f"The app could not render page 1 of {doc}: it crashed")
    assert run.tool_returns() == [("view_page", "error")]


async def test_view_page_is_offered_only_with_view(world: World) -> None:
    run = await world.run([say("Hello.")])

    assert "view_page" not in run.requests[0].tools
    assert set(NATIVE_TOOLS) <= set(run.requests[0].tools)
