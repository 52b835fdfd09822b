"""The native file tools on artifactr's MCP server, called by the official client (ADR-0012).

Each test connects the MCP SDK's ``Client`` over Streamable HTTP to a real ``ArtifactrMcp`` app
with :func:`add_native_file_tools`, on SQLite and PostgreSQL, and asserts on what an external
agent is answered: the toolset's words, an image for a page, a proposal for an edit, who has a
checked-out file, the switch's refusal, and a hidden file answered as a missing one.
"""

import base64
import re
from datetime import timedelta

import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import ExternalAgentActor, Forbidden, RespondToProposal
from mcp.types import ImageContent, TextContent

from artifactr.files import AppCommand, WordDocument
from artifactr.files.agent.wording import (
    EDIT_NATIVE,
    FILES,
    FIND_COMMANDS,
    READ_CHARS,
    READ_NATIVE,
    READ_REVIEW,
    VIEW_PAGE,
    WORKSPACE_ID,
)
from artifactr.files.core.clock import rfc3339
from artifactr.files.native import NativeFiles
from tests.agent.conftest import BOB, RFC3339_Z, DirectDocument
from tests.documents import build_docx
from tests.mcp.conftest import CLAUDE, Server, call, refusal, text
from tests.world import chunks

NATIVE_TOOLS = [
    "list_files",
    "read_native",
    "read_review",
    "find_commands",
    "edit_native",
    "view_page",
]
REPLACE = [{"command": "edit.replaceAll", "params": {"text": "fox", "with": "cat"}}]


def edit(doc: str, base_version: int = 1, commands: object = None) -> dict[str, object]:
    """The arguments of an edit that turns the fox into a cat."""
    return {
        "artifact_id": doc,
        "base_version": base_version,
        "commands": REPLACE if commands is None else commands,
        "summary": "A cat now.",
    }


# ─── the tools ────────────────────────────────────────────────────────────────


async def test_the_six_tools_are_listed_with_the_toolsets_words(server: Server) -> None:
    async with server.client() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(NATIVE_TOOLS) <= set(listed)
    assert {"read_artifact", "edit_artifact"} <= set(listed)  # the server's own stay
    for words in (FILES, READ_NATIVE, READ_REVIEW, FIND_COMMANDS, EDIT_NATIVE, VIEW_PAGE):
        tool = listed[words.name]
        assert tool.description == words.description
        properties = tool.input_schema["properties"]
        assert list(properties) == ["workspace_id", *words.params]
        assert properties["workspace_id"]["description"] == WORKSPACE_ID
        assert {name: properties[name]["description"] for name in words.params} == words.params
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (words is not EDIT_NATIVE)


async def test_view_page_is_left_out_when_the_application_says_so(server: Server) -> None:
    server.serve(server.workspaces, view=False)

    async with server.client() as client:
        names = {tool.name for tool in (await client.list_tools()).tools}

    assert set(NATIVE_TOOLS) - names == {"view_page"}


# ─── reading ──────────────────────────────────────────────────────────────────


async def test_a_long_text_is_read_in_pages_as_the_toolset_reads_it(server: Server) -> None:
    lines = [f"Line {n:03} " + "of the long report, which goes on and on. " * 2 for n in range(120)]
    doc = await server.upload(build_docx(lines))
    whole = await server.files.text(await server.ws(), doc)
    pages: list[str] = []

    async with server.client() as client:
        start: int | None = 0
        while start is not None:
            result = await call(client, "read_native", artifact_id=doc, start=start)
            assert not result.is_error
            answer = text(result)
            pages.append(answer.split("\n\n")[1])
            found = re.search(r"read on with start=(\d+)", answer)
            start = None if found is None else int(found[1])
        first = text(await call(client, "read_native", artifact_id=doc))

    assert first.startswith(f"{doc} (word_document, v1) 'report.docx': characters 0 to 8000")
    assert first.endswith(f"The text goes on: read on with start={READ_CHARS}.")
    assert "".join(pages) == whole
    assert len(pages) == 2


async def test_the_review_is_read_as_json_lines(server: Server) -> None:
    doc = await server.upload(build_docx(comment="Check the figures", insertion=" new"))

    async with server.client() as client:
        result = await call(client, "read_review", artifact_id=doc)

    assert not result.is_error
    answer = text(result)
    assert answer.startswith(
        f"{doc} (word_document, v1) 'report.docx': items 0 to 2 of 2 (comments: 1, tracked "
        "changes: 1).\n\n"
    )
    assert '"text": "Check the figures"' in answer
    assert answer.endswith("That is the end of the review.")


