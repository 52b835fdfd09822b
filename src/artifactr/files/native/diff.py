"""Diffs: what changed between two revisions of a native file, or in a proposal (ADR-0011).

A portal shows a revision diff as RFC-0003's portalr does: the changed text, from the two text
blobs; the comments and tracked changes added, removed and changed, from the two review blobs;
the page counts; and the pages whose renders differ, side by side. This module computes it, for
any :class:`~artifactr.files.core.app_port.App`, with no web framework:

- :func:`text_diff` and :func:`review_diff` are pure: paragraph-level hunks with a bounded
  context, cut at :attr:`DiffLimits.text_chars` (and said so), and review items matched by
  kind and id.
- :func:`revision_diff` compares two revisions the caller may read (hidden = missing), and
  :func:`proposal_diff` a pending proposal against its base, so a reviewer sees what an agent or
  a late check-in would change before accepting it. Pages are compared by the SHA-256 of their
  renders at :data:`DIFF_SCALE`, through the render cache, one page at a time: the first diff
  renders each revision at most once per page, a second renders nothing, and memory holds one
  page's PNG at a time whatever the page count.
- :func:`kind_diff` says what changed in a workbook's or a deck's own terms, from the texts the
  inspection stored: cells (``Budget!B4: 10 → 12``, formulas included) and sheets added or
  removed; slides added, removed, moved and changed.
"""

import asyncio
import difflib
import functools
import hashlib
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Final, Literal

from artifactr.core import ValidationFailed
from artifactr.workspace import Workspace
from pydantic import BaseModel, ConfigDict

from artifactr.files.core.app_port import ReviewItem
from artifactr.files.core.manifests import NativeFile, Presentation, Spreadsheet
from artifactr.files.native import NativeFiles
from artifactr.files.native.regions import Region, changed_region

DIFF_SCALE: Final = 0.5
"""The scale pages are compared and shown side by side at (36 dpi): cheap, and cached."""

CONTEXT: Final = 2
"""How many unchanged paragraphs a hunk shows either side of a change, by default."""

MAX_TEXT_CHARS: Final = 100_000
"""How many characters of hunk text a diff holds by default before it is cut."""

MAX_PARAGRAPHS: Final = 5_000
"""How many changed paragraphs a side may have, past the common start and end, before the
comparison is cut: matching is quadratic at worst, so this bounds its time."""

MAX_REVIEW: Final = 500
"""How many review items each list of a review diff holds by default."""

MAX_REGIONS: Final = 20
"""How many differing pages of a diff get the region where they differ: each costs decoding
both renders."""

MAX_PAGES: Final = 1_000
"""How many pages are compared by default: a 500-page document is compared whole."""

MAX_CHANGES: Final = 2_000
"""How many changes in a kind's own terms (cells, sheets, slides) a diff holds by default."""


class DiffLimits(BaseModel):
    """The bounds of a diff: each one cut is said so in the answer."""

    model_config = ConfigDict(frozen=True)

    context: int = CONTEXT
    """Unchanged paragraphs shown either side of a change."""
    text_chars: int = MAX_TEXT_CHARS
    """Characters of hunk text, at most."""
    paragraphs: int = MAX_PARAGRAPHS
    """Changed paragraphs a side may have before the text comparison is cut."""
    review: int = MAX_REVIEW
    """Items in each list of the review diff, at most."""
    pages: int = MAX_PAGES
    """Pages compared, at most."""
    changes: int = MAX_CHANGES
    """Changes in the kind's own terms (cells, sheets, slides), at most."""


# ─── text ─────────────────────────────────────────────────────────────────────


class TextLine(BaseModel):
    """One paragraph of a hunk: unchanged, removed from the first text or added in the second."""

    model_config = ConfigDict(frozen=True)

    op: Literal["same", "removed", "added"]
    """What happened to it."""
    text: str
    """The paragraph."""


