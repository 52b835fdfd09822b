"""The document: a .docx's body, edited as WordCraft edits it (RFC-0003).

:class:`Document` is the :class:`~artifactr.files.apps.fake._body.Body` with its edits: text
replaced plainly or tracked, paragraphs split, changes resolved, comments, tracking and styles.
Each edit marks the parts it changed, so only those are rewritten.
"""

import copy
import itertools
import posixpath
import re
from collections.abc import Sequence
from xml.etree.ElementTree import Element, SubElement

from artifactr.files.apps.fake._body import (
    RELATIONSHIP_BASE,
    Body,
    Change,
    Paragraph,
    Track,
    filled,
    index_of,
    local_name,
    normalized,
)
from artifactr.files.apps.fake._xml import XML, XmlPart

_PRESERVE = f"{{{XML}}}space"
_PART_CONTENT_TYPES = {
    kind: f"application/vnd.openxmlformats-officedocument.wordprocessingml.{kind}+xml"
    for kind in ("comments", "styles", "settings")
}

# settings.xml is a schema sequence: w:trackRevisions goes after these, wherever present.
_BEFORE_TRACK_REVISIONS = frozenset(
    {
        "writeProtection",
        "view",
        "zoom",
        "removePersonalInformation",
        "removeDateAndTime",
        "doNotDisplayPageBoundaries",
        "displayBackgroundShape",
        "printPostScriptOverText",
        "printFractionalCharacterWidth",
        "printFormsData",
        "embedTrueTypeFonts",
        "embedSystemFonts",
        "saveSubsetFonts",
        "saveFormsData",
        "mirrorMargins",
        "alignBordersAndEdges",
        "bordersDoNotSurroundHeader",
        "bordersDoNotSurroundFooter",
        "gutterAtTop",
        "hideSpellingErrors",
        "hideGrammaticalErrors",
        "activeWritingStyle",
        "proofState",
        "formsDesign",
        "attachedTemplate",
        "linkStyles",
        "stylePaneFormatFilter",
        "stylePaneSortMethod",
        "documentType",
        "mailMerge",
        "revisionView",
    }
)
_BUILTIN_STYLES = {
    "normal": ("Normal", "Normal", None),
    "title": ("Title", "Title", None),
} | {f"heading{level}": (f"Heading{level}", f"heading {level}", level) for level in range(1, 10)}


