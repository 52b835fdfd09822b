"""Changes: what an agent's edit of a Word document changed, told in the document's terms.

A workbook's and a deck's edits are told in cells and slides
(:func:`~artifactr.files.native.diff.kind_diff`); a Word document's here, from what the app read
before and after the edit: each paragraph changed (its number, its text before and after, the
words marked), added or removed, a table row's cells, each heading added or removed (a style set
to or from a heading), each comment and tracked change added, removed or changed, and each style
the batch set. Pure: the texts, reviews and outlines come from the caller, and
:func:`~artifactr.files.native.diff.text_diff` pairs the paragraphs.
"""

import difflib
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from artifactr.files.core.app_port import AppCommand, ReviewItem
from artifactr.files.native.diff import DiffLimits, TextHunk, review_diff, text_diff

QUOTED: Final = 120
"""How many characters of a paragraph, a comment or a cell a line quotes before it is cut."""

AROUND: Final = 3
"""How many unchanged words a marked paragraph keeps either side of a change."""

STYLE_COMMANDS: Final = frozenset({"paragraph.setStyle", "para.style"})
"""The commands, of any app, that set a paragraph's style by a ``style`` parameter."""

_TOKENS: Final = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class WordChanges:
    """What a Word edit changed, a line each, as a person reads it."""

    lines: tuple[str, ...]
    """The changes told: paragraphs in order, then headings, then the review, then styles set;
    at most the ``limit`` asked for."""

    total: int
    """How many changes were found: more than :attr:`lines` where they were cut."""

    truncated: bool = False
    """Whether the text's diff was cut at its bound, so there may be more."""


@dataclass(frozen=True)
class Side:
    """A Word document as the app read it: on one side of an edit."""

    text: str
    """Its text, a line a paragraph (a table's row as tab-separated cells)."""

    review: Sequence[ReviewItem]
    """Its comments and tracked changes."""

    outline: str
    """Its headings, a line each, indented by level."""


def word_changes(
    before: Side, after: Side, commands: Sequence[AppCommand], *, limit: int
) -> WordChanges:
    """Return what changed from ``before`` to ``after``: every change counted, ``limit`` told.

    ``commands`` is the batch, for the styles it set: a style that makes no heading leaves no
    trace in the text.
    """
    diff = text_diff(before.text, after.text, limits=DiffLimits(context=0))
    found: list[Callable[[], str]] = [line for hunk in diff.hunks for line in _hunk_lines(hunk)]
    found += [
        functools.partial(str, line)
        for line in [
            *_outline_lines(before.outline, after.outline),
            *_review_lines(before.review, after.review),
            *(
                f"style set: {_quote(str(command.params['style']))}{_target(command)}"
                for command in commands
                if command.command in STYLE_COMMANDS and "style" in command.params
            ),
        ]
    ]
    told = tuple(line() for line in found[:limit])
    return WordChanges(told, len(found), truncated=diff.truncated)


# ─── paragraphs ───────────────────────────────────────────────────────────────


def _hunk_lines(hunk: TextHunk) -> list[Callable[[], str]]:
    """Return a hunk's lines, each made only if it is told: a paired paragraph's words cost."""
    removed = [line.text for line in hunk.lines if line.op == "removed"]
    added = [line.text for line in hunk.lines if line.op == "added"]
    paired = min(len(removed), len(added))
    lines: list[Callable[[], str]] = [
        functools.partial(_changed, hunk.after_start + offset, removed[offset], added[offset])
        for offset in range(paired)
    ]
    lines += [
        functools.partial(str, f"paragraph {hunk.before_start + offset} removed: {_quote(text)}")
        for offset, text in enumerate(removed[paired:], start=paired)
    ]
    lines += [
        functools.partial(str, f"paragraph {hunk.after_start + offset} added: {_quote(text)}")
        for offset, text in enumerate(added[paired:], start=paired)
    ]
    return lines


def _changed(number: int, before: str, after: str) -> str:
    old_cells, new_cells = before.split("\t"), after.split("\t")
    if len(old_cells) > 1 and len(old_cells) == len(new_cells):
        cells = [
            f"cell {column}: {_quote(old)} → {_quote(new)}"
            for column, (old, new) in enumerate(zip(old_cells, new_cells, strict=True), start=1)
            if old != new
        ]
        return f"table row (paragraph {number}): " + "; ".join(cells)
    return (
        f"paragraph {number}: {_quote(before)} → {_quote(after)}; words: {_marked(before, after)}"
    )


def _marked(before: str, after: str) -> str:
    """Return the words that changed, ``[-removed-]{+added+}``, with a little context."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    parts: list[str] = []
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            parts.append(_context(old[i1:i2], first=index == 0, last=index == len(opcodes) - 1))
            continue
        if i2 > i1:
            parts.append(f"[-{''.join(old[i1:i2])}-]")
        if j2 > j1:
            parts.append(f"{{+{''.join(new[j1:j2])}+}}")
    return _cut("".join(parts), QUOTED * 2)


def _context(tokens: list[str], *, first: bool, last: bool) -> str:
    words = [index for index, token in enumerate(tokens) if token[0].isalnum() or token[0] == "_"]
    if len(words) <= 2 * AROUND:
        return "".join(tokens)
    head = "" if first else "".join(tokens[: words[AROUND - 1] + 1])
    tail = "" if last else "".join(tokens[words[-AROUND] :])
    return f"{head}…{tail}"


# ─── headings and the review ──────────────────────────────────────────────────


def _outline_lines(before: str, after: str) -> list[str]:
    old, new = before.splitlines(), after.splitlines()
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag == "equal":
            continue
        lines += [f"heading removed: {_heading(line)}" for line in old[i1:i2]]
        lines += [f"heading added: {_heading(line)}" for line in new[j1:j2]]
    return lines


def _heading(line: str) -> str:
    level = (len(line) - len(line.lstrip(" "))) // 2 + 1
    return f"{_quote(line.strip())} (level {level})"


def _review_lines(before: Sequence[ReviewItem], after: Sequence[ReviewItem]) -> list[str]:
    diff = review_diff(before, after)
    lines = [f"{_item(item)} added: {_about(item)}" for item in diff.added]
    lines += [f"{_item(item)} removed: {_about(item)}" for item in diff.removed]
    lines += [
        f"{_item(change.after)} changed: {_about(change.before)} → {_about(change.after)}"
        for change in diff.changed
    ]
    return lines


def _item(item: ReviewItem) -> str:
    if item.kind == "comment":
        return f"comment {item.id}"
    return f"tracked {item.change or 'change'} {item.id}"


def _about(item: ReviewItem) -> str:
    on = "" if item.anchor is None else f" on {_quote(item.anchor)}"
    by = "" if item.author is None else f" by {item.author}"
    return f"{_quote(item.text)}{on}{by}"


def _target(command: AppCommand) -> str:
    found = command.params.get("paragraph", command.params.get("heading"))
    return "" if found is None else f" on the paragraph {_quote(str(found))}"


def _quote(text: str) -> str:
    return '"' + _cut(text, QUOTED) + '"'


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