class TextHunk(BaseModel):
    """A run of changed paragraphs, with up to ``context`` unchanged ones either side."""

    model_config = ConfigDict(frozen=True)

    before_start: int
    """The hunk's first paragraph in the first text, from 1."""
    before_count: int
    """How many of the first text's paragraphs it spans."""
    after_start: int
    """Its first paragraph in the second text, from 1."""
    after_count: int
    """How many of the second text's paragraphs it spans."""
    lines: tuple[TextLine, ...]
    """The paragraphs, in order."""


class TextDiff(BaseModel):
    """The changed text, as hunks of paragraphs."""

    model_config = ConfigDict(frozen=True)

    hunks: tuple[TextHunk, ...]
    """The hunks, in order; none if the texts are equal."""
    truncated: bool = False
    """Whether the diff was cut at a limit: more changed than it shows."""


def text_diff(before: str, after: str, *, limits: DiffLimits | None = None) -> TextDiff:
    """Return the paragraphs that changed from ``before`` to ``after``, as hunks.

    A paragraph is a line of the text blob. The common start and end are skipped first, in
    linear time; what is left is matched paragraph by paragraph, at most
    :attr:`DiffLimits.paragraphs` a side, and the hunks hold at most
    :attr:`DiffLimits.text_chars` characters. Either cut sets ``truncated``.
    """
    bound = limits or DiffLimits()
    old, new = before.split("\n"), after.split("\n")
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    # The matcher sees the changed middle with its context either side, no more.
    lead = max(0, start - bound.context)
    tail = min(end, bound.context)
    cut = max(len(old) - start - end, len(new) - start - end) > bound.paragraphs
    old_part = old[lead : min(len(old) - end + tail, start + bound.paragraphs)]
    new_part = new[lead : min(len(new) - end + tail, start + bound.paragraphs)]
    matcher = difflib.SequenceMatcher(None, old_part, new_part, autojunk=False)
    hunks: list[TextHunk] = []
    budget = bound.text_chars
    for group in matcher.get_grouped_opcodes(bound.context):
        lines: list[TextLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [TextLine(op="same", text=text) for text in old_part[i1:i2]]
                continue
            lines += [TextLine(op="removed", text=text) for text in old_part[i1:i2]]
            lines += [TextLine(op="added", text=text) for text in new_part[j1:j2]]
        kept = _within(lines, budget)
        budget -= sum(len(line.text) for line in kept)
        cut = cut or len(kept) < len(lines)
        if any(line.op != "same" for line in kept):
            hunks.append(_hunk(group[0], kept, lead))
        if len(kept) < len(lines):
            break
    return TextDiff(hunks=tuple(hunks), truncated=cut)


def _within(lines: list[TextLine], budget: int) -> list[TextLine]:
    kept: list[TextLine] = []
    for line in lines:
        budget -= len(line.text)
        if budget < 0:
            break
        kept.append(line)
    return kept


def _hunk(first: tuple[str, int, int, int, int], lines: list[TextLine], lead: int) -> TextHunk:
    _, i1, _, j1, _ = first
    removed = sum(line.op != "added" for line in lines)
    added = sum(line.op != "removed" for line in lines)
    return TextHunk(
        before_start=lead + i1 + 1,
        before_count=removed,
        after_start=lead + j1 + 1,
        after_count=added,
        lines=tuple(lines),
    )


# ─── review ───────────────────────────────────────────────────────────────────


class ReviewChange(BaseModel):
    """A comment or tracked change in both revisions, changed: its text, author or anchor."""

    model_config = ConfigDict(frozen=True)

    before: ReviewItem
    """As it was."""
    after: ReviewItem
    """As it is."""


class ReviewDiff(BaseModel):
    """Comments and tracked changes added, removed and changed, matched by kind and id."""

    model_config = ConfigDict(frozen=True)

    added: tuple[ReviewItem, ...] = ()
    """In the second revision only."""
    removed: tuple[ReviewItem, ...] = ()
    """In the first only: resolved, accepted or rejected."""
    changed: tuple[ReviewChange, ...] = ()
    """In both, but different."""
    truncated: bool = False
    """Whether a list was cut at :attr:`DiffLimits.review`."""


def review_diff(
    before: Sequence[ReviewItem], after: Sequence[ReviewItem], *, limits: DiffLimits | None = None
) -> ReviewDiff:
    """Return the review items added, removed and changed, each list in document order."""
    bound = limits or DiffLimits()
    old = {(item.kind, item.id): item for item in before}
    new = {(item.kind, item.id): item for item in after}
    added = [item for key, item in new.items() if key not in old]
    removed = [item for key, item in old.items() if key not in new]
    changed = [
        ReviewChange(before=old[key], after=item)
        for key, item in new.items()
        if key in old and old[key] != item
    ]
    cap = bound.review
    cut = max(len(added), len(removed), len(changed)) > cap
    return ReviewDiff(
        added=tuple(added[:cap]),
        removed=tuple(removed[:cap]),
        changed=tuple(changed[:cap]),
        truncated=cut,
    )


# ─── a workbook's cells and a deck's slides ───────────────────────────────────


class KindChange(BaseModel):
    """One change in a workbook or a deck, in its own terms."""

    model_config = ConfigDict(frozen=True)

    what: Literal[
        "cell",
        "sheet_added",
        "sheet_removed",
        "slide_added",
        "slide_removed",
        "slide_moved",
        "slide_changed",
    ]
    """What changed: a cell, a sheet added or removed, a slide added, removed, moved or
    changed."""
    where: str
    """The cell (``Budget!B4``), the sheet's name, or the slide (``slide 3``, its number on
    the side that has it: the second, unless it was removed)."""
    before: str | None = None
    """As it was: a cell's value (with its formula), a slide's text or number; None if new."""
    after: str | None = None
    """As it is; None if gone."""
    line: str
    """The change on one line, as a person reads it (``Budget!B4: 10 → 12``)."""


class KindDiff(BaseModel):
    """The changes in a workbook's or a deck's own terms, in order."""

    model_config = ConfigDict(frozen=True)

    changes: tuple[KindChange, ...]
    """The changes: sheets, then cells, sheet by sheet; or slides in the second side's order."""
    truncated: bool = False
    """Whether the list was cut at :attr:`DiffLimits.changes`."""


_SHEET: Final = re.compile(r"^# Sheet: (.*) \((?:empty|[A-Z]+[0-9]+:[A-Z]+[0-9]+)\)$")
_SLIDE: Final = re.compile(r"^# Slide [0-9]+(?:: (.*))?$")
_COLUMNS: Final = 26


def kind_diff(
    kind: type[NativeFile], before: str, after: str, *, limits: DiffLimits | None = None
) -> KindDiff | None:
    """Return what changed between two texts of a workbook or a deck; None for another kind.

    The texts are as the inspection wrote them. A workbook's text is read back into cells
    (``Budget!B4``: the value, with its formula), so a diff names each cell that changed, and
    each sheet added or removed. A deck's slides are matched by their text, then by their
    title, then by the rest of their text (a slide retitled): a slide matched at another place
    among the others is moved, one matched by its title or the rest alone changed, and the rest
    added or removed.
    """
    bound = limits or DiffLimits()
    if issubclass(kind, Spreadsheet):
        changes = _cell_changes(_cells(before), _cells(after))
    elif issubclass(kind, Presentation):
        changes = _slide_changes(_slides(before), _slides(after))
    else:
        return None
    return KindDiff(changes=tuple(changes[: bound.changes]), truncated=len(changes) > bound.changes)


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, _COLUMNS)
        name = chr(65 + rest) + name
    return name


