"""Wording: what the native file tools are called and say, on every surface (ADR-0012).

The toolset and the MCP tools take from here each tool's name, description and parameters (a
:class:`ToolWording`), the amounts a call gives (:data:`READ_CHARS`, :data:`REVIEW_ITEMS`,
:data:`MAX_COMMANDS`), and every sentence of an answer or a refusal. Constants and pure functions
only.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from artifactr.core import Rejection, VersionConflict

READ_CHARS: Final = 8_000
"""How many characters of a file's text ``read_native`` gives a call."""

REVIEW_ITEMS: Final = 50
"""How many comments and tracked changes ``read_review`` gives a call."""

LIST_FILES: Final = 50
"""How many files ``list_files`` gives a call (issue 41)."""

MAX_COMMANDS: Final = 10
"""How many of the app's commands ``find_commands`` lists."""

MAX_CHANGES_TOLD: Final = 50
"""How many of an edit's changes (cells, slides, paragraphs) ``edit_native``'s answer lists."""

NATIVE_FILE: Final = "a Word document, an Excel workbook or a PowerPoint deck"
"""What a native file is, as a parameter's description names it."""

STALE_HINT: Final = " Read the artifact again, then retry."
"""What follows a stale base's refusal, as artifactr's agent capability adds it."""


@dataclass(frozen=True)
class ToolWording:
    """A tool's name, what it does and what each of its parameters is, as the model reads them."""

    name: str
    """The tool's name."""

    description: str
    """What the tool does: a line, then paragraphs."""

    params: Mapping[str, str]
    """Each parameter's description, in the tool's order; a line break continues it."""

    def docstring(self) -> str:
        """Return the wording as a Google-style docstring, which pydantic-ai reads."""
        args = "".join(
            f"    {name}: " + "\n        ".join(text.splitlines()) + "\n"
            for name, text in self.params.items()
        )
        return f"{self.description}\n\nArgs:\n{args}"


WORKSPACE_ID: Final = "The workspace the file is in; list_workspaces lists them."
"""The MCP tools' ``workspace_id``: an MCP session may work in any workspace it may open."""

READ_NATIVE: Final = ToolWording(
    "read_native",
    f"Read a native file's text, {READ_CHARS:,} characters a call, as the app reads it.\n\n"
    "A Word document's text is the body's words, one line a paragraph, without formatting or\n"
    "pictures; the first call names its paragraph and character styles, which a command's\n"
    "`style` takes. A workbook's is each sheet, `# Sheet: Budget (A1:B4)`, then a line a row: the\n"
    "row's number, then its cells from column A, tab-separated, each as its computed value,\n"
    "with the formula after the value where the cell has one: `1500 (=SUM(B2:B3))`.\n"
    "A deck's is each slide, `# Slide 2: Its title`, then its text and tables (rows of\n"
    "tab-separated cells), then `Notes: ` and its speaker notes.\n"
    "The answer names the file's version, the characters it holds, and where to read on.",
    {
        "artifact_id": f"The native file ({NATIVE_FILE}) to read.",
        "start": "The character to read from: 0 at first, then the start each answer gives,\n"
        "until it says the text has ended.",
    },
)

FILES: Final = ToolWording(
    "list_files",
    f"List the workspace's native files, {LIST_FILES} a call, oldest first.\n\n"
    "Each line is a file: its id, kind, version and name, then its size. The answer says\n"
    "which files it shows of how many, and the start to ask for the next ones with.",
    {
        "start": "The file to list from: 0 at first, then the start each answer gives.",
    },
)

READ_REVIEW: Final = ToolWording(
    "read_review",
    f"Read a native file's comments and tracked changes, {REVIEW_ITEMS} a call, as the app "
    "gives them.\n\n"
    "Each line is one item as JSON: `kind` is `comment` or `change`, with the app's\n"
    "`id`, `author`, `date` and `text`; a change says whether it is an `insert` or a\n"
    "`delete`, and a comment may name the `anchor` it is on: a text, a workbook's cell\n"
    "(`Budget!A2`) or a deck's slide (`slide 2`).",
    {
        "artifact_id": f"The native file ({NATIVE_FILE}) whose review to read.",
        "start": "The item to read from: 0 at first, then the start each answer gives.",
    },
)

