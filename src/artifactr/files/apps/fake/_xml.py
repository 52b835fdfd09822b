"""XML parts: parsed within a budget, and written back with their own prefixes (RFC-0003).

:func:`parse_xml` counts a part's elements against a :class:`Budget` first and refuses a
document type or a nesting past :data:`MAX_DEPTH`. :func:`serialize_xml` keeps each part's
namespace prefixes and declarations, which Word needs (``mc:Ignorable`` names prefixes).
"""

import threading
from dataclasses import dataclass
from typing import Final
from xml.etree.ElementTree import Element, ParseError, TreeBuilder, XMLParser

from artifactr.files.core.errors import AppRefused, AppTimeout, AppTooLarge

TRANSITIONAL = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
"""The WordprocessingML namespace of transitional documents (nearly all of them)."""

STRICT = "http://purl.oclc.org/ooxml/wordprocessingml/main"
"""The WordprocessingML namespace of strict documents."""

XML = "http://www.w3.org/XML/1998/namespace"
"""The namespace of ``xml:`` attributes (``xml:space``)."""

CP = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
"""The namespace of the core properties."""

DC = "http://purl.org/dc/elements/1.1/"
"""Dublin Core's elements, in the core properties."""

DCTERMS = "http://purl.org/dc/terms/"
"""Dublin Core's terms, in the core properties (``dcterms:modified``)."""

DCMITYPE = "http://purl.org/dc/dcmitype/"
"""Dublin Core's types, declared in the core properties."""

XSI = "http://www.w3.org/2001/XMLSchema-instance"
"""XML Schema's instance namespace (``xsi:type``)."""

MAX_DEPTH = 256
"""The deepest an XML part may nest elements (WordCraft's limit); deeper is refused."""

_PREFERRED = {
    TRANSITIONAL: "w",
    STRICT: "w",
    CP: "cp",
    DC: "dc",
    DCTERMS: "dcterms",
    XSI: "xsi",
}
_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'


@dataclass
class XmlPart:
    """A parsed XML part and the namespace declarations it was written with, in order."""

    root: Element
    """The part's root element."""
    namespaces: list[tuple[str, str]]
    """Its ``(prefix, uri)`` declarations, ``""`` for a default namespace."""


class Budget:
    """What parsing a package may still build: elements, until its caller gives up.

    A part's elements are counted before it is parsed, at the speed of ``bytes.count``: every
    element opens with ``<`` not followed by ``/``, so the count of those is a bound (a comment
    or CDATA holding ``<`` only makes it higher). A part that would pass the limit is refused
    before it takes any memory. Parsing runs in a worker thread, which can't be killed: the
    caller :meth:`stop` s the budget when its deadline passes, and the parse stops at its next
    chunk of :data:`FEED_SIZE` bytes, so an abandoned parse neither runs on nor holds memory.

    Args:
        elements: The most XML elements the package's parsed parts may hold together.
    """

    def __init__(self, elements: int) -> None:
        self.limit = elements
        """The most elements, as given."""
        self._left = elements
        self._stopped = threading.Event()

    def take(self, elements: int) -> None:
        """Count a part's elements against the budget.

        Raises:
            AppTooLarge: If the package holds more than :attr:`limit` elements.
            AppTimeout: If the caller stopped waiting.
        """
        self._left -= elements
        if self._left < 0:
            raise AppTooLarge(f"the file holds more than {self.limit:,} XML elements")
        self.check()

    def check(self) -> None:
        """Go on only while the caller waits.

        Raises:
            AppTimeout: If the caller stopped waiting.
        """
        if self._stopped.is_set():
            raise AppTimeout("the parse was stopped: its caller's deadline passed")

    def stop(self) -> None:
        """Stop the parse at its next chunk: the caller gave up on it."""
        self._stopped.set()

    def __reduce__(self) -> tuple[type["Budget"], tuple[int]]:
        """Pickle as a fresh budget of the same limit: a job sent to another process."""
        return (Budget, (self.limit,))

    def again(self) -> "Budget":
        """Return a full budget for another file, stopped when this one is."""
        budget = Budget(self.limit)
        budget._stopped = self._stopped
        return budget


UNBOUNDED: Final = 2**62
"""An element limit no package reaches."""

FEED_SIZE: Final = 1 << 20
"""Bytes parsed at a time, between checks that the caller still waits."""


class _DocumentType(ValueError):
    """A part declares a document type: a .docx never does, and entities are a bomb."""


