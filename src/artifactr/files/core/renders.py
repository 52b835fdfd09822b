"""Renders: the cache of pages the app drew, by content, page, scale and app build (RFC-0003).

A key names the blob a page was drawn from, the page, the scale and the app's build, so a new
build never serves an old drawing. The port and the in-memory adapter; the SQL one is
:mod:`artifactr.files.sql.renders`.
"""

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class RenderKey:
    """What a rendered page is cached under: never the digest alone."""

    tenant_id: str
    """The tenant."""
    workspace_id: str
    """The workspace."""
    artifact_id: str
    """The artifact."""
    sha256: str
    """The content's digest."""
    page: int
    """The page, from 1."""
    scale: float
    """Pixels per point."""
    build: str
    """The app's build, so a new build renders afresh."""


class Renders(Protocol):
    """A cache of rendered pages, keyed by :class:`RenderKey`."""

    async def get(self, key: RenderKey) -> bytes | None:
        """Return the cached PNG, or None."""
        ...

    async def put(self, key: RenderKey, png: bytes) -> None:
        """Cache a PNG, replacing any under the same key."""
        ...


class InMemoryRenders:
    """A render cache in a dict."""

    def __init__(self) -> None:
        self._pages: dict[RenderKey, bytes] = {}

    async def get(self, key: RenderKey) -> bytes | None:
        """Return the cached PNG, or None."""
        return self._pages.get(key)

    async def put(self, key: RenderKey, png: bytes) -> None:
        """Cache a PNG."""
        self._pages[key] = png
