"""Operations: what the native file tools do, whichever surface carries them (ADR-0012).

The agent's toolset (:mod:`artifactr.files.agent.tools`) and the MCP tools
(:mod:`artifactr.files.mcp`) are thin surfaces over the five functions here, one a tool. Each
acts as the workspace handle it is given, through :class:`NativeFiles`, and answers in
:mod:`artifactr.files.agent.wording`'s words. What a surface translates:

- :class:`WrongArguments`: every argument the model got wrong, named at once.
- :class:`CallFailed`: the app timed out, crashed or found the file too large.
- A :class:`~artifactr.core.Rejection` as it is (a busy file, a stale base, the app's refusal,
  the switch, a refused write).

A person's check-out is not raised: :func:`edit_native` answers who has the file and until when.
An edit is answered with what it changed in the kind's own terms (a workbook's cells and sheets,
a deck's slides, a Word document's paragraphs, headings, comments and styles:
:mod:`~artifactr.files.agent.changes`), read from what the app wrote, so an agent learns a
formula's recalculated value, or the words its batch really changed, even of a proposal it can't
read yet. ``follow`` is called with a file's id once a call has
found it, before the work.
"""

import json
import re
from collections.abc import Awaitable, Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, cast

from artifactr.core import Applied, Artifact, NotFound, Proposed
from artifactr.workspace import Workspace

from artifactr.files.agent import wording
from artifactr.files.agent.changes import Side, WordChanges, word_changes
from artifactr.files.core.app_port import AppCommand, CommandSpec
from artifactr.files.core.checkouts import Holder, parse_holder
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import AppFailure, AppRefused
from artifactr.files.core.leases import ArtifactBusy, ArtifactLease, scope_of
from artifactr.files.core.manifests import NativeFile, Presentation, Spreadsheet
from artifactr.files.core.visibility import visible
from artifactr.files.native import NativeFiles, Unchanged
from artifactr.files.native.diff import KindDiff, kind_diff

Follow = Callable[[str], Awaitable[None]]
"""Called with a file's id once a call has found it: the thread's focus, or nothing."""


class WrongArguments(Exception):
    """A tool did nothing, as some of its arguments are wrong; the message names every one."""

    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        super().__init__(wording.wrong_arguments(tool, problems))
        self.tool = tool
        self.problems = tuple(problems)


class CallFailed(Exception):
    """The app could not do the call (a timeout, a crash, a file too large); the message says so.

    It is raised from the app's :class:`~artifactr.files.core.errors.AppFailure`.
    """


@dataclass(frozen=True)
class Page:
    """A rendered page, with the words that go beside it."""

    caption: str
    """Which file, version and page it is."""

    png: bytes
    """The page, as a PNG."""


@dataclass(frozen=True)
class Edited:
    """An edit made: its outcome, and for a workbook or a deck, what it changed."""

    outcome: Applied | Proposed
    """A new version, or a proposal."""

    changes: KindDiff | WordChanges | None
    """What changed in the kind's own terms (cells, sheets, slides; a Word document's
    paragraphs, headings, comments and styles), between the base and the new version or the
    proposal; None where nothing is known."""

    def answer(self, told: str) -> str:
        """Return the answer: the outcome as told (``told``), then the changes, if any are kept.

        At most :data:`~wording.MAX_CHANGES_TOLD` changes are listed.
        """
        if self.changes is None:
            return told
        if isinstance(self.changes, WordChanges):
            word = self.changes
            return wording.word_changes(told, word.lines, word.total, cut=word.truncated)
        changes = self.changes.changes
        lines = [change.line for change in changes[: wording.MAX_CHANGES_TOLD]]
        return wording.kind_changes(told, lines, len(changes), cut=self.changes.truncated)


@dataclass(frozen=True)
class _Head:
    """A native file's head, as the tools found it."""

    artifact_id: str
    version: int
    data: NativeFile

    @property
    def title(self) -> str:
        return wording.title(self.artifact_id, self.data.kind, self.version, self.data.name)


async def list_files(ws: Workspace, files: NativeFiles, start: int) -> str:
    """Return a page of the workspace's native files, :data:`~wording.LIST_FILES` at most.

    One read of the page's files and one of their count (``files.history``), however many the
    workspace holds; the answer names ``LIST_FILES`` of them, with the total and where to go on.

    Raises:
        WrongArguments: If ``start`` is out of range.
    """
    page = await files.history.files(ws, start=start, limit=wording.LIST_FILES)
    problems: list[str] = []
    _check_start(start, page.total, "files", known=True, problems=problems)
    if problems:
        raise WrongArguments(wording.FILES.name, problems)
    lines = [
        f"{wording.title(a.id, a.data.kind, a.version, a.data.name)}, {a.data.content.size:,} bytes"
        for a in page.files
    ]
    return wording.file_page(start, page.total, lines)