async def test_a_page_comes_back_as_an_image(server: Server) -> None:
    doc = await server.upload()

    async with server.client() as client:
        result = await call(client, "view_page", artifact_id=doc, page=1)

    assert not result.is_error
    caption, image = result.content
    assert isinstance(caption, TextContent)
    assert caption.text == f"{doc} (word_document, v1) 'report.docx': page 1 of 1."
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png == await server.files.render(await server.ws(), doc, 1, 1)


async def test_the_apps_commands_are_found_ten_at_most(server: Server) -> None:
    async with server.client() as client:
        every = text(await call(client, "find_commands", query=""))
        comment = text(await call(client, "find_commands", query="COMMENT"))

    assert every.startswith("Commands matching '': 13.\n")
    assert len([line for line in every.splitlines() if line.startswith("- ")]) == 10
    assert every.endswith("3 more match: narrow the query to see them.")
    assert comment == (
        "Commands matching 'COMMENT': 1.\n"
        "- review.newComment: New comment on the selection, or the word at the caret\n"
        "    text: string, required"
    )


# ─── editing ──────────────────────────────────────────────────────────────────


async def test_an_edit_becomes_a_proposal_by_the_external_agent(server: Server) -> None:
    doc = await server.upload()

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc))

    assert not result.is_error
    [proposal] = await (await server.ws()).proposals()
    assert text(result) == (
        f"Proposed as {proposal.id}. A person will review it: someone who may change the file "
        "decides. You will not be told the decision, as an MCP client has no thread: read "
        f"{doc} again later (read_native or read_artifact); its version moves past 1 when a "
        "proposal is accepted.\n"
        "What it changes, as the app read the document (1; words [-removed-]{+added+}):\n"
        '- paragraph 3: "The quick brown fox jumps over the lazy dog." → "The quick brown cat '
        'jumps over the lazy dog."; words: The quick brown [-fox-]{+cat+} jumps over the lazy dog.'
    )
    assert proposal.artifact_id == doc
    assert proposal.proposed_by == CLAUDE
    assert proposal.change.summary == "A cat now."
    assert (await (await server.ws()).get(WordDocument, doc)).version == 1


async def test_an_edit_of_a_kind_agents_may_change_is_told_done_with_its_changes(
    server: Server,
) -> None:
    files = NativeFiles(
        blobs=server.blobs,
        app=server.app,
        leases=server.leases,
        checkouts=server.checkouts,
        types=(DirectDocument,),
    )
    uploaded = await files.upload(await server.ws(), "direct.docx", chunks(build_docx()))
    doc = uploaded.artifact_id

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc))

    assert text(result).splitlines()[:2] == [
        f"Done: {doc} is now at version 2.",
        "What it changes, as the app read the document (1; words [-removed-]{+added+}):",
    ]


async def test_a_clients_proposal_for_a_person_is_decided_by_someone_else_and_says_so(
    server: Server,
) -> None:
    doc = await server.upload()
    erin = UserActor(id="erin", name="Erin")
    assistant = ExternalAgentActor(client_id="mcp", name="Erin's assistant", on_behalf_of=erin)
    server.serve(server.workspaces, client=assistant)
    batch = [
        {"command": "select.text", "params": {"text": "Sales rose"}},
        {"command": "review.newComment", "params": {"text": "Which year?"}},
        {"command": "edit.replaceAll", "params": {"text": "north", "with": "east"}},
    ]

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc, commands=batch))

    [proposal] = await (await server.ws()).proposals()
    lines = text(result).splitlines()
    assert lines[0] == (
        f"Proposed as {proposal.id}. A person will review it: someone other than Erin decides, "
        "as what you propose for them is theirs and no one decides their own proposal. You will "
        f"not be told the decision, as an MCP client has no thread: read {doc} again later "
        "(read_native or read_artifact); its version moves past 1 when a proposal is accepted."
    )
    assert lines[2] == (
        '- paragraph 5: "Sales rose in the north and fell in the south." → "Sales rose in the '
        'east and fell in the south."; words: Sales rose in the [-north-]{+east+} and fell in the '
        "south."
    )
    assert lines[3].startswith("- comment ")
    assert lines[3].endswith('added: "Which year?" on "Sales rose" by Erin\'s assistant')
    # As the answer says: Erin may not decide her assistant's proposal; Alice may.
    accept = RespondToProposal(proposal_id=proposal.id, decision="accept")
    with pytest.raises(Forbidden):
        await (await server.ws(erin)).commit(accept)
    await (await server.ws()).commit(accept)
    assert (await (await server.ws()).get(WordDocument, doc)).version == 2


