"""FakeApp's commands: a subset of WordCraft's, run on a batch with a caret (RFC-0003).

Each command has WordCraft's id, parameters and refusals (:data:`CATALOG`). A :class:`Batch` is
one batch's state: the document, the caret and selection, and the flags (tracking, matching
case). :class:`Params` refuses bad parameters as WordCraft does: ``bad parameters: ...``.
"""

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from artifactr.files.apps.fake._body import Paragraph, Track
from artifactr.files.apps.fake._document import Document
from artifactr.files.core.errors import AppRefused

_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_PARAGRAPH_BREAK = re.compile("[\r\u2029]")
_WORD = re.compile(r"\w+")


# ─── parameters ───────────────────────────────────────────────────────────────


def bad(reason: str) -> AppRefused:
    return AppRefused(f"bad parameters: {reason}")


class Params:
    """A command's parameters, checked as they are read, with WordCraft's refusals."""

    def __init__(self, command: "Command", params: Mapping[str, JsonValue]) -> None:
        unknown = sorted(set(params) - set(command.fields))
        if unknown:
            raise bad(f"unknown field `{unknown[0]}`; {command.id} takes {command.params or '{}'}")
        self._params = params

    def text(self, key: str, *, empty: bool = False, paragraphs: bool = True) -> str:
        value = self._params.get(key)
        if not isinstance(value, str):
            raise bad(f"`{key}` must be a string" if key in self._params else f"missing `{key}`")
        if not value and not empty:
            raise bad(f"`{key}` must not be empty")
        if _INVALID_XML.search(value):
            raise bad(f"`{key}` holds a character a .docx cannot")
        if not paragraphs and _PARAGRAPH_BREAK.search(value):
            raise bad(f"`{key}` cannot break a paragraph")
        return value

    def flag(self, key: str) -> bool | None:
        value = self._params.get(key)
        if value is not None and not isinstance(value, bool):
            raise bad(f"`{key}` must be true or false")
        return value

    def count(self, key: str) -> int | None:
        value = self._params.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise bad(f"`{key}` must be a positive integer")
        return value

    def ident(self, key: str) -> str | None:
        value = self._params.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise bad(f"`{key}` must be an id")
        return str(value)


# ─── the batch ────────────────────────────────────────────────────────────────


class Batch:
    """One batch's state, as WordCraft keeps it: the document, selection and flags."""

    def __init__(self, document: Document, track: Track) -> None:
        self.document = document
        self.who = track
        self.tracking = document.tracking()
        self.match_case = False
        self.index = 0
        self.start = 0
        self.end = 0

    def track(self) -> Track | None:
        return self.who if self.tracking else None

    def focus(self) -> Paragraph:
        paragraphs = self.document.paragraphs()
        if not paragraphs:
            self.document.ensure_paragraph()
            paragraphs = self.document.paragraphs()
        return paragraphs[self.index]

    def caret(self, index: int, offset: int) -> dict[str, JsonValue]:
        self.index, self.start, self.end = index, offset, offset
        return {"paragraph": index, "offset": offset}


def _select_text(batch: Batch, params: Params) -> dict[str, JsonValue]:
    text = params.text("text")
    occurrence = params.count("occurrence") or 1
    seen = 0
    for index, paragraph in enumerate(batch.document.paragraphs()):
        content = batch.document.text(paragraph.element)
        found = content.find(text)
        while found >= 0:
            seen += 1
            if seen == occurrence:
                batch.index, batch.start, batch.end = index, found, found + len(text)
                return {"paragraph": index, "start": found, "end": found + len(text), "text": text}
            found = content.find(text, found + len(text))
    raise AppRefused(
        f"not found: `{text}` (occurrence {occurrence})"
        if occurrence > 1
        else f"not found: `{text}`"
    )


def _doc_start(batch: Batch, _params: Params) -> dict[str, JsonValue]:
    return batch.caret(0, 0)


def _doc_end(batch: Batch, _params: Params) -> dict[str, JsonValue]:
    paragraphs = batch.document.paragraphs()
    if not paragraphs:
        return batch.caret(0, 0)
    last = len(paragraphs) - 1
    return batch.caret(last, len(batch.document.text(paragraphs[last].element)))


def _insert(batch: Batch, text: str) -> dict[str, JsonValue]:
    document, track = batch.document, batch.track()
    paragraph = batch.focus()
    first, *rest = _PARAGRAPH_BREAK.split(text.replace("\r\n", "\r"))
    document.replace(paragraph.element, batch.start, batch.end, first, track)
    offset = batch.start + len(first)
    for piece in rest:
        paragraph = document.split(paragraph, offset, track)
        batch.index += 1
        document.replace(paragraph.element, 0, 0, piece, track)
        offset = len(piece)
    return batch.caret(batch.index, offset)


def _text_insert(batch: Batch, params: Params) -> dict[str, JsonValue]:
    params.flag("raw")
    return _insert(batch, params.text("text", empty=True))


def _new_paragraph(batch: Batch, _params: Params) -> dict[str, JsonValue]:
    return _insert(batch, "\r")


def _fold(text: str) -> str:
    # Lower-case character by character, keeping the length, so offsets stay true.
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _replace_all(batch: Batch, params: Params) -> dict[str, JsonValue]:
    text = params.text("text")
    replacement = params.text("with", empty=True, paragraphs=False)
    match_case = params.flag("matchCase")
    if match_case is not None:
        batch.match_case = match_case
    fold: Callable[[str], str] = str if batch.match_case else _fold
    needle = fold(text)
    document, track = batch.document, batch.track()
    replaced = 0
    for paragraph in document.paragraphs():
        content = fold(document.text(paragraph.element))
        found = [m.start() for m in re.finditer(re.escape(needle), content)]
        for start in reversed(found):
            document.replace(paragraph.element, start, start + len(text), replacement, track)
        replaced += len(found)
    batch.caret(0, 0)
    return {"replaced": replaced}


