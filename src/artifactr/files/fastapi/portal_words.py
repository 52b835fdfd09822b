"""The portal's words: times as a person reads them, refusals said for a person, changed words.

Pure functions of their arguments, for :mod:`artifactr.files.fastapi.portal`'s templates:

- :func:`relative` and :func:`exact` say a time as "in 8 hours" and "Mon 30 Nov 2026, 20:00
  UTC" in a time zone; the machine format (RFC 3339) stays the API's and the ``datetime``
  attribute's.
- :func:`for_people` says a refusal as what the person did wrong and what to do; the technical
  reason, as the API gives it, is kept beside it.
- :func:`changed_words` marks the words that differ between a removed paragraph and the one
  added in its place; a paragraph past :data:`MAX_WORDS` words is not marked.
- :func:`upload_refusal` says an upload's refusal for a person adding a file on the file list.
- :func:`why_not_decide` says why a person may not accept or reject a proposal, asking
  artifactr's own rule (its author, or anyone acting for them, may not; ADR-0035).
- :func:`kind_rows` lays a workbook's or a deck's changes out as the diff page's tables: each
  cell by its sheet and address with its value before and after, and each slide with what
  happened to it and its text, the changed words marked.
"""

import difflib
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Final

from artifactr.core import (
    Actor,
    ExternalAgentActor,
    Forbidden,
    Proposal,
    Rejection,
    RespondToProposal,
    State,
    ValidationFailed,
    commit,
)

from artifactr.files.core.errors import AppFailure, FileTooLarge, NotEnabled, UnsafeFile
from artifactr.files.core.formats import kind_name
from artifactr.files.native.diff import KindChange, KindDiff

MAX_WORDS: Final = 2_000
"""The longest paragraph whose changed words are marked, in words."""

_WORDS: Final = re.compile(r"\w+|[^\w\s]")


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def relative(moment: datetime, now: datetime) -> str:
    """Return how far a time is from now, as a person says it: "in 8 hours", "5 minutes ago"."""
    seconds = (moment - now).total_seconds()
    distance = abs(seconds)
    if distance < 60:
        return "just now"
    # Rounded to the nearest, as people say it: a fresh 8-hour check-out read a second later
    # is "in 8 hours", not "in 7 hours".
    minutes = int(distance / 60 + 0.5)
    hours = int(distance / 3600 + 0.5)
    if minutes < 60:
        amount = _plural(minutes, "minute")
    elif hours < 48:
        amount = _plural(hours, "hour")
    else:
        amount = _plural(int(distance / 86400 + 0.5), "day")
    return f"in {amount}" if seconds > 0 else f"{amount} ago"


def exact(moment: datetime, zone: tzinfo, *, long: bool = False) -> str:
    """Return a time in a time zone to the minute: ``Mon 30 Nov 2026, 20:00 UTC``.

    ``long`` spells the day and month out: ``Monday 30 November 2026, 20:00 UTC``.
    """
    local = moment.astimezone(zone)
    day, month = ("%A", "%B") if long else ("%a", "%b")
    return f"{local:{day}} {local.day} {local:{month} %Y, %H:%M} {local.tzname()}"


@dataclass(frozen=True)
class Refusal:
    """A refusal as a person reads it: what happened and what to do, and the technical reason."""

    words: str
    """For the person."""
    technical: str
    """As the API gives it."""


def for_people(problem: Rejection | AppFailure) -> Refusal:
    """Return a refusal said for a person, with the API's reason kept as the technical one."""
    technical = (
        f"{problem.code}: {problem}"
        if isinstance(problem, Rejection)
        else f"app_failed ({problem.kind}): {problem.reason}"
    )
    return Refusal(_words(problem), technical)


def kinds_taken(formats: Collection[str]) -> str:
    """Return the kinds a portal takes, in words: "a Word document (.docx) or ..."."""
    return " or ".join(kind_name(media) for media in sorted(formats))


