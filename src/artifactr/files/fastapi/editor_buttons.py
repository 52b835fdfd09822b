"""Editor buttons: the portal's "Edit in the browser" and "Open in Word" (ADR-0016, ADR-0018).

:func:`editor_buttons` returns an :data:`~artifactr.files.fastapi.portal.EditorLinks` provider
for the portal's file page, from what the application mounted:

- a WOPI host with an editor's discovery configured: a form that posts the person's access token
  to the editor's ``edit`` action (``view`` for a viewer) in a new tab, "Edit in the browser" or
  "View in the browser"; the portal's CSP must let forms post to the editor's origin
  (:func:`editor_origins`);
- a WebDAV surface: "Open in Word" and "Open in LibreOffice" for a person who may edit
  (``ofe``), "Open read-only in Word" and "... in LibreOffice" for a viewer (``ofv``), each with a
  capability link for that person and file.

A caller who is not a person (an agent) gets no button: each acts for one person.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from artifactr.core import UserActor
from artifactr.workspace import Workspace

from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.portal import EditorLink, EditorLinks
from artifactr.files.fastapi.webdav import file_link, office_links
from artifactr.files.fastapi.wopi import WopiSettings, editor_launch, may_write
from artifactr.files.native import NativeFiles


@dataclass(frozen=True)
class DavLinks:
    """Where the WebDAV surface is, and what signs its links."""

    base_url: str
    """The application's address as desktop apps reach it (``http://127.0.0.1:8000``)."""
    capabilities: Capabilities
    """What signs each person's link to a file."""


def editor_buttons(
    files: NativeFiles,
    *,
    base_url: str,
    wopi: WopiSettings | None = None,
    dav: DavLinks | None = None,
) -> EditorLinks:
    """Return the provider of a file page's editor buttons, for what is mounted.

    Args:
        files: The service the page reads.
        base_url: The application's address as the editor reaches it, for the WOPI source.
        wopi: The WOPI host's settings; no browser button if None or without discovery.
        dav: The WebDAV surface's links; no desktop buttons if None.
    """

    async def buttons(ws: Workspace, artifact_id: str, manifest: NativeFile) -> list[EditorLink]:
        if not isinstance(ws.actor, UserActor):
            return []
        found: list[EditorLink] = []
        if wopi is not None:
            launch = await editor_launch(wopi, files, ws, artifact_id, base_url=base_url)
            if launch is not None:
                label = "Edit in the browser" if launch.action == "edit" else "View in the browser"
                found.append(
                    EditorLink(
                        label=label,
                        url=launch.action_url,
                        method="post",
                        fields=tuple(launch.fields.items()),
                        target="_blank",
                    )
                )
        if dav is not None:
            url = file_link(dav.base_url, dav.capabilities, ws, artifact_id, manifest.name)
            links = office_links(url, may_edit=await may_write(files, ws, artifact_id))
            verb = "Open" if links.editing else "Open read-only"
            found.append(EditorLink(label=f"{verb} in Word", url=links.word))
            found.append(EditorLink(label=f"{verb} in LibreOffice", url=links.libreoffice))
        return found

    return buttons


def editor_origins(urls: Sequence[str]) -> list[str]:
    """Return the origins (``scheme://host[:port]``) of editors' URLs, for the portal's CSP."""
    origins: list[str] = []
    for url in urls:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if parts.scheme in {"http", "https"} and parts.netloc and origin not in origins:
            origins.append(origin)
    return origins
