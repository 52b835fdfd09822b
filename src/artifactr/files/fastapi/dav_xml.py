"""WebDAV's XML: request bodies read hardened, and the answers written (RFC 4918, ADR-0018).

Every body a WebDAV client sends (``PROPFIND``, ``PROPPATCH``, ``LOCK``) is XML from the outside.
:func:`read_xml` parses it with defusedxml over the standard library's expat: a document type
declaration of any kind is refused, so no entity is ever declared or expanded (a billion laughs)
and no external DTD or entity is ever fetched (XXE); the body is at most :data:`MAX_BODY` bytes
and its elements nest at most :data:`MAX_DEPTH` deep and number at most :data:`MAX_ELEMENTS`.
Each refusal is a :class:`MalformedXml` (400) with its reason; nothing is read further.

The readers turn a parsed body into what the router acts on (:func:`propfind_of`,
:func:`proppatch_of`, :func:`lockinfo_of`); the writers build a ``multistatus``, a lock
discovery and an ``error`` body, each as UTF-8 bytes with the ``DAV:`` namespace.
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, override

import defusedxml.ElementTree as SafeET
from artifactr.core import Rejection
from defusedxml import DefusedXmlException
from pydantic import JsonValue

DAV: Final = "DAV:"
"""The namespace of WebDAV's own elements."""

MAX_BODY: Final = 64 * 1024
"""The most bytes a WebDAV request body may have; Word's and LibreOffice's are under 2 KiB."""

MAX_DEPTH: Final = 32
"""The deepest elements of a request body may nest."""

MAX_ELEMENTS: Final = 2_000
"""The most elements a request body may hold."""

XmlReason = Literal["not_xml", "declaration", "too_deep", "too_many_elements", "not_expected"]
"""Why a request body was refused: not well-formed XML, a document type declaration (entities,
external DTDs), nested too deep, too many elements, or not the element the method takes."""

Element = ET.Element
"""A parsed or written XML element."""


class MalformedXml(Rejection):
    """A WebDAV request body that is not the bounded, declaration-free XML it must be (400)."""

    code: ClassVar[str] = "malformed_xml"

    def __init__(self, reason: XmlReason, message: str) -> None:
        super().__init__(message)
        self.reason: XmlReason = reason

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return why the body was refused."""
        return {"reason": self.reason}


def dav(name: str) -> str:
    """Return the qualified name of a ``DAV:`` element, ``{DAV:}name``."""
    return f"{{{DAV}}}{name}"


def read_xml(body: bytes) -> Element | None:
    """Return the body's root element, or None for an empty body.

    Raises:
        MalformedXml: If it is not well-formed, declares a document type, or is out of bounds.
    """
    if not body.strip():
        return None
    try:
        root = SafeET.fromstring(body, forbid_dtd=True, forbid_entities=True)
    except DefusedXmlException as refused:
        raise MalformedXml(
            "declaration", "the body declares a document type or entities, which are refused"
        ) from refused
    except ET.ParseError as error:
        raise MalformedXml("not_xml", f"the body is not well-formed XML: {error}") from error
    _bounded(root)
    return root


def _bounded(root: Element) -> None:
    count = 0
    level: list[Element] = [root]
    depth = 1
    while level:
        count += len(level)
        if count > MAX_ELEMENTS:
            raise MalformedXml(
                "too_many_elements", f"the body holds more than {MAX_ELEMENTS} elements"
            )
        if depth > MAX_DEPTH:
            raise MalformedXml("too_deep", f"the body nests deeper than {MAX_DEPTH} elements")
        level = [child for element in level for child in element]
        depth += 1


def _expect(root: Element, name: str) -> None:
    if root.tag != dav(name):
        raise MalformedXml("not_expected", f"the body's root is {root.tag}, not DAV:{name}")


# ─── what a request asks ──────────────────────────────────────────────────────


@dataclass(frozen=True)
class Propfind:
    """What a ``PROPFIND`` asks for: every property, their names, or the ones named."""

    kind: Literal["allprop", "propname", "prop"]
    """All properties (an empty body too), only their names, or those in ``names``."""
    names: tuple[str, ...] = ()
    """The qualified names asked for (``prop``)."""


def propfind_of(root: Element | None) -> Propfind:
    """Return what a ``PROPFIND`` body asks for; an empty body asks for every property.

    Raises:
        MalformedXml: If the root is not ``DAV:propfind``.
    """
    if root is None:
        return Propfind("allprop")
    _expect(root, "propfind")
    if root.find(dav("propname")) is not None:
        return Propfind("propname")
    prop = root.find(dav("prop"))
    if prop is None:
        return Propfind("allprop")
    return Propfind("prop", tuple(child.tag for child in prop))


def proppatch_of(root: Element | None) -> tuple[str, ...]:
    """Return the qualified names a ``PROPPATCH`` sets or removes, in order.

    Raises:
        MalformedXml: If the body is empty or its root is not ``DAV:propertyupdate``.
    """
    if root is None:
        raise MalformedXml("not_expected", "a PROPPATCH needs a DAV:propertyupdate body")
    _expect(root, "propertyupdate")
    return tuple(
        prop.tag
        for action in root
        if action.tag in (dav("set"), dav("remove"))
        for holder in action.findall(dav("prop"))
        for prop in holder
    )


@dataclass(frozen=True)
class LockInfo:
    """What a ``LOCK`` body asks for."""

    exclusive: bool
    """An exclusive lock; a shared one is refused."""
    write: bool
    """A write lock, the only type RFC 4918 defines."""
    owner: str | None
    """The owner's text (an ``href`` or free text), kept only for the answer."""