def upload_refusal(problem: Rejection | AppFailure, formats: Collection[str]) -> Refusal:
    """Return an upload's refusal said for a person adding a file, the API's reason beside it.

    ``formats`` are the media types the service takes, said as the kinds to choose instead.
    """
    said = for_people(problem)
    instead = f"Nothing was added: choose {kinds_taken(formats)}."
    if isinstance(problem, FileTooLarge):
        words = f"That file is too large: this takes files up to {_mib(problem.limit)} MiB."
    elif isinstance(problem, UnsafeFile):
        words = "That file isn't one this can read: it may be another kind of file, or damaged."
    elif isinstance(problem, ValidationFailed):
        found = [str(e["msg"]) for e in problem.errors if isinstance(e, dict) and "msg" in e]
        words = f"That file can't be added: {'; '.join(found) or problem}."
    else:
        return said
    return Refusal(f"{words} {instead}", said.technical)


def _mib(size: int) -> int:
    return size // (1024 * 1024)


def _words(problem: Rejection | AppFailure) -> str:
    if isinstance(problem, FileTooLarge):
        return (
            f"That file is too large: this takes files up to {_mib(problem.limit)} MiB. "
            "Check in the document you downloaded, without large pictures or attachments added."
        )
    if isinstance(problem, UnsafeFile):
        return (
            "That file isn't a Word document this can read: it may be another kind of file, or "
            "damaged. Check in the .docx you downloaded and edited, saved as a Word document."
        )
    if isinstance(problem, AppFailure):
        return (
            "The office app could not read or show the file just now. Try again in a moment; "
            "if it fails again, open the file in Word, save it again and check that in."
        )
    if isinstance(problem, NotEnabled):
        return "Editing these files is switched off in this workspace for now: ask its owner."
    return _by_code(problem)


def _by_code(problem: Rejection) -> str:
    match problem.code:
        case "forbidden":
            return "You may not do that to this file: ask someone who may, or its owner."
        case "not_found":
            return (
                "That is gone or was never here: it may have been decided, ended or removed "
                "since you opened the page. The page shows how things stand now."
            )
        case "patch_failed":
            return (
                "This proposal was made on an older version of the file, so it can't be "
                "accepted as it is: ask its author for a new one, or reject it."
            )
        case "artifact_busy":
            return (
                "Someone else has this file checked out: you may check it out once they "
                "check it in, end their check-out, or their lease lapses."
            )
        case _:
            return (
                "That didn't work, and nothing was changed. The page shows how things stand "
                "now; try again, or ask for help with the technical reason below."
            )


MAY_NOT_DECIDE: Final = "you may not decide proposals on this file"
"""Why a person whom the workspace refuses the decision may not decide."""

YOURS: Final = "yours: someone else decides"
"""Why a proposal's author may not decide it."""

YOUR_ASSISTANT: Final = "someone other than you decides what your assistant proposed"
"""Why a person may not decide what their own MCP client proposed for them."""

SOMEONE_ELSE: Final = "someone other than its author decides"
"""Why anyone else artifactr counts as the author (acting for them) may not decide."""


def why_not_decide(actor: Actor, proposal: Proposal) -> str:
    """Return why artifactr refuses ``actor`` a decision on a pending proposal, or "" if it won't.

    The rule is artifactr's own, asked rather than copied: a rejection is decided on the proposal
    alone by :func:`artifactr.core.commit`, which is pure (nothing is stored), and its
    ``Forbidden`` is the author rule. That rule looks through ``on_behalf_of``: a person may not
    decide what they proposed, nor what their own MCP client (an ``ExternalAgentActor`` acting
    for them) proposed, which is them; a thread's agent (an ``AgentActor`` run for them) is not
    them, so a person decides what their own agent proposed.
    """
    respond = RespondToProposal(proposal_id=proposal.id, decision="reject")
    try:
        commit(respond, State(proposals={proposal.id: proposal}), actor=actor)
    except Forbidden:
        author = proposal.proposed_by
        if author.participant == actor.participant:
            return YOURS
        if isinstance(author, ExternalAgentActor):
            return YOUR_ASSISTANT
        return SOMEONE_ELSE
    return ""


@dataclass(frozen=True)
class Piece:
    """A run of a paragraph's text, changed or not."""

    text: str
    changed: bool