FIND_COMMANDS: Final = ToolWording(
    "find_commands",
    "Find the app's commands by the words of their id or description, ten at most.\n\n"
    "The commands that match the most of your words, in any order, come first. Each is\n"
    "listed with a line a parameter (its name, type, allowed values, and whether it is\n"
    'required), which `edit_native` takes as `{"command": id, "params": {...}}`; a query\n'
    "of one command's id alone gives its full JSON schema too.\n"
    "A batch takes the commands of its file's format only. Where the app edits workbooks and\n"
    "decks too, a workbook's commands are labelled `Workbook:` (cells, ranges, rows, columns,\n"
    "sheets, formulas) and a deck's `Deck:` (slides, their titles, text and notes): put\n"
    "`workbook` or `deck` in your query to find them first.",
    {
        "query": "Words to look for, such as `replace all`, `add a comment`, `style`,\n"
        "`workbook set cell` or `deck move slide`; an empty query lists the catalog from its\n"
        "start.",
    },
)

EDIT_NATIVE: Final = ToolWording(
    "edit_native",
    "Edit a native file with one batch of the app's commands, run in order.\n\n"
    "The batch runs as one edit by the app, on `base_version`, which must be the\n"
    "file's version now. If the app refuses a command, the batch changes nothing. Your edit\n"
    "may become a proposal for a person to review. If a person has the file checked out,\n"
    "you are told who and until when, and nothing is changed.\n"
    "A workbook is recalculated as it is saved. The answer lists what the edit changed, as the\n"
    "app read it: a workbook's cells before and after, such as\n"
    "`Budget!B4: 1500 (=SUM(B2:B3)) → 1650 (=SUM(B2:B3))`, and each sheet or slide added,\n"
    "removed, moved or changed; a Word document's paragraphs by number, before and after with\n"
    "the words marked, such as\n"
    '`paragraph 3: "Fee: 100" → "Fee: 120"; words: Fee: [-100-]{+120+}`, and each table cell,\n'
    "heading, comment, tracked change and style set.",
    {
        "artifact_id": f"The native file ({NATIVE_FILE}) to edit.",
        "base_version": "The version you read, which the batch is based on.",
        "commands": 'The app\'s commands, in order, each `{"command": id, "params": {...}}`;\n'
        "`find_commands` lists them with their parameters. A workbook's are those labelled\n"
        "`Workbook:` (`cell.set` sets a value or a formula, in Excel's syntax with English\n"
        "function names), a deck's those labelled `Deck:`.",
        "summary": "What the change does, in a sentence, shown to people.",
    },
)

VIEW_PAGE: Final = ToolWording(
    "view_page",
    "Look at one page of a native file, laid out and rendered by the app, as an image.",
    {
        "artifact_id": f"The native file ({NATIVE_FILE}) to look at.",
        "page": "The page, from 1: a deck's slide, or a workbook's printed page;\n"
        "`read_artifact` says how many there are.",
    },
)

FAILED: Final = {
    "timeout": "it ran out of time",
    "crashed": "it crashed",
    "too_large": "the file is too large for it",
}
"""How an answer names each way the app fails, by
:data:`~artifactr.files.core.errors.FailureKind`."""


# ─── refusals ─────────────────────────────────────────────────────────────────