def lockinfo_of(root: Element) -> LockInfo:
    """Return what a ``LOCK`` body asks for.

    Raises:
        MalformedXml: If the root is not ``DAV:lockinfo``.
    """
    _expect(root, "lockinfo")
    scope = root.find(dav("lockscope"))
    kind = root.find(dav("locktype"))
    owner = root.find(dav("owner"))
    text = None if owner is None else " ".join("".join(owner.itertext()).split())[:256]
    return LockInfo(
        exclusive=scope is not None and scope.find(dav("exclusive")) is not None,
        write=kind is None or kind.find(dav("write")) is not None,
        owner=text or None,
    )


# ─── what an answer says ──────────────────────────────────────────────────────


def element(name: str, text: str | None = None, *children: Element) -> Element:
    """Return a ``DAV:`` element (or a qualified one, ``{ns}name``) with text and children."""
    made = Element(name if name.startswith("{") else dav(name))
    made.text = text
    made.extend(children)
    return made


def serialized(root: Element) -> bytes:
    """Return an element as a UTF-8 XML document."""
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


@dataclass(frozen=True)
class ActiveLock:
    """A lock as ``lockdiscovery`` shows it."""

    owner: str
    """Who holds it, in words."""
    seconds: int
    """Seconds until it lapses, unless refreshed."""
    root: str
    """The URL it was taken on."""
    token: str | None
    """Its ``opaquelocktoken:`` URI, shown to its holder only; None for another's."""


def lockdiscovery(locks: tuple[ActiveLock, ...]) -> Element:
    """Return a ``DAV:lockdiscovery`` element: each lock's scope, type, owner and timeout."""
    found = element("lockdiscovery")
    for lock in locks:
        active = element(
            "activelock",
            None,
            element("lockscope", None, element("exclusive")),
            element("locktype", None, element("write")),
            element("depth", "0"),
            element("owner", lock.owner),
            element("timeout", f"Second-{max(lock.seconds, 0)}"),
        )
        if lock.token is not None:
            active.append(element("locktoken", None, element("href", lock.token)))
        active.append(element("lockroot", None, element("href", lock.root)))
        found.append(active)
    return found


def supportedlock() -> Element:
    """Return a ``DAV:supportedlock`` element: an exclusive write lock, the only one offered."""
    return element(
        "supportedlock",
        None,
        element(
            "lockentry",
            None,
            element("lockscope", None, element("exclusive")),
            element("locktype", None, element("write")),
        ),
    )


def propstat(props: list[Element], status: str) -> Element:
    """Return a ``DAV:propstat`` of these properties with an HTTP status line's tail."""
    return element(
        "propstat", None, element("prop", None, *props), element("status", f"HTTP/1.1 {status}")
    )


def response(href: str, *propstats: Element) -> Element:
    """Return a ``DAV:response`` for ``href`` with its property statuses."""
    return element("response", None, element("href", href), *propstats)


def multistatus(responses: list[Element]) -> bytes:
    """Return a ``DAV:multistatus`` document of these responses."""
    return serialized(element("multistatus", None, *responses))


def error(condition: str, reason: str, *more: Element) -> bytes:
    """Return a ``DAV:error`` document: the precondition that failed, its reason, and more."""
    return serialized(
        element("error", None, element(condition), *more, element("responsedescription", reason))
    )