def changed_words(before: str, after: str) -> tuple[list[Piece], list[Piece]]:
    """Return both paragraphs in pieces, the words that differ between them marked changed.

    Words and punctuation are compared; the spaces between them go with the text around
    them. A paragraph over :data:`MAX_WORDS` words comes back whole and unmarked.
    """
    old, new = list(_WORDS.finditer(before)), list(_WORDS.finditer(after))
    if max(len(old), len(new)) > MAX_WORDS:
        return [Piece(before, False)], [Piece(after, False)]
    matcher = difflib.SequenceMatcher(
        None, [m.group() for m in old], [m.group() for m in new], autojunk=False
    )
    opcodes = matcher.get_opcodes()
    left = _pieces(before, old, [(i1, i2, op != "equal") for op, i1, i2, _, _ in opcodes])
    right = _pieces(after, new, [(j1, j2, op != "equal") for op, _, _, j1, j2 in opcodes])
    return left, right


def _pieces(
    text: str, words: list[re.Match[str]], runs: list[tuple[int, int, bool]]
) -> list[Piece]:
    pieces: list[Piece] = []

    def add(part: str, changed: bool) -> None:
        if pieces and pieces[-1].changed == changed:
            pieces[-1] = Piece(pieces[-1].text + part, changed)
        else:
            pieces.append(Piece(part, changed))

    at = 0
    for first, last, changed in runs:
        if last == first:
            continue
        start, end = words[first].start(), words[last - 1].end()
        if start > at:
            add(text[at:start], False)
        add(text[start:end], changed)
        at = end
    if at < len(text):
        add(text[at:], False)
    return pieces


# ─── a workbook's cells and a deck's slides ───────────────────────────────────


@dataclass(frozen=True)
class CellRow:
    """A changed cell, as the diff page's table shows it."""

    sheet: str
    """The sheet's name, unquoted (``Q1 plan``)."""
    cell: str
    """The cell's address on it (``B4``)."""
    before: str | None
    """Its value, with its formula after it where it has one; None if it was empty."""
    after: str | None
    """Its value now; None if it is empty now."""


@dataclass(frozen=True)
class SlideRow:
    """A changed slide, as the diff page's table shows it."""

    slide: int
    """Its number: in the second version, unless it was removed."""
    change: str
    """What happened to it, in words: ``added``, ``removed``, ``changed`` or ``moved from 3``."""
    title: str
    """Its title, "" for none."""
    before: list[Piece]
    """Its text before (the title, then the rest), the changed words marked; none if new."""
    after: list[Piece]
    """Its text now; none if removed."""


@dataclass(frozen=True)
class KindRows:
    """A workbook's or a deck's changes, as the diff page's tables show them."""

    sheets: list[str]
    """The sheets added and removed, one line each (``sheet added: Notes``)."""
    cells: list[CellRow]
    """The changed cells, sheet by sheet."""
    slides: list[SlideRow]
    """The changed slides, in the second version's order."""
    truncated: bool
    """Whether the diff's list was cut at its bound."""


def kind_rows(changes: KindDiff) -> KindRows:
    """Return a workbook's or a deck's changes as the diff page's rows."""
    rows = KindRows([], [], [], changes.truncated)
    for change in changes.changes:
        if change.what == "cell":
            sheet, _, cell = change.where.rpartition("!")
            rows.cells.append(CellRow(_unquoted(sheet), cell, change.before, change.after))
        elif change.what.startswith("sheet_"):
            rows.sheets.append(change.line)
        else:
            rows.slides.append(_slide_row(change))
    return rows


def _unquoted(sheet: str) -> str:
    """Return a sheet's name as a reference writes it, unquoted: ``'Q1 plan'`` is ``Q1 plan``."""
    if len(sheet) > 1 and sheet[0] == sheet[-1] == "'":
        return sheet[1:-1].replace("''", "'")
    return sheet


def _slide_row(change: KindChange) -> SlideRow:
    """Return a slide's change as a row; its title is the one the change's line names."""
    number = int(change.where.removeprefix("slide "))
    title = change.line.partition(": ")[2]
    before, after = change.before or "", change.after or ""
    if change.what == "slide_moved":
        return SlideRow(
            number, f"moved from {before}", title.removesuffix(f", {before} → {after}"), [], []
        )
    if change.what == "slide_changed":
        old, new = changed_words(before, after)
        return SlideRow(number, "changed", title, old, new)
    if change.what == "slide_added":
        return SlideRow(number, "added", title, [], [Piece(after, False)])
    return SlideRow(number, "removed", title, [Piece(before, False)], [])