class _Builder(TreeBuilder):
    def __init__(self) -> None:
        super().__init__()
        self.namespaces: list[tuple[str, str]] = []

    def start_ns(self, prefix: str, uri: str) -> None:
        self.namespaces.append((prefix, uri))

    def doctype(self, _name: str, _pubid: str | None, _system: str | None) -> None:
        raise _DocumentType("it declares a document type")


def parse_xml(name: str, data: bytes, budget: Budget | None = None) -> XmlPart:
    """Return a part parsed, with its namespace declarations.

    Its elements are counted against ``budget`` before it is parsed (unbounded if None), and
    the parse stops between chunks if the budget is stopped.

    Raises:
        AppRefused: If the part is not well-formed, declares a document type or nests deeper
            than :data:`MAX_DEPTH`.
        AppTooLarge: If the budget's elements run out.
        AppTimeout: If the budget was stopped.
    """
    budget = budget or Budget(UNBOUNDED)
    budget.take(data.count(b"<") - data.count(b"</"))
    builder = _Builder()
    parser = XMLParser(target=builder)
    try:
        for start in range(0, len(data), FEED_SIZE):
            budget.check()
            parser.feed(data[start : start + FEED_SIZE])
        root: Element = parser.close()
    except (ParseError, ValueError, LookupError) as error:
        raise AppRefused(f"not a .docx: {name} is not XML a .docx can hold ({error})") from error
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise AppRefused(f"not a .docx: {name} nests deeper than {MAX_DEPTH} elements")
        stack.extend((child, depth + 1) for child in element)
    budget.check()
    return XmlPart(root, builder.namespaces)


class _Prefixes:
    """The prefix of every namespace a part uses, declared once on its root."""

    def __init__(self, part: XmlPart) -> None:
        # An element in no namespace can't sit under a default namespace: prefix that one.
        plain = any(not element.tag.startswith("{") for element in part.root.iter())
        self.declared: dict[str, str] = {}
        self.elements: dict[str, str] = {}
        self.attributes: dict[str, str] = {XML: "xml"}
        for prefix, uri in part.namespaces:
            if prefix in self.declared or (plain and not prefix):
                continue
            self.declared[prefix] = uri
            self.elements.setdefault(uri, prefix)
            if prefix:
                self.attributes.setdefault(uri, prefix)
        # Every qualified name, worked out once: a part repeats a few dozen names many times.
        self.tags: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        for element in part.root.iter():
            if element.tag not in self.tags:
                self.tags[element.tag] = self._name(element.tag, self.elements)
            for key in element.attrib:
                if key not in self.keys:
                    self.keys[key] = self._name(key, self.attributes)

    def _name(self, tag: str, table: dict[str, str]) -> str:
        if not tag.startswith("{"):
            return tag
        uri, local = tag[1:].split("}", 1)
        if uri not in table:
            self._invent(uri)
        prefix = table[uri]
        return f"{prefix}:{local}" if prefix else local

    def _invent(self, uri: str) -> None:
        base = _PREFERRED.get(uri, "ns")
        prefix = base
        number = 0
        while prefix in self.declared:
            number += 1
            prefix = f"{base}{number}"
        self.declared[prefix] = uri
        self.elements.setdefault(uri, prefix)
        self.attributes.setdefault(uri, prefix)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def _escape_attribute(text: str) -> str:
    return _escape(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def serialize_xml(part: XmlPart) -> bytes:
    """Return a part as UTF-8 XML, with its namespace prefixes, all declared on its root."""
    prefixes = _Prefixes(part)
    out = [_DECLARATION]
    _write(part.root, prefixes, out, declare=True)
    return "".join(out).encode()


def _write(element: Element, prefixes: _Prefixes, out: list[str], *, declare: bool) -> None:
    name = prefixes.tags[element.tag]
    out.append(f"<{name}")
    if declare:
        for prefix, uri in prefixes.declared.items():
            out.append(f' xmlns{":" if prefix else ""}{prefix}="{_escape_attribute(uri)}"')
    for key, value in element.attrib.items():
        out.append(f' {prefixes.keys[key]}="{_escape_attribute(value)}"')
    if len(element) or element.text:
        out.append(">")
        out.append(_escape(element.text or ""))
        for child in element:
            _write(child, prefixes, out, declare=False)
        out.append(f"</{name}>")
    else:
        out.append("/>")
    out.append(_escape(element.tail or ""))