async def test_a_client_reads_the_styles_then_a_misnamed_one_is_refused_with_the_nearest(
    server: Server,
) -> None:
    doc = await server.upload()
    misnamed = [
        {"command": "select.text", "params": {"text": "Details"}},
        {"command": "para.style", "params": {"style": "Heading Two"}},
    ]

    async with server.client() as client:
        read = text(await call(client, "read_native", artifact_id=doc))
        refused = await call(client, "edit_native", **edit(doc, commands=misnamed))

    assert read.splitlines()[1] == (
        "Paragraph styles: Normal, Title, Heading 1, Heading 2, Heading 3. Character styles: "
        "(none)."
    )
    assert refusal(refused).endswith(
        "no style `Heading Two`; the nearest: Heading 3, Heading 2, Heading 1; the document's: "
        "Normal, Title, Heading 1, Heading 2, Heading 3"
    )


async def test_a_batch_that_changes_nothing_is_told_unchanged(server: Server) -> None:
    doc = await server.upload()
    select = [{"command": "select.text", "params": {"text": "fox"}}]

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc, commands=select))

    assert text(result) == (
        f"Unchanged: the batch left {doc} as it was, so no revision was made; it is still at "
        "version 1."
    )
    assert await (await server.ws()).proposals() == []


# ─── busy files ───────────────────────────────────────────────────────────────


async def test_a_persons_check_out_is_an_answer_naming_who_and_until_when(server: Server) -> None:
    doc = await server.upload()
    checkout = await server.files.check_out(await server.ws(BOB), doc)

    async with server.client() as client:
        edited = await call(client, "edit_native", **edit(doc))
        others = [
            await call(client, "read_native", artifact_id=doc),
            await call(client, "read_review", artifact_id=doc),
            await call(client, "find_commands", query="replace"),
            await call(client, "view_page", artifact_id=doc, page=1),
        ]

    assert not edited.is_error
    until = rfc3339(checkout.expires_at)
    assert RFC3339_Z.fullmatch(until)  # UTC with a Z, as every time an answer gives
    assert text(edited).startswith(
        f"Not edited: {doc} is checked out by Bob (user:bob) until {until}, and nothing was "
        "changed."
    )
    assert "Plan again once it is checked in" in text(edited)
    assert await (await server.ws()).proposals() == []
    assert [r.is_error for r in others] == [False] * 4  # reading goes on while a person has it


async def test_another_agents_edit_is_refused_with_its_holder(server: Server) -> None:
    doc = await server.upload()
    held = await server.files.leases.acquire(
        server.scope, doc, "edit:other-run", timedelta(seconds=45)
    )
    assert held is not None

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc))

    until = rfc3339(held.expires_at)
    assert RFC3339_Z.fullmatch(until)
    assert refusal(result) == f"artifact {doc} is held by edit:other-run until {until}"


# ─── refusals ─────────────────────────────────────────────────────────────────


async def test_a_stale_base_says_to_read_again(server: Server) -> None:
    doc = await server.upload()
    moved = [AppCommand(command="edit.replaceAll", params={"text": "dog", "with": "hen"})]
    await server.files.edit(await server.ws(), doc, base_version=1, commands=moved)

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc, base_version=1))

    assert refusal(result) == (
        f"artifact {doc} is at version 2, but the change was based on 1 Read the artifact "
        "again, then retry."
    )


async def test_the_apps_refusal_carries_its_reason(server: Server) -> None:
    doc = await server.upload()
    missing = [{"command": "select.text", "params": {"text": "zebra"}}]

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc, commands=missing))

    assert refusal(result) == "not found: `zebra`"