async def read_native(
    ws: Workspace, files: NativeFiles, artifact_id: str, start: int, *, follow: Follow
) -> str:
    """Return a page of a native file's text, :data:`~wording.READ_CHARS` characters at most.

    Raises:
        WrongArguments: If it is not a native file here, or ``start`` is out of range.
    """
    problems: list[str] = []
    head = await _native(ws, files, artifact_id, problems)
    text = "" if head is None else await files.text(ws, artifact_id, head.version)
    _check_start(start, len(text), "characters", known=head is not None, problems=problems)
    if head is None or problems:
        raise WrongArguments(wording.READ_NATIVE.name, problems)
    await follow(artifact_id)
    end = min(start + wording.READ_CHARS, len(text))
    styles = head.data.styles
    named = None if styles is None or start else wording.styles(styles.paragraph, styles.character)
    return wording.text_page(head.title, start, end, len(text), text[start:end], styles=named)


async def read_review(
    ws: Workspace, files: NativeFiles, artifact_id: str, start: int, *, follow: Follow
) -> str:
    """Return a page of a native file's review, :data:`~wording.REVIEW_ITEMS` items at most.

    Raises:
        WrongArguments: If it is not a native file here, or ``start`` is out of range.
    """
    problems: list[str] = []
    head = await _native(ws, files, artifact_id, problems)
    items = [] if head is None else await files.review(ws, artifact_id, head.version)
    _check_start(start, len(items), "items", known=head is not None, problems=problems)
    if head is None or problems:
        raise WrongArguments(wording.READ_REVIEW.name, problems)
    await follow(artifact_id)
    comments = sum(item.kind == "comment" for item in items)
    end = min(start + wording.REVIEW_ITEMS, len(items))
    lines = [
        json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for item in items[start:end]
    ]
    return wording.review_page(head.title, start, end, len(items), comments, lines)


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

STOP_WORDS: Final = frozenset(
    ("a", "an", "and", "any", "at", "by", "for", "from", "in", "into", "it", "its", "my"),
) | frozenset(("of", "on", "or", "some", "that", "the", "this", "to", "with"))
"""Words a query may hold that name no command; they count only in a query of nothing else."""


def _words(text: str) -> list[str]:
    """Return the words of an id or a phrase, lower-cased: ``edit.replaceAll`` is 3."""
    return [word.lower() for word in _WORD.findall(text)]


def rank_commands(specs: Sequence[CommandSpec], query: str) -> list[CommandSpec]:
    """Return the commands that match any word of a query, those matching most words first.

    A query's word matches a command when a word of its id or label starts with it, in any
    case, so ``append paragraph`` finds ``text.newParagraph``. Ties go to the command whose
    id matches more words, then to the catalog's order. An empty query lists them all.
    """
    asked = list(dict.fromkeys(_words(query)))
    wanted = [word for word in asked if word not in STOP_WORDS] or asked
    if not wanted:
        return list(specs)
    ranked: list[tuple[int, int, int, CommandSpec]] = []
    for order, spec in enumerate(specs):
        in_id, in_label = _words(spec.id), _words(spec.label)
        named = [word for word in wanted if any(w.startswith(word) for w in in_id)]
        told = [word for word in wanted if any(w.startswith(word) for w in in_label)]
        matched = len(set(named) | set(told))
        if matched:
            ranked.append((-matched, -len(named), order, spec))
    return [spec for *_, spec in sorted(ranked, key=lambda row: row[:3])]


async def find_commands(files: NativeFiles, query: str) -> str:
    """Return the app's commands that match a query's words, :data:`~wording.MAX_COMMANDS` at most.

    Each is listed with a compact line a parameter (name, type, allowed values, whether it is
    required); a query that is one command's id gives that command's full JSON schema too.

    Raises:
        CallFailed: If the app could not list them.
    """
    with _app_failures("list its commands"):
        found = rank_commands(await files.app.commands(), query)
    shown = found[: wording.MAX_COMMANDS]
    schemas = {spec.id: schema for spec in shown if (schema := _schema(spec.params)) is not None}
    lines = [
        wording.command_line(spec.id, compact_params(spec.params), spec.label, mutates=spec.mutates)
        for spec in shown
    ]
    named = next((spec.id for spec in shown if spec.id.lower() == query.strip().lower()), None)
    return wording.commands_found(
        query,
        lines,
        len(found),
        schema=None if named is None else (named, schemas.get(named)),
        schemas=bool(schemas),
    )