class Document(Body):
    """A .docx's main document, parsed, with the parts it relates to, read and edited.

    Offsets are as :class:`~artifactr.files.apps.fake._body.Body` counts them.

    Args:
        package: The open package.

    Raises:
        AppRefused: If there is no main document, or it is not WordprocessingML with a body.
    """

    def next_id(self) -> str:
        """Return an annotation id no element of the document or its comments uses yet."""
        if self._next_id is None:
            roots = [self.root]
            comments = self.package.related(self.name, "/comments")
            if comments is not None:
                roots.append(self.package.xml(comments).root)
            taken = [
                int(value)
                for root in roots
                for element in root.iter()
                if (value := element.get(self.q("id"), "")).isascii()
                and value.isdecimal()
                and len(value) < 10
            ]
            self._next_id = max(taken, default=-1) + 1
        self._next_id += 1
        return str(self._next_id - 1)

    def ensure_paragraph(self) -> None:
        """Add an empty paragraph to a body that has none, before its section properties."""
        last = self.body[-1] if len(self.body) else None
        at = len(self.body) - (last is not None and last.tag == self.q("sectPr"))
        self.body.insert(at, Element(self.q("p")))
        self._touch()

    def replace(
        self, paragraph: Element, start: int, end: int, text: str, track: Track | None
    ) -> None:
        """Replace the text between two offsets of a paragraph; tracked if ``track`` is given.

        The new text takes the formatting of the first character replaced (or of the one before
        the caret). Tracked, the old text becomes a ``w:del`` and the new a ``w:ins``; text that
        was itself a tracked insertion is removed outright, and new text inside an insertion
        joins it.
        """
        if start == end:
            if text:
                path, index, model = self.point(paragraph, start)
                self._put(path[-1], index, model, text, track)
            return
        runs = self.isolate(paragraph, start, end)
        first, parent = runs[0]
        index = index_of(parent, first)
        if track is None:
            for run, owner in runs:
                owner.remove(run)
        else:
            for group in self._groups(runs):
                self._delete(group, track)
            index += parent.tag != self.q("ins")
        if text:
            self._put(parent, index, first, text, track)
        self._touch()

    def _groups(self, runs: list[tuple[Element, Element]]) -> list[list[tuple[Element, Element]]]:
        """Split runs into groups of siblings that follow each other directly."""
        groups: list[list[tuple[Element, Element]]] = []
        for run, owner in runs:
            if (
                groups
                and groups[-1][-1][1] is owner
                and index_of(owner, run) == index_of(owner, groups[-1][-1][0]) + 1
            ):
                groups[-1].append((run, owner))
            else:
                groups.append([(run, owner)])
        return groups

    def _delete(self, group: list[tuple[Element, Element]], track: Track) -> None:
        owner = group[0][1]
        if owner.tag == self.q("ins"):
            for run, _ in group:
                owner.remove(run)
            return
        deletion = self._change("del", track)
        owner.insert(index_of(owner, group[0][0]), deletion)
        for run, _ in group:
            owner.remove(run)
            deletion.append(run)
            for item in run:
                item.tag = self._to_deleted.get(item.tag, item.tag)

    def _change(self, kind: str, track: Track) -> Element:
        return Element(
            self.q(kind),
            {
                self.q("id"): self.next_id(),
                self.q("author"): track.author,
                self.q("date"): track.date,
            },
        )

    def _put(
        self, parent: Element, index: int, model: Element | None, text: str, track: Track | None
    ) -> None:
        run = self._text_run(text, model)
        node = run
        if track is not None and parent.tag != self.q("ins"):
            node = self._change("ins", track)
            node.append(run)
        parent.insert(index, node)
        self._touch()

    def _text_run(self, text: str, model: Element | None) -> Element:
        run = Element(self.q("r"))
        properties = None if model is None else model.find(self.q("rPr"))
        if properties is not None:
            properties = copy.deepcopy(properties)
            for change in properties.findall(self.q("rPrChange")):
                properties.remove(change)
            run.append(properties)
        for piece in re.split(r"([\t\n])", text):
            if piece in ("\t", "\n"):
                run.append(Element(self.q("tab" if piece == "\t" else "br")))
            elif piece:
                run.append(self._t(piece))
        return run

    def _t(self, text: str) -> Element:
        element = Element(self.q("t"), {_PRESERVE: "preserve"})
        element.text = text
        return element

    def _cut(self, paragraph: Element, offset: int) -> None:
        """Split the ``w:t`` that straddles an offset in two, within its run."""
        for atom in self.atoms(paragraph):
            if atom.start < offset < atom.end:
                split = offset - atom.start
                atom.element.text = atom.text[:split]
                atom.element.set(_PRESERVE, "preserve")
                atom.run.insert(index_of(atom.run, atom.element) + 1, self._t(atom.text[split:]))
                return

    def _content_start(self, run: Element) -> int:
        return int(len(run) > 0 and run[0].tag == self.q("rPr"))

    def _shell(self, node: Element) -> Element:
        """Return a copy of an element's tag, attributes and properties, without its content."""
        shell = Element(
            node.tag,
            {k: v for k, v in node.attrib.items() if local_name(k) not in {"paraId", "textId"}},
        )
        for child in node:
            if local_name(child.tag).endswith("Pr"):
                shell.append(copy.deepcopy(child))
        if node.tag in {self.q("ins"), self.q("del")}:
            shell.set(self.q("id"), self.next_id())
        return shell

    def _cut_off(self, node: Element, index: int, head: Element | None = None) -> Element:
        """Move a node's children from ``index`` on into a shell of it, after ``head``."""
        shell = self._shell(node)
        if head is not None:
            shell.append(head)
        for child in list(node)[index:]:
            node.remove(child)
            shell.append(child)
        return shell

    def _split_run(self, run: Element, parent: Element, index: int) -> Element:
        tail = self._cut_off(run, index)
        parent.insert(index_of(parent, run) + 1, tail)
        return tail

    def isolate(self, paragraph: Element, start: int, end: int) -> list[tuple[Element, Element]]:
        """Split runs so the text between two offsets is whole runs; return them with parents.

        ``start`` must be below ``end``, and both within the paragraph's text.
        """
        self._cut(paragraph, start)
        self._cut(paragraph, end)
        inside = [a for a in self.atoms(paragraph) if start <= a.start and a.end <= end]
        runs: list[tuple[Element, Element]] = []
        for run, atoms in itertools.groupby(inside, key=lambda atom: atom.run):
            group = list(atoms)
            parent = group[0].path[-1]
            first = index_of(run, group[0].element)
            last = index_of(run, group[-1].element)
            if last + 1 < len(run):
                self._split_run(run, parent, last + 1)
            if first > self._content_start(run):
                run = self._split_run(run, parent, first)
            runs.append((run, parent))
        return runs

    def point(
        self, paragraph: Element, offset: int
    ) -> tuple[tuple[Element, ...], int, Element | None]:
        """Return where new content goes at an offset: its path, index, and a run to copy.

        Content goes after the run that ends at the offset, or before the first run at offset 0,
        or at the end of a paragraph with no text.
        """
        self._cut(paragraph, offset)
        atoms = self.atoms(paragraph)
        for atom in atoms:
            if atom.end == offset:
                parent = atom.path[-1]
                after = index_of(atom.run, atom.element) + 1
                if after < len(atom.run):
                    self._split_run(atom.run, parent, after)
                return atom.path, index_of(parent, atom.run) + 1, atom.run
        if atoms:
            atom = atoms[0]
            run, parent = atom.run, atom.path[-1]
            at = index_of(run, atom.element)
            if at > self._content_start(run):
                run = self._split_run(run, parent, at)
            return atom.path, index_of(parent, run), run
        return (paragraph,), len(paragraph), None

    def split(self, paragraph: Paragraph, offset: int, track: Track | None) -> Paragraph:
        """Split a paragraph at an offset, as Enter does; return the new (second) paragraph.

        The second keeps the original paragraph mark (its properties and any section break);
        the first gets a copy of the properties without them. Tracked, the first's new mark is
        a tracked insertion: rejecting it joins the two again.
        """
        element = paragraph.element
        path, index, _ = self.point(element, offset)
        tail = self._cut_off(path[-1], index)
        for depth in reversed(range(len(path) - 1)):
            # A container split at its edge leaves an empty half: drop it, keep the other.
            node, inner = path[depth], path[depth + 1]
            tail = self._cut_off(node, index_of(node, inner) + 1, tail if filled(tail) else None)
            if not filled(inner):
                node.remove(inner)
        paragraph.parent.insert(index_of(paragraph.parent, element) + 1, tail)
        properties = element.find(self.q("pPr"))
        if properties is not None:
            for holder in [properties, *properties.findall(self.q("rPr"))]:
                for child in list(holder):
                    if child.tag in {self.q("sectPr"), self.q("ins"), self.q("del")}:
                        holder.remove(child)
        if track is not None:
            self._mark(element, track)
        self._touch()
        return Paragraph(tail, paragraph.parent)

    def _mark(self, paragraph: Element, track: Track) -> None:
        properties = paragraph.find(self.q("pPr"))
        if properties is None:
            properties = Element(self.q("pPr"))
            paragraph.insert(0, properties)
        mark = properties.find(self.q("rPr"))
        if mark is None:
            mark = Element(self.q("rPr"))
            change = properties.find(self.q("pPrChange"))
            properties.insert(
                len(properties) if change is None else index_of(properties, change), mark
            )
        mark.insert(0, self._change("ins", track))

    def resolve(self, changes: Sequence[Change], *, accept: bool) -> None:
        """Accept or reject tracked changes (given in document order).

        Accepting an insertion or rejecting a deletion keeps its text; the other two remove it.
        For a paragraph mark, removing it joins the paragraph with the next one.
        """
        parents = {child: parent for parent in self.root.iter() for child in parent}
        for change in reversed(changes):
            element = change.element
            parent = parents[element]
            at = index_of(parent, element)
            parent.remove(element)
            keep = (change.kind == "insert") == accept
            if change.mark:
                if not keep:
                    self._join(parents[parents[parent]], parents)
            elif keep:
                children = list(element)
                if change.kind == "delete":
                    for child in children:
                        for item in child.iter():
                            item.tag = self._to_kept.get(item.tag, item.tag)
                parent[at:at] = children
        if changes:
            self._touch()

    def _join(self, paragraph: Element, parents: dict[Element, Element]) -> None:
        owner = parents[paragraph]
        at = index_of(owner, paragraph) + 1
        following = owner[at] if at < len(owner) else None
        if following is None or following.tag != self.q("p"):
            return
        for child in paragraph.findall(self.q("pPr")):
            paragraph.remove(child)
        for child in list(following):
            following.remove(child)
            if child.tag == self.q("pPr"):
                paragraph.insert(0, child)
            else:
                paragraph.append(child)
        owner.remove(following)

    def add_comment(self, paragraph: Element, start: int, end: int, text: str, track: Track) -> str:
        """Add a comment on the text between two offsets (a point if equal); return its id."""
        comment_id = self.next_id()
        opening = Element(self.q("commentRangeStart"), {self.q("id"): comment_id})
        closing = Element(self.q("commentRangeEnd"), {self.q("id"): comment_id})
        reference = Element(self.q("r"))
        SubElement(reference, self.q("commentReference"), {self.q("id"): comment_id})
        if start < end:
            runs = self.isolate(paragraph, start, end)
            first, owner = runs[0]
            owner.insert(index_of(owner, first), opening)
            last, owner = runs[-1]
            at = index_of(owner, last) + 1
        else:
            path, index, _ = self.point(paragraph, start)
            owner = path[-1]
            owner.insert(index, opening)
            at = index + 1
        owner.insert(at, closing)
        owner.insert(at + 1, reference)
        name, part = self._part("comments", "comments")
        initials = "".join(word[0] for word in track.author.split())
        comment = SubElement(
            part.root,
            self.q("comment"),
            {
                self.q("id"): comment_id,
                self.q("author"): track.author,
                self.q("date"): track.date,
                self.q("initials"): initials,
            },
        )
        SubElement(comment, self.q("p")).append(self._text_run(text, None))
        self.package.touch(name)
        self._touch()
        return comment_id

    def _part(self, kind: str, root: str) -> tuple[str, XmlPart]:
        """Return a part related to the document by kind, added empty if there is none."""
        name = self.package.related(self.name, f"/{kind}")
        if name is not None:
            return name, self.package.xml(name)
        name = self.package.free_name(posixpath.join(posixpath.dirname(self.name), f"{kind}.xml"))
        part = XmlPart(Element(self.q(root)), [("w", self.w)])
        self.package.add(
            name,
            part,
            _PART_CONTENT_TYPES[kind],
            source=self.name,
            relationship=RELATIONSHIP_BASE[self.w] + kind,
        )
        return name, part

    def set_tracking(self, value: bool) -> None:
        """Turn tracking changes on or off in the document's settings, if it changes."""
        if value == self.tracking():
            return
        name, part = self._part("settings", "settings")
        root = part.root
        for element in root.findall(self.q("trackRevisions")):
            root.remove(element)
        if value:
            at = max(
                (
                    n + 1
                    for n, child in enumerate(root)
                    if local_name(child.tag) in _BEFORE_TRACK_REVISIONS
                ),
                default=0,
            )
            root.insert(at, Element(self.q("trackRevisions")))
        self.package.touch(name)

    def resolve_style(self, name: str) -> str | None:
        """Return a paragraph style's id by id or name, adding a built-in one if missing.

        Built-ins (Normal, Title, Heading 1 to 9) are added to the styles part, or a new one,
        when the document lacks them, as Word does when it applies one.
        """
        key = normalized(name)
        found = self._styles().get(key)
        builtin = _BUILTIN_STYLES.get(key)
        if found is not None or builtin is None:
            return found
        style_id, label, level = builtin
        part_name, part = self._part("styles", "styles")
        style = SubElement(
            part.root, self.q("style"), {self.q("type"): "paragraph", self.q("styleId"): style_id}
        )
        SubElement(style, self.q("name"), {self.q("val"): label})
        SubElement(style, self.q("qFormat"))
        if level is not None:
            properties = SubElement(style, self.q("pPr"))
            SubElement(properties, self.q("outlineLvl"), {self.q("val"): str(level - 1)})
            run = SubElement(style, self.q("rPr"))
            SubElement(run, self.q("b"))
            SubElement(run, self.q("sz"), {self.q("val"): str(max(24, 36 - 2 * level))})
        self.package.touch(part_name)
        self._styles()[key] = style_id
        self._style_names[style_id] = label
        return style_id

    def set_style(self, paragraph: Element, style_id: str) -> None:
        """Give a paragraph a style, by id."""
        properties = paragraph.find(self.q("pPr"))
        if properties is None:
            properties = Element(self.q("pPr"))
            paragraph.insert(0, properties)
        style = properties.find(self.q("pStyle"))
        if style is None:
            style = Element(self.q("pStyle"))
            properties.insert(0, style)
        style.set(self.q("val"), style_id)
        self._touch()