async def test_the_apps_failure_says_retrying_wont_help(server: Server) -> None:
    doc = await server.upload()
    server.app.fail_next("timeout", "apply")
    # A told timeout waits out the deadline: the server's service here has a short one.
    server.files = server.with_deadline(0.01)
    server.serve(server.workspaces)

    async with server.client() as client:
        result = await call(client, "edit_native", **edit(doc))

    assert refusal(result).startswith(f"The app could not edit {doc}: it ran out of time (")
    assert refusal(result).endswith("try a smaller change later.")


async def test_wrong_arguments_are_named_all_at_once(server: Server) -> None:
    doc = await server.upload()
    note = await server.note()
    wrong = [{"command": "no.such"}, *REPLACE]

    async with server.client() as client:
        read = await call(client, "read_native", artifact_id="art_missing", start=-1)
        review = await call(client, "read_review", artifact_id=note)
        edited = await call(client, "edit_native", **edit(doc, base_version=7, commands=wrong))
        viewed = await call(client, "view_page", artifact_id=doc, page=2)

    assert refusal(read) == (
        "read_native did nothing, as some arguments are wrong:\n"
        "- artifact_id: there is no artifact 'art_missing' here; list_artifacts lists them\n"
        "- start: -1 is before the start; begin at 0"
    )
    assert refusal(review) == (
        "read_review did nothing, as some arguments are wrong:\n"
        f"- artifact_id: {note} is a tools_note, not a native file of fake's; read_artifact "
        "reads it"
    )
    assert refusal(edited) == (
        "edit_native did nothing, as some arguments are wrong:\n"
        "- commands[0].command: 'no.such' is not one of the app's commands; find_commands "
        "lists them\n"
        f"- base_version: {doc} is at version 1, not 7; read it again before you edit it"
    )
    assert refusal(viewed) == (
        f"view_page did nothing, as some arguments are wrong:\n- page: {doc} has pages 1 to 1, "
        "not 2"
    )


async def test_a_workspace_the_client_may_not_open_is_refused(server: Server) -> None:
    async def nobody(*_: object) -> bool:
        return False

    server.serve(Workspaces(server.storage, types=[WordDocument], authorize=nobody))
    async with server.client() as client:
        result = await call(client, "read_native", artifact_id="art_any")

    assert refusal(result) == "artifactr:open is refused in this workspace"


# ─── the switch and hiding ────────────────────────────────────────────────────


async def test_every_tool_is_refused_while_the_app_is_off_in_the_workspace(
    server: Server,
) -> None:
    doc = await server.upload()
    server.off()
    off = f"{server.files.key} is not enabled in this workspace"

    async with server.client() as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        results = [
            await call(client, "read_native", artifact_id=doc),
            await call(client, "read_review", artifact_id=doc),
            await call(client, "find_commands", query="replace"),
            await call(client, "edit_native", **edit(doc)),
            await call(client, "view_page", artifact_id=doc, page=1),
        ]
        server.switch.set("t1", "w1", server.files.key, enabled=True)
        on = await call(client, "read_native", artifact_id=doc)

    assert set(NATIVE_TOOLS) <= names  # a session is in no one workspace: listed, then refused
    assert [refusal(r) for r in results] == [off] * 5
    assert await (await server.ws()).proposals() == []
    assert not on.is_error


async def test_a_hidden_file_is_answered_as_a_missing_one(server: Server) -> None:
    doc = await server.upload()
    server.hidden.add(doc)

    async with server.client() as client:
        results = {
            "read_native": await call(client, "read_native", artifact_id=doc),
            "read_review": await call(client, "read_review", artifact_id=doc),
            "edit_native": await call(client, "edit_native", **edit(doc)),
            "view_page": await call(client, "view_page", artifact_id=doc, page=1),
        }

    missing = f"- artifact_id: there is no artifact {doc!r} here; list_artifacts lists them"
    for tool, result in results.items():
        assert refusal(result) == f"{tool} did nothing, as some arguments are wrong:\n{missing}"
    assert await (await server.ws()).proposals() == []


async def test_the_files_are_listed_a_page_at_a_time_as_the_toolset_lists_them(
    server: Server,
) -> None:
    doc = await server.upload()
    async with server.client() as client:
        answer = text(await call(client, "list_files"))
        past = refusal(await call(client, "list_files", start=5))

    assert answer == (
        f"Files 1-1 of 1; that is the last of them.\n{doc} (word_document, v1) 'report.docx', "
        + answer.rsplit(", ", 1)[1]
    )
    assert answer.endswith(" bytes")
    assert "start: 5 is past the end, as there are 1 files" in past
