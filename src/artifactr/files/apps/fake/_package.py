"""The package: a .docx's parts, read when asked, and written back as they were (RFC-0003).

:class:`Package` opens the zip, follows its relationships and writes it back, replacing only the
parts an edit touched: every other part keeps its bytes. :func:`stamp_core` stamps the core
properties as WordCraft does on every save.
"""

import io
import itertools
import posixpath
import zipfile
import zlib
from typing import IO
from xml.etree.ElementTree import Element, SubElement

from artifactr.files.apps.fake._xml import (
    CP,
    DC,
    DCMITYPE,
    DCTERMS,
    XSI,
    Budget,
    XmlPart,
    parse_xml,
    serialize_xml,
)
from artifactr.files.core.errors import AppRefused, AppTooLarge

CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
"""The namespace of ``[Content_Types].xml``."""

RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"
"""The namespace of relationship parts (``_rels/*.rels``)."""

CORE_RELATIONSHIP = (
    "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
)
"""The relationship type from the package to ``docProps/core.xml``."""

CORE_CONTENT_TYPE = "application/vnd.openxmlformats-package.core-properties+xml"
"""The content type of the core properties part."""

_EPOCH = (1980, 1, 1, 0, 0, 0)


def _rels_name(source: str) -> str:
    directory, base = posixpath.split(source)
    return posixpath.join(directory, "_rels", f"{base}.rels")


def _resolve(source: str, target: str) -> str:
    path = (
        target[1:] if target.startswith("/") else posixpath.join(posixpath.dirname(source), target)
    )
    return posixpath.normpath(path)


class Package:
    """An open .docx package: its parts, read when asked, and the ones an edit changed.

    Args:
        data: The file's bytes, or a seekable binary file, whose parts are read as needed.
        max_inflated: The most bytes its parts may inflate to, together (a zip bomb guard).
        budget: What its parsed parts may hold together; unbounded if None.

    Raises:
        AppRefused: If the bytes are not a zip, two parts share a name, or there is no
            ``[Content_Types].xml``.
        AppTooLarge: If the parts would inflate to more than ``max_inflated`` bytes.
    """

    def __init__(
        self, data: bytes | IO[bytes], *, max_inflated: int, budget: Budget | None = None
    ) -> None:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            raise AppRefused("not a .docx: not a zip file") from error
        infos = archive.infolist()
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise AppRefused("not a .docx: two parts share a name")
        inflated = sum(info.file_size for info in infos)
        if inflated > max_inflated:
            raise AppTooLarge(
                f"the file's parts inflate to {inflated} bytes, over the limit of {max_inflated}"
            )
        if "[Content_Types].xml" not in names:
            raise AppRefused("not a .docx: no [Content_Types].xml")
        self._archive = archive
        self._budget = budget
        self._infos = infos
        self._names = set(names)
        self._xml: dict[str, XmlPart] = {}
        self._dirty: set[str] = set()
        self._added: list[str] = []

    def has(self, name: str) -> bool:
        """Return whether the package holds a part of this name."""
        return name in self._names

    def read(self, name: str) -> bytes:
        """Return a part's bytes as the file holds them.

        Raises:
            AppRefused: If the part can't be inflated (corrupt, encrypted, unknown method).
        """
        try:
            return self._archive.read(name)
        except (
            zipfile.BadZipFile,
            zlib.error,
            NotImplementedError,
            RuntimeError,
            EOFError,
            OSError,
            ValueError,
        ) as error:
            raise AppRefused(f"not a .docx: {name} cannot be read ({error})") from error

    def xml(self, name: str) -> XmlPart:
        """Return a part parsed, the same object each time, so edits to it are kept."""
        if name not in self._xml:
            self._xml[name] = parse_xml(name, self.read(name), self._budget)
        return self._xml[name]

    def touch(self, name: str) -> None:
        """Mark a parsed part as changed, so :meth:`save` writes it anew."""
        self._dirty.add(name)

    def related(self, source: str, suffix: str) -> str | None:
        """Return the first part ``source`` relates to by a type ending in ``suffix``.

        ``source`` ``""`` is the package itself. Relationships to missing parts or to external
        targets are passed over.
        """
        rels = _rels_name(source)
        if not self.has(rels):
            return None
        for relationship in self.xml(rels).root:
            target = _resolve(source, relationship.get("Target", ""))
            if (
                relationship.get("Type", "").endswith(suffix)
                and relationship.get("TargetMode") != "External"
                and self.has(target)
            ):
                return target
        return None

    def free_name(self, name: str) -> str:
        """Return ``name``, or ``name`` numbered (``comments1.xml``) if a part has it already."""
        stem, extension = posixpath.splitext(name)
        candidates = itertools.chain([name], (f"{stem}{n}{extension}" for n in itertools.count(1)))
        return next(candidate for candidate in candidates if not self.has(candidate))

    def add(
        self, name: str, part: XmlPart, content_type: str, *, source: str, relationship: str
    ) -> None:
        """Add a new XML part, with its content type and a relationship from ``source``."""
        types = self.xml("[Content_Types].xml")
        SubElement(
            types.root,
            f"{{{CONTENT_TYPES}}}Override",
            {"PartName": f"/{name}", "ContentType": content_type},
        )
        self.touch("[Content_Types].xml")
        rels_name = _rels_name(source)
        if self.has(rels_name):
            rels = self.xml(rels_name)
        else:
            rels = XmlPart(Element(f"{{{RELATIONSHIPS}}}Relationships"), [("", RELATIONSHIPS)])
            self._register(rels_name, rels)
        taken = {element.get("Id") for element in rels.root}
        number = next(n for n in itertools.count(len(taken) + 1) if f"rId{n}" not in taken)
        SubElement(
            rels.root,
            f"{{{RELATIONSHIPS}}}Relationship",
            {
                "Id": f"rId{number}",
                "Type": relationship,
                "Target": posixpath.relpath(name, posixpath.dirname(source) or "."),
            },
        )
        self.touch(rels_name)
        self._register(name, part)

    def _register(self, name: str, part: XmlPart) -> None:
        self._xml[name] = part
        self._names.add(name)
        self._added.append(name)
        self._dirty.add(name)

    def save(self) -> bytes:
        """Return the package as a zip: changed parts rewritten, every other part as it was."""
        written = {name: serialize_xml(self._xml[name]) for name in self._dirty}
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for info in self._infos:
                entry = zipfile.ZipInfo(info.filename, info.date_time)
                entry.compress_type = info.compress_type
                entry.external_attr = info.external_attr
                data = written.get(info.filename)
                archive.writestr(entry, self.read(info.filename) if data is None else data)
            for name in self._added:
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(entry, written[name])
        return out.getvalue()