def _para_style(batch: Batch, params: Params) -> dict[str, JsonValue]:
    name = params.text("style")
    style_id = batch.document.resolve_style(name)
    if style_id is None:
        names = batch.document.style_names()
        nearest = difflib.get_close_matches(name, names, 3, 0.5)
        near = f"; the nearest: {', '.join(nearest)}" if nearest else ""
        raise AppRefused(
            f"no style `{name}`{near}; the document's: {', '.join(names[:30]) or 'none'}"
        )
    batch.document.set_style(batch.focus().element, style_id)
    return {"style": style_id}


def _new_comment(batch: Batch, params: Params) -> dict[str, JsonValue]:
    text = params.text("text")
    paragraph = batch.focus().element
    start, end = batch.start, batch.end
    if start == end:
        content = batch.document.text(paragraph)
        start, end = next(
            (m.span() for m in _WORD.finditer(content) if m.start() <= start <= m.end()),
            (start, end),
        )
    comment_id = batch.document.add_comment(paragraph, start, end, text, batch.who)
    return {"id": comment_id}


def _track_changes(batch: Batch, params: Params) -> dict[str, JsonValue]:
    value = params.flag("value")
    batch.tracking = not batch.tracking if value is None else value
    batch.document.set_tracking(batch.tracking)
    return {"value": batch.tracking}


def _resolve_one(batch: Batch, params: Params, *, accept: bool) -> dict[str, JsonValue]:
    document = batch.document
    wanted = params.ident("id")
    if wanted is None:
        change = document.change_at(document.paragraphs(), batch.index, batch.start)
        if change is None:
            raise AppRefused("no tracked change at or after the selection")
        chosen = [change]
    else:
        chosen = [change for change in document.changes() if change.id == wanted]
        if not chosen:
            raise AppRefused(f"no tracked change `{wanted}`")
    document.resolve(chosen, accept=accept)
    batch.caret(0, 0)
    return {"id": chosen[0].id}


def _accept(batch: Batch, params: Params) -> dict[str, JsonValue]:
    return _resolve_one(batch, params, accept=True)


def _reject(batch: Batch, params: Params) -> dict[str, JsonValue]:
    return _resolve_one(batch, params, accept=False)


def _resolve_all(batch: Batch, *, accept: bool) -> int:
    changes = batch.document.changes()
    batch.document.resolve(changes, accept=accept)
    batch.caret(0, 0)
    return len(changes)


def _accept_all(batch: Batch, _params: Params) -> dict[str, JsonValue]:
    return {"accepted": _resolve_all(batch, accept=True)}


def _reject_all(batch: Batch, _params: Params) -> dict[str, JsonValue]:
    return {"rejected": _resolve_all(batch, accept=False)}


@dataclass(frozen=True)
class Command:
    id: str
    label: str
    params: str
    mutates: bool
    fields: tuple[str, ...]
    run: Callable[[Batch, Params], dict[str, JsonValue]]


CATALOG = (
    Command(
        "select.text",
        "Select text: the nth match (from 1), case-sensitive, within one paragraph",
        '{"text": string, "occurrence"?: n}',
        False,
        ("text", "occurrence"),
        _select_text,
    ),
    Command("caret.docStart", "Move the caret to the document's start", "", False, (), _doc_start),
    Command("caret.docEnd", "Move the caret to the document's end", "", False, (), _doc_end),
    Command(
        "text.insert",
        "Insert text, replacing the selection (\\r starts a paragraph, \\n breaks a line)",
        '{"text": string, "raw"?: bool}',
        True,
        ("text", "raw"),
        _text_insert,
    ),
    Command(
        "text.newParagraph",
        "New paragraph: split the paragraph at the caret, replacing the selection",
        "",
        True,
        (),
        _new_paragraph,
    ),
    Command(
        "edit.replaceAll",
        "Replace all (case-insensitive unless matchCase; the flag stays set)",
        '{"text": string, "with": string, "matchCase"?: bool}',
        True,
        ("text", "with", "matchCase"),
        _replace_all,
    ),
    Command(
        "para.style",
        "Paragraph style, by name or id (Heading 1 or Heading1)",
        '{"style": string}',
        True,
        ("style",),
        _para_style,
    ),
    Command(
        "review.newComment",
        "New comment on the selection, or the word at the caret",
        '{"text": string}',
        True,
        ("text",),
        _new_comment,
    ),
    Command(
        "review.trackChanges",
        "Track changes (toggles without value)",
        '{"value"?: bool}',
        True,
        ("value",),
        _track_changes,
    ),
    Command(
        "review.accept",
        "Accept a tracked change: by id, or the first at or after the selection",
        '{"id"?: string}',
        True,
        ("id",),
        _accept,
    ),
    Command(
        "review.reject",
        "Reject a tracked change: by id, or the first at or after the selection",
        '{"id"?: string}',
        True,
        ("id",),
        _reject,
    ),
    Command("review.acceptAll", "Accept all tracked changes", "", True, (), _accept_all),
    Command("review.rejectAll", "Reject all tracked changes", "", True, (), _reject_all),
)
COMMANDS = {command.id: command for command in CATALOG}