def _sheet_ref(name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "'" + name.replace("'", "''") + "'"


def _cells(text: str) -> dict[str, dict[str, str]]:
    sheets: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    sheet = ""
    for line in text.split("\n"):
        heading = _SHEET.match(line)
        if heading is not None:
            sheet = heading.group(1)
            current = sheets.setdefault(sheet, {})
            continue
        row, _, rest = line.partition("\t")
        if current is None or not row.isdigit():
            continue
        for index, value in enumerate(rest.split("\t")):
            if value:
                current[f"{_sheet_ref(sheet)}!{_column(index)}{row}"] = value
    return sheets


def _cell_changes(
    old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]
) -> list[KindChange]:
    changes = [
        KindChange(what="sheet_removed", where=name, line=f"sheet removed: {name}")
        for name in old
        if name not in new
    ]
    changes += [
        KindChange(what="sheet_added", where=name, line=f"sheet added: {name}")
        for name in new
        if name not in old
    ]
    for name, cells in new.items():
        if name not in old:
            continue
        was = old[name]
        for cell in [*was, *(cell for cell in cells if cell not in was)]:
            before, after = was.get(cell), cells.get(cell)
            if before != after:
                shown = f"{before or '(empty)'} → {after or '(empty)'}"
                changes.append(
                    KindChange(
                        what="cell", where=cell, before=before, after=after, line=f"{cell}: {shown}"
                    )
                )
    return changes