def stamp_core(package: Package, author: str, now: str) -> None:
    """Stamp the core properties as WordCraft does on every save, adding the part if missing.

    ``dcterms:modified`` becomes ``now``, ``cp:revision`` goes up by one, ``cp:lastModifiedBy``
    becomes ``author``, and ``dcterms:created`` is set to ``now`` only if it was empty.
    """
    name = package.related("", "/metadata/core-properties")
    if name is None:
        name = package.free_name("docProps/core.xml")
        part = XmlPart(
            Element(f"{{{CP}}}coreProperties"),
            [
                ("cp", CP),
                ("dc", DC),
                ("dcterms", DCTERMS),
                ("dcmitype", DCMITYPE),
                ("xsi", XSI),
            ],
        )
        package.add(name, part, CORE_CONTENT_TYPE, source="", relationship=CORE_RELATIONSHIP)
    else:
        part = package.xml(name)
    root = part.root
    dcterms = next((prefix for prefix, uri in part.namespaces if uri == DCTERMS), "dcterms")
    _child(root, f"{{{CP}}}lastModifiedBy").text = author
    revision = _child(root, f"{{{CP}}}revision")
    count = (revision.text or "").strip()
    revision.text = str(int(count) + 1 if count.isdecimal() and len(count) < 10 else 1)
    created = _child(root, f"{{{DCTERMS}}}created")
    if not (created.text or "").strip():
        created.text = now
        created.set(f"{{{XSI}}}type", f"{dcterms}:W3CDTF")
    modified = _child(root, f"{{{DCTERMS}}}modified")
    modified.text = now
    modified.set(f"{{{XSI}}}type", f"{dcterms}:W3CDTF")
    package.touch(name)


def _child(parent: Element, tag: str) -> Element:
    found = parent.find(tag)
    return SubElement(parent, tag) if found is None else found