_HINT: Final = re.compile(r'"(\w+)"(\?)?\s*:\s*([\w\[\]|]+)')
"""A parameter in an app's hint string: ``"text": string`` or ``"occurrence"?: n``."""


def _schema(params: str) -> dict[str, Any] | None:
    """Return a command's parameters as a JSON schema, or None if the app gives a hint."""
    try:
        schema: object = json.loads(params)
    except ValueError:
        return None
    if not isinstance(schema, dict):
        return None
    found = cast(dict[str, Any], schema)
    return found if isinstance(found.get("properties"), dict) else None


def compact_params(params: str) -> list[str]:
    """Return a command's parameters a line each: ``name: type, allowed values, required``.

    ``params`` is the catalog's: a JSON schema, or a hint string (``{"text": string}``); a hint
    of another shape is kept as it is.
    """
    schema = _schema(params)
    if schema is None:
        hinted = [
            f"{name}: {kind}, " + ("optional" if optional else "required")
            for name, optional, kind in _HINT.findall(params)
        ]
        return hinted or ([params] if params else [])
    properties = cast(dict[str, dict[str, Any]], schema["properties"])
    required = set(cast(list[str], schema.get("required", [])))
    choices = cast(list[dict[str, list[str]]], schema.get("oneOf", []))
    one_of = [name for choice in choices for name in choice["required"]]
    lines: list[str] = []
    for name, field in properties.items():
        shown = [_type_of(field)]
        if "enum" in field:
            shown.append("one of " + ", ".join(str(value) for value in field["enum"]))
        others = [other for other in one_of if other != name]
        if name in required:
            shown.append("required")
        elif name in one_of:
            shown.append("required unless " + " or ".join(others) + " is given")
        else:
            shown.append("optional")
        lines.append(f"{name}: " + ", ".join(shown))
    return lines


def _type_of(field: dict[str, Any]) -> str:
    kind: object = field.get("type", "any")
    kinds = (
        [str(one) for one in cast(list[object], kind)] if isinstance(kind, list) else [str(kind)]
    )
    shown = "|".join(kinds)
    if kinds == ["array"]:
        return f"[{_type_of(cast(dict[str, Any], field.get('items', {})))}]"
    if kinds == ["string"] and field.get("minLength"):
        return "text (not empty)"
    if kinds == ["integer"] and "minimum" in field:
        return f"integer from {field['minimum']}"
    return shown


async def edit_native(
    ws: Workspace,
    files: NativeFiles,
    artifact_id: str,
    *,
    base_version: int,
    commands: Sequence[AppCommand],
    summary: str,
    thread_id: str | None,
    follow: Follow,
) -> Edited | str:
    """Edit a native file with one batch of the app's commands, as the handle's actor.

    Return what was edited (an agent's edit of a ``propose`` kind is :class:`Proposed`), with
    what it changed in the kind's terms; or the answer to a batch that changed nothing or
    to a file a person has checked out.

    Raises:
        WrongArguments: If it is not a native file here, the batch is empty or names a command
            the app lacks (and then a stale ``base_version`` too).
        CallFailed: If the app timed out, crashed or found the file too large.
        Rejection: As :meth:`NativeFiles.edit` raises it, except a person's check-out.
    """
    problems: list[str] = []
    head = await _native(ws, files, artifact_id, problems)
    if commands:
        with _app_failures("list its commands"):
            known = {spec.id for spec in await files.app.commands("")}
        problems += [
            wording.unknown_command(number, command.command)
            for number, command in enumerate(commands)
            if command.command not in known
        ]
    else:
        problems.append(wording.EMPTY_BATCH)
    if head is not None and problems and base_version != head.version:
        problems.append(wording.stale_base(artifact_id, head.version, base_version))
    if head is None or problems:
        raise WrongArguments(wording.EDIT_NATIVE.name, problems)
    await follow(artifact_id)
    try:
        with _app_failures(f"edit {artifact_id}"):
            outcome = await files.edit(
                ws,
                artifact_id,
                base_version=base_version,
                commands=commands,
                summary=summary.strip() or None,
                thread_id=thread_id,
            )
    except ArtifactBusy as busy:
        held = None if busy.lease is None else parse_holder(busy.lease.holder)
        if busy.lease is None or held is None:
            raise  # another agent's edit, or none by now: a retry, in seconds
        return await _checked_out(ws, files, busy.lease, held)
    if isinstance(outcome, Unchanged):
        return wording.unchanged(artifact_id, outcome.version)
    return Edited(outcome, await _changes(ws, files, head, base_version, outcome, commands))