def wrong_arguments(tool: str, problems: Sequence[str]) -> str:
    """Return the refusal of a call whose arguments are wrong, naming every wrong one."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return f"{tool} did nothing, as some arguments are wrong:\n{listed}"


def refusal(rejection: Rejection) -> str:
    """Return what an agent is told of a refusal: its message, and for a stale base, a hint."""
    hint = STALE_HINT if isinstance(rejection, VersionConflict) else ""
    return rejection.message + hint


def app_failed(doing: str, kind: str, reason: str) -> str:
    """Return what an agent is told when the app could not do something, and retrying won't help.

    Args:
        doing: What the app could not do, after "could not" ("edit art_1").
        kind: How it failed: ``timeout``, ``crashed`` or ``too_large``.
        reason: The app's own words.
    """
    return (
        f"The app could not {doing}: {FAILED[kind]} ({reason}). Trying "
        "again at once won't help: tell the person, or try a smaller change later."
    )


def checked_out(artifact_id: str, who: str, until: str) -> str:
    """Return the answer to an edit of a file a person has checked out.

    Args:
        artifact_id: The file.
        who: The person, by name and id where known.
        until: When the check-out ends, in RFC 3339 in UTC (``2026-11-30T20:00:00Z``), as
            every time an answer gives.
    """
    return (
        f"Not edited: {artifact_id} is checked out by {who} until {until}, and nothing "
        "was changed. They are editing it in the app, and their check-in will change it. Don't "
        "retry now, and don't propose this change, which would be stale when they check it in. "
        "Plan again once it is checked in: read it then, and base your edit on that version. "
        "Tell the person what you meant to change."
    )


def proposed_over_mcp(
    proposal_id: str, artifact_id: str, version: int, acts_for: str | None
) -> str:
    """Return what an MCP client is told of its proposal, in place of artifactr's words.

    An MCP client has no thread to be told the decision in, so it is told how to learn it; and
    who decides: artifactr refuses a proposal's author, looking through the person a client acts
    for, so that person cannot accept it.

    Args:
        proposal_id: The proposal.
        artifact_id: The file it would change.
        version: The version it was based on.
        acts_for: The person the client acts for, by name; None for a client acting for no one.
    """
    who = (
        f"someone other than {acts_for} decides, as what you propose for them is theirs and no "
        "one decides their own proposal"
        if acts_for is not None
        else "someone who may change the file decides"
    )
    return (
        f"Proposed as {proposal_id}. A person will review it: {who}. You will not be told the "
        f"decision, as an MCP client has no thread: read {artifact_id} again later (read_native "
        f"or read_artifact); its version moves past {version} when a proposal is accepted."
    )


def unchanged(artifact_id: str, version: int) -> str:
    """Return the answer to a batch that left the file as it was."""
    return (
        f"Unchanged: the batch left {artifact_id} as it was, so no revision was made; "
        f"it is still at version {version}."
    )


# ─── the problems a refusal lists ─────────────────────────────────────────────


def no_artifact(artifact_id: str) -> str:
    """Return the problem of an artifact that is missing, or hidden from the caller."""
    return f"artifact_id: there is no artifact {artifact_id!r} here; list_artifacts lists them"


def not_native(artifact_id: str, kind: str, app: str) -> str:
    """Return the problem of an artifact that is not one of the app's native files."""
    return (
        f"artifact_id: {artifact_id} is a {kind}, not a native file of {app}'s; "
        "read_artifact reads it"
    )


def before_start(start: int) -> str:
    """Return the problem of a negative ``start``."""
    return f"start: {start} is before the start; begin at 0"


def past_end(start: int, total: int, unit: str) -> str:
    """Return the problem of a ``start`` past the end of ``total`` characters or items."""
    return f"start: {start} is past the end, as there are {total} {unit}"


def unknown_command(number: int, command: str) -> str:
    """Return the problem of a command the app's catalog lacks, by its place in the batch."""
    return (
        f"commands[{number}].command: {command!r} is not one of the app's commands; "
        "find_commands lists them"
    )


EMPTY_BATCH: Final = "commands: the batch is empty; send at least one command"
"""The problem of an empty batch."""


def stale_base(artifact_id: str, head: int, base: int) -> str:
    """Return the problem of a ``base_version`` that is not the head, beside other problems."""
    return (
        f"base_version: {artifact_id} is at version {head}, not {base}; read it again before "
        "you edit it"
    )


def page_before_one(page: int) -> str:
    """Return the problem of a page below 1."""
    return f"page: pages count from 1, not {page}"


def page_past_end(artifact_id: str, pages: int, page: int) -> str:
    """Return the problem of a page past the file's last."""
    return f"page: {artifact_id} has pages 1 to {pages}, not {page}"


# ─── answers ──────────────────────────────────────────────────────────────────


def title(artifact_id: str, kind: str, version: int, name: str) -> str:
    """Return how an answer names a file: id, kind, version and name."""
    return f"{artifact_id} ({kind}, v{version}) {name!r}"


def file_page(start: int, total: int, lines: Sequence[str]) -> str:
    """Return a page of the workspace's files, one a line, saying how to ask for more."""
    if not total:
        return "There are no native files here."
    end = start + len(lines)
    shown = f"Files {start + 1}-{end} of {total:,}" if lines else f"No files past {total:,}"
    onward = (
        f"ask for the next page with start={end}." if end < total else "that is the last of them."
    )
    listed = "".join(f"\n{line}" for line in lines)
    return f"{shown}; {onward}{listed}"


def text_page(
    heading: str, start: int, end: int, total: int, text: str, *, styles: str | None = None
) -> str:
    """Return a page of a file's text, saying where to read on; the first names the styles."""
    onward = (
        f"The text goes on: read on with start={end}."
        if end < total
        else "That is the end of the text."
    )
    named = "" if styles is None else f"\n{styles}"
    return f"{heading}: characters {start} to {end} of {total}.{named}\n\n{text}\n\n{onward}"