def _slides(text: str) -> list[tuple[str, str]]:
    slides: list[tuple[str, str]] = []
    body: list[str] = []
    title: str | None = None
    for line in [*text.split("\n"), "# Slide 0"]:
        heading = _SLIDE.match(line)
        if heading is None:
            body.append(line)
            continue
        if title is not None:
            slides.append((title, "\n".join(body)))
        title, body = heading.group(1) or "", []
    return slides


def slide_pairs(before: str, after: str) -> dict[int, int]:
    """Return which slide of a deck's second text is which of its first, as {old: new} from 1.

    Slides are paired by identity as their text tells it: the same text first, then the same
    title, then the same rest of the text (a slide retitled); an inserted slide pairs with none,
    so the slides after it keep their partners.
    """
    pairs = _pairs(_slides(before), _slides(after))
    return {old + 1: new + 1 for old, new in pairs.items()}


def _pairs(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> dict[int, int]:
    # Pairs (old index, new index): the same text first, then the same title, then the same
    # rest of the text; a slide of a title alone has no rest to match (a new object is unequal).
    pairs: dict[int, int] = {}
    keys: tuple[Callable[[tuple[str, str]], object], ...] = (
        lambda slide: slide,
        lambda slide: slide[0],
        lambda slide: slide[1] or object(),
    )
    for key in keys:
        free = [index for index in range(len(old)) if index not in pairs]
        for new_index, slide in enumerate(new):
            if new_index in pairs.values():
                continue
            found = next((at for at in free if key(old[at]) == key(slide)), None)
            if found is not None:
                pairs[found] = new_index
                free.remove(found)
    return pairs


def _slide_changes(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> list[KindChange]:
    pairs = _pairs(old, new)
    kept = _in_order(sorted(pairs.items(), key=lambda pair: pair[1]))
    changes: list[KindChange] = []
    for old_index, slide in enumerate(old):
        if old_index not in pairs:
            name = f"slide {old_index + 1}"
            changes.append(
                KindChange(
                    what="slide_removed",
                    where=name,
                    before=_shown(slide),
                    line=f"{name} removed: {slide[0]}",
                )
            )
    back = {new_index: old_index for old_index, new_index in pairs.items()}
    for new_index, slide in enumerate(new):
        name = f"slide {new_index + 1}"
        if new_index not in back:
            changes.append(
                KindChange(
                    what="slide_added",
                    where=name,
                    after=_shown(slide),
                    line=f"{name} added: {slide[0]}",
                )
            )
            continue
        old_index = back[new_index]
        if old_index not in kept:
            changes.append(
                KindChange(
                    what="slide_moved",
                    where=name,
                    before=str(old_index + 1),
                    after=str(new_index + 1),
                    line=f"slide moved: {slide[0]}, {old_index + 1} → {new_index + 1}",
                )
            )
        if old[old_index] != slide:
            changes.append(
                KindChange(
                    what="slide_changed",
                    where=name,
                    before=_shown(old[old_index]),
                    after=_shown(slide),
                    line=f"{name} changed: {slide[0]}",
                )
            )
    return changes


def _shown(slide: tuple[str, str]) -> str:
    return "\n".join(part for part in slide if part)


def _in_order(pairs: list[tuple[int, int]]) -> set[int]:
    """Return the old indices of the longest run of pairs in the same order on both sides."""
    best: list[list[int]] = []
    for old_index, _ in pairs:
        empty: list[int] = []
        longest = max((run for run in best if run[-1] < old_index), key=len, default=empty)
        best.append([*longest, old_index])
    none: list[int] = []
    return set(max(best, key=len, default=none))


# ─── pages and the whole diff ─────────────────────────────────────────────────


class ChangedPage(BaseModel):
    """A page whose renders differ, or that one side doesn't have."""

    model_config = ConfigDict(frozen=True)

    page: int
    """The page, from 1."""
    before: bool
    """Whether the first side has it."""
    after: bool
    """Whether the second side has it."""
    before_page: int | None = None
    """The first side's page it is compared with, where that is another number (a deck's slide
    moved, or after a slide inserted or removed); None for the same number."""
    region: Region | None = None
    """Where the two renders differ, in the renders' pixels: the box around every differing
    pixel, for the first :data:`MAX_REGIONS` pages both sides have; None for the others."""


class FileDiff(BaseModel):
    """What changed in a native file: text, review and pages, each bounded."""

    model_config = ConfigDict(frozen=True)

    artifact_id: str
    """The artifact."""
    before_version: int
    """The first revision (a proposal's base)."""
    after_version: int | None
    """The second revision; None for a proposal, which is no revision yet."""
    proposal_id: str | None = None
    """The proposal compared with its base, if it is one."""
    before_pages: int | None
    """The first side's page count, if the app knows it."""
    after_pages: int | None
    """The second side's."""
    text: TextDiff
    """The changed text."""
    review: ReviewDiff
    """The changed comments and tracked changes."""
    pages: tuple[ChangedPage, ...]
    """The pages whose renders differ, in order."""
    pages_compared: int
    """How many pages were compared."""
    pages_truncated: bool = False
    """Whether pages past :attr:`DiffLimits.pages` were left uncompared."""
    changes: KindDiff | None = None
    """What changed in the kind's own terms: a workbook's cells and sheets, a deck's slides;
    None for a Word document, whose text diff says it."""


Pages = AsyncGenerator[bytes]
"""A side's pages from 1, rendered one at a time at :data:`DIFF_SCALE`."""


async def changed_pages(
    before: tuple[int, Pages], after: tuple[int, Pages], *, limit: int = MAX_PAGES
) -> tuple[list[ChangedPage], int]:
    """Return the pages whose renders differ, and how many pages were compared.

    Each side is its page count and its renders, which yield the pages both sides have (up to
    ``limit``); they are taken in step, one page of each at a time, and compared by digest. A
    page only one side has differs without a render.
    """
    (old_count, old_pages), (new_count, new_pages) = before, after
    compared = min(max(old_count, new_count), limit)
    both = min(old_count, new_count, limit)
    changed: list[ChangedPage] = []
    async with aclosing(old_pages), aclosing(new_pages):
        for page in range(1, both + 1):
            old_png, new_png = await anext(old_pages), await anext(new_pages)
            if _digest(old_png) == _digest(new_png):
                continue
            region = (
                await asyncio.to_thread(changed_region, old_png, new_png)
                if len(changed) < MAX_REGIONS
                else None
            )
            changed.append(ChangedPage(page=page, before=True, after=True, region=region))
    changed += [
        ChangedPage(page=page, before=page <= old_count, after=page <= new_count)
        for page in range(both + 1, compared + 1)
    ]
    return changed, compared


async def paired_pages(
    before: tuple[int, Callable[[int], Pages]],
    after: tuple[int, Callable[[int], Pages]],
    pairs: dict[int, int],
    *,
    limit: int = MAX_PAGES,
) -> tuple[list[ChangedPage], int]:
    """Return the pages whose renders differ, a page compared with its partner in ``pairs``.

    ``pairs`` says which page of the second side is which of the first ({old: new}, from 1),
    as :func:`slide_pairs` pairs a deck's slides: a page with no partner was added or removed,
    whatever its renders. Each side is its page count and how to render its pages up to a last.
    Both sides are read once for their digests, one page at a time; the first
    :data:`MAX_REGIONS` pairs that differ are read again for their regions (through the render
    cache), holding those pages of the first side at most.
    """
    (old_count, old_render), (new_count, new_render) = before, after
    old_last, new_last = min(old_count, limit), min(new_count, limit)
    old_digests = await _digests(old_render(old_last))
    new_digests = await _digests(new_render(new_last))
    paired = {
        new: old
        for old, new in pairs.items()
        if old <= old_last and new <= new_last and old_digests[old - 1] != new_digests[new - 1]
    }
    regions = await _regions(old_render, new_render, sorted(paired.items())[:MAX_REGIONS])
    partners = {new for old, new in pairs.items() if old <= old_last}
    changed = [
        ChangedPage(page=old, before=True, after=False)
        for old in range(1, old_last + 1)
        if pairs.get(old, new_last + 1) > new_last
    ]
    for page in range(1, new_last + 1):
        if page not in partners:
            changed.append(ChangedPage(page=page, before=False, after=True))
        elif page in paired:
            moved = paired[page] if paired[page] != page else None
            changed.append(
                ChangedPage(
                    page=page, before=True, after=True, before_page=moved, region=regions.get(page)
                )
            )
    changed.sort(key=lambda found: (found.page, found.after))
    return changed, max(old_last, new_last)


async def _digests(pages: Pages) -> list[str]:
    async with aclosing(pages):
        return [_digest(png) async for png in pages]


async def _regions(
    old_render: Callable[[int], Pages],
    new_render: Callable[[int], Pages],
    wanted: list[tuple[int, int]],
) -> dict[int, Region | None]:
    """Return the regions of pairs ({new: old} items) of pages, by their second side's page."""
    if not wanted:
        return {}
    needed = {old for _, old in wanted}
    async with aclosing(old_render(max(needed))) as pages:
        kept = {number: png async for number, png in _numbered(pages) if number in needed}
    regions: dict[int, Region | None] = {}
    partner = dict(wanted)
    async with aclosing(new_render(max(partner))) as pages:
        async for number, png in _numbered(pages):
            if number in partner:
                regions[number] = await asyncio.to_thread(
                    changed_region, kept[partner[number]], png
                )
    return regions


async def _numbered(pages: Pages) -> AsyncGenerator[tuple[int, bytes]]:
    number = 0
    async for png in pages:
        number += 1
        yield number, png


def _digest(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


@dataclass(frozen=True)
class _Side:
    """One side of a diff: its page count, and how to read its text, review and renders."""

    pages: int | None
    text: Callable[[], Awaitable[str]]
    review: Callable[[], Awaitable[Sequence[ReviewItem]]]
    render: Callable[[int], Pages]


async def _compare(
    old: _Side, new: _Side, bound: DiffLimits, kind: type[NativeFile], *, same: bool = False
) -> tuple[TextDiff, ReviewDiff, list[ChangedPage], int, bool, KindDiff | None]:
    """Return the text, review and page diffs of two sides, and whether pages were cut.

    The last item is what changed in the kind's own terms (a workbook's cells, a deck's slides).
    Sides with the same content (``same``) have the same pages, so none is rendered. A deck's
    pages are its slides, each compared with the slide it is (:func:`slide_pairs`), not the one
    at its number: a slide inserted marks that slide alone.
    """
    old_text, new_text = await old.text(), await new.text()
    text = text_diff(old_text, new_text, limits=bound)
    review = review_diff(await old.review(), await new.review(), limits=bound)
    old_count, new_count = (0, 0) if same else (old.pages or 0, new.pages or 0)
    if issubclass(kind, Presentation):
        pages, compared = await paired_pages(
            (old_count, old.render),
            (new_count, new.render),
            slide_pairs(old_text, new_text),
            limit=bound.pages,
        )
    else:
        last = min(old_count, new_count, bound.pages)
        pages, compared = await changed_pages(
            (old_count, old.render(last)), (new_count, new.render(last)), limit=bound.pages
        )
    truncated = max(old.pages or 0, new.pages or 0) > bound.pages and not same
    changes = kind_diff(kind, old_text, new_text, limits=bound)
    return text, review, pages, compared, truncated, changes


def _revision(
    files: NativeFiles, ws: Workspace, artifact_id: str, version: int, pages: int | None
) -> _Side:
    return _Side(
        pages,
        functools.partial(files.text, ws, artifact_id, version),
        functools.partial(files.review, ws, artifact_id, version),
        lambda last: files.pages(ws, artifact_id, version, last, scale=DIFF_SCALE),
    )


async def revision_diff(
    files: NativeFiles,
    ws: Workspace,
    artifact_id: str,
    before: int,
    after: int,
    *,
    limits: DiffLimits | None = None,
) -> FileDiff:
    """Return what changed in a native file from version ``before`` to ``after``.

    Raises:
        ValidationFailed: If ``before`` is not below ``after``.
        NotFound: If the file or either version is missing or hidden.
        AppFailure: If the app fails to render a page.
    """
    if not 1 <= before < after:
        raise ValidationFailed(
            "a diff goes from an earlier version to a later one",
            [{"loc": ["from"], "msg": "from must be at least 1 and below to", "type": "order"}],
        )
    _, old = await files.manifest(ws, artifact_id, before)
    _, new = await files.manifest(ws, artifact_id, after)
    text, review, pages, compared, truncated, changes = await _compare(
        _revision(files, ws, artifact_id, before, old.pages),
        _revision(files, ws, artifact_id, after, new.pages),
        limits or DiffLimits(),
        type(new),
        same=old.content.sha256 == new.content.sha256,
    )
    return FileDiff(
        artifact_id=artifact_id,
        before_version=before,
        after_version=after,
        before_pages=old.pages,
        after_pages=new.pages,
        text=text,
        review=review,
        pages=tuple(pages),
        pages_compared=compared,
        pages_truncated=truncated,
        changes=changes,
    )


async def proposal_diff(
    files: NativeFiles,
    ws: Workspace,
    artifact_id: str,
    proposal_id: str,
    *,
    limits: DiffLimits | None = None,
) -> FileDiff:
    """Return what a pending proposal would change in a native file, against its base.

    Raises:
        NotFound: If the file or the proposal is missing or hidden, or the proposal is not an
            edit of this file.
        PatchFailed: If its patch doesn't apply to its base.
        AppFailure: If the app fails to render a page.
    """
    base, old, new = await files.proposed(ws, artifact_id, proposal_id)
    proposed = _Side(
        new.pages,
        functools.partial(files.proposal_text, ws, artifact_id, proposal_id),
        functools.partial(files.proposal_review, ws, artifact_id, proposal_id),
        lambda last: files.pages(
            ws, artifact_id, None, last, scale=DIFF_SCALE, proposal_id=proposal_id
        ),
    )
    text, review, pages, compared, truncated, changes = await _compare(
        _revision(files, ws, artifact_id, base, old.pages),
        proposed,
        limits or DiffLimits(),
        type(new),
    )
    return FileDiff(
        artifact_id=artifact_id,
        before_version=base,
        after_version=None,
        proposal_id=proposal_id,
        before_pages=old.pages,
        after_pages=new.pages,
        text=text,
        review=review,
        pages=tuple(pages),
        pages_compared=compared,
        pages_truncated=truncated,
        changes=changes,
    )