async def view_page(
    ws: Workspace, files: NativeFiles, artifact_id: str, page: int, *, follow: Follow
) -> Page:
    """Return one page of a native file, rendered by the app.

    Raises:
        WrongArguments: If it is not a native file here, or has no such page.
        CallFailed: If the app could not render it.
        AppRefused: If the app refuses the page.
    """
    problems: list[str] = []
    head = await _native(ws, files, artifact_id, problems)
    pages = None if head is None else head.data.pages
    if page < 1:
        problems.append(wording.page_before_one(page))
    elif pages is not None and page > pages:
        problems.append(wording.page_past_end(artifact_id, pages, page))
    if head is None or problems:
        raise WrongArguments(wording.VIEW_PAGE.name, problems)
    with _app_failures(f"render page {page} of {artifact_id}"):
        png = await files.render(ws, artifact_id, head.version, page)
    await follow(artifact_id)
    return Page(wording.page_caption(head.title, page, pages), png)


# ─── helpers ──────────────────────────────────────────────────────────────────


async def _native(
    ws: Workspace, files: NativeFiles, artifact_id: str, problems: list[str]
) -> _Head | None:
    """Return the native file's head, or None with what is wrong added to ``problems``."""
    try:
        artifact = await visible(ws, Artifact, artifact_id)
    except NotFound:
        problems.append(wording.no_artifact(artifact_id))
        return None
    data = artifact.data
    if not isinstance(data, NativeFile) or files.key_of(artifact.kind) is None:
        problems.append(wording.not_native(artifact_id, artifact.kind, files.app.name))
        return None
    return _Head(artifact_id, artifact.version, data)


async def _changes(
    ws: Workspace,
    files: NativeFiles,
    head: _Head,
    base_version: int,
    outcome: Applied | Proposed,
    commands: Sequence[AppCommand],
) -> KindDiff | WordChanges:
    """Return what an edit changed: a workbook's or a deck's in its terms, else a document's."""
    kind = type(head.data)
    artifact_id = head.artifact_id
    before = await files.text(ws, artifact_id, base_version)
    if isinstance(outcome, Applied):
        after = await files.text(ws, artifact_id, outcome.version)
    else:
        after = await files.proposal_text(ws, artifact_id, outcome.proposal_id)
    if issubclass(kind, Spreadsheet | Presentation):
        return kind_diff(kind, before, after) or KindDiff(changes=())
    _, base = await files.manifest(ws, artifact_id, base_version)
    if isinstance(outcome, Applied):
        _, made = await files.manifest(ws, artifact_id, outcome.version)
        review = await files.review(ws, artifact_id, outcome.version)
    else:
        _, _, made = await files.proposed(ws, artifact_id, outcome.proposal_id)
        review = await files.proposal_review(ws, artifact_id, outcome.proposal_id)
    return word_changes(
        Side(before, await files.review(ws, artifact_id, base_version), base.outline),
        Side(after, review, made.outline),
        commands,
        limit=wording.MAX_CHANGES_TOLD,
    )


def _check_start(start: int, total: int, unit: str, *, known: bool, problems: list[str]) -> None:
    if start < 0:
        problems.append(wording.before_start(start))
    elif known and start > total:
        problems.append(wording.past_end(start, total, unit))


@contextmanager
def _app_failures(doing: str) -> Generator[None]:
    """Turn the app's timeout, crash or size failure into a failed call; its refusal stays."""
    try:
        yield
    except AppRefused:
        raise
    except AppFailure as failure:
        raise CallFailed(wording.app_failed(doing, failure.kind, failure.reason)) from failure


async def _checked_out(
    ws: Workspace, files: NativeFiles, lease: ArtifactLease, held: Holder
) -> str:
    """Return the answer to an edit of a file a person has checked out."""
    record = await files.checkouts.get(scope_of(ws), held.checkout_id)
    participant = held.participant
    who = participant if record is None else f"{record.actor.display_name} ({participant})"
    return wording.checked_out(lease.artifact_id, who, rfc3339(lease.expires_at))