def styles(paragraph: Sequence[str], character: Sequence[str]) -> str:
    """Return the line that names a Word document's styles, for a command's ``style``."""
    return (
        f"Paragraph styles: {', '.join(paragraph) or '(none)'}. Character styles: "
        f"{', '.join(character) or '(none)'}."
    )


def review_page(
    heading: str, start: int, end: int, total: int, comments: int, lines: Sequence[str]
) -> str:
    """Return a page of a file's review, one JSON item a line, saying where to read on."""
    onward = (
        f"The review goes on: read on with start={end}."
        if end < total
        else "That is the end of the review."
    )
    listed = "".join(line + "\n" for line in lines)
    return (
        f"{heading}: items {start} to {end} of {total} (comments: {comments}, "
        f"tracked changes: {total - comments}).\n\n{listed}\n{onward}"
    )


def commands_found(
    query: str,
    lines: Sequence[str],
    found: int,
    *,
    schema: tuple[str, object] | None = None,
    schemas: bool = False,
) -> str:
    """Return the commands found for a query: at most :data:`MAX_COMMANDS` of ``found``.

    Args:
        query: The query.
        lines: The commands listed, each as :func:`command_line` gives it.
        found: How many match.
        schema: The one command the query names by its id, and its parameters' JSON schema
            (None if the app gives none).
        schemas: Whether the app gives the listed commands' JSON schemas, to ask for.
    """
    if not found:
        return f"No command matches {query!r}: try another word, or an empty query."
    more = found - len(lines)
    rest = f"\n{more} more match: narrow the query to see them." if more > 0 else ""
    if schema is not None and schema[1] is not None:
        command, full = schema
        rest += f"\n{command}'s parameters as a JSON schema: {json.dumps(full)}"
    elif schema is None and schemas:
        rest += "\nAsk for one command by its id alone to see its parameters' JSON schema."
    return f"Commands matching {query!r}: {found}.\n" + "\n".join(lines) + rest


def command_line(command: str, params: Sequence[str], label: str, *, mutates: bool) -> str:
    """Return one command as ``find_commands`` lists it: its label, then a line a parameter."""
    head = f"- {command}: {label}" + ("" if mutates else " (does not change the file)")
    if not params:
        return head + " (no parameters)"
    return head + "".join(f"\n    {param}" for param in params)


def kind_changes(told: str, lines: Sequence[str], total: int, *, cut: bool) -> str:
    """Return an edit's answer with what it changed in a workbook's or a deck's own terms.

    Args:
        told: The outcome, as the model is told it.
        lines: The changes listed, at most :data:`MAX_CHANGES_TOLD`, one a line.
        total: How many changes the diff holds.
        cut: Whether the diff itself was cut at its bound, so there may be more.
    """
    if not total:
        return (
            f"{told}\nIt changes no cell's value, no sheet and no slide's text: its change is "
            "elsewhere (formatting or a comment, say)."
        )
    more = total - len(lines)
    listed = "".join(f"\n- {line}" for line in lines)
    rest = f"\n…and {more} more." if more > 0 else ""
    bound = "\nThere are more: the list was cut at its bound." if cut else ""
    return f"{told}\nWhat it changes, as the app computed it ({total}):{listed}{rest}{bound}"


def word_changes(told: str, lines: Sequence[str], total: int, *, cut: bool) -> str:
    """Return an edit's answer with what it changed in a Word document's own terms.

    Args:
        told: The outcome, as the model is told it.
        lines: The changes listed, at most :data:`MAX_CHANGES_TOLD`, one a line.
        total: How many changes were found.
        cut: Whether the text's diff was cut at its bound, so there may be more.
    """
    if not total:
        return (
            f"{told}\nIt changes no paragraph's text, no heading, no comment and no tracked "
            "change: its change is formatting the text does not show (bold or italic, say)."
        )
    more = total - len(lines)
    listed = "".join(f"\n- {line}" for line in lines)
    rest = f"\n…and {more} more." if more > 0 else ""
    bound = "\nThere are more: the text's diff was cut at its bound." if cut else ""
    return (
        f"{told}\nWhat it changes, as the app read the document ({total}; words "
        f"[-removed-]{{+added+}}):{listed}{rest}{bound}"
    )


def page_caption(heading: str, page: int, pages: int | None) -> str:
    """Return the words beside a page's image."""
    of = "" if pages is None else f" of {pages}"
    return f"{heading}: page {page}{of}."
