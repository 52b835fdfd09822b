"""Editor: the policy the hosted editor is served with (RFC-0003 "People: check-out and check-in").

People edit a checked-out file in WordCraft's browser build, unmodified and as released, which
the deployment hosts on an origin of its own, where no cookie is ever set. This module is that
policy as a small piece an application, or the stack's edge, can use:

- :func:`editor_headers` computes the response headers from the build's ``index.html``: a
  Content Security Policy of ``default-src 'self'``, plus the hash of each inline script (and
  style), ``'wasm-unsafe-eval'`` and ``blob:``, with ``frame-ancestors 'none'``, so the page
  runs its own code only, calls out nowhere and can't be framed.
- :class:`EditorPolicy` is ASGI middleware that adds them to every response, drops any
  ``Set-Cookie``, and removes ``Cookie`` from every request before the app sees it.
- :func:`editor_app` serves a build directory as static files under that policy::

    app.mount("/", editor_app(Path("wordcraft-web-0.8.0")))

The build's own ``_headers`` and dot files (``.htaccess``), meant for other servers, aren't
served.
"""

import base64
import hashlib
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Final, override

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HIDDEN_FILES: Final = frozenset({"_headers"})
"""Files of the build that configure other servers, never served (with dot files)."""


class _Inline(HTMLParser):
    """Collects the text of each inline ``<script>`` and ``<style>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._open: list[str] | None = None

    @override
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script" and not any(name == "src" for name, _ in attrs):
            self.scripts.append("")
            self._open = self.scripts
        elif tag == "style":
            self.styles.append("")
            self._open = self.styles

    @override
    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[-1] += data

    @override
    def handle_endtag(self, tag: str) -> None:
        self._open = None


def _hashes(texts: list[str]) -> list[str]:
    return [f"'sha256-{_digest(text)}'" for text in texts]


def _digest(text: str) -> str:
    # A browser hashes the text as it parsed it: every CR LF and lone CR is a LF by then.
    parsed = text.replace("\r\n", "\n").replace("\r", "\n")
    return base64.b64encode(hashlib.sha256(parsed.encode()).digest()).decode()


def content_security_policy(index_html: str | bytes) -> str:
    """Return the editor's Content Security Policy for a build's ``index.html``.

    Only the page's own origin, the hashes of its inline scripts and styles, WebAssembly and
    ``blob:`` URLs are allowed; nothing may frame it, change its base URL or submit a form.
    """
    html = index_html.decode() if isinstance(index_html, bytes) else index_html
    inline = _Inline()
    inline.feed(html)
    inline.close()
    scripts = " ".join(["'self'", *_hashes(inline.scripts), "'wasm-unsafe-eval'", "blob:"])
    directives = [
        "default-src 'self' blob:",
        f"script-src {scripts}",
        *([f"style-src 'self' {' '.join(_hashes(inline.styles))}"] if inline.styles else []),
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
    return "; ".join(directives)


def editor_headers(index_html: str | bytes) -> dict[str, str]:
    """Return the headers every response of the hosted editor carries.

    Args:
        index_html: The build's ``index.html``, whose inline scripts are allowed by hash.
    """
    return {
        "Content-Security-Policy": content_security_policy(index_html),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
    }


class EditorPolicy:
    """ASGI middleware: the editor's headers on every response, and no cookies either way.

    ``Cookie`` is removed from each request before the app sees it, and ``Set-Cookie`` from
    each response, so the editor's origin never holds a token. Other scopes (lifespan) pass
    through.

    Args:
        app: The app it wraps.
        headers: The headers to set on every response (:func:`editor_headers`).
    """

    def __init__(self, app: ASGIApp, *, headers: Mapping[str, str]) -> None:
        self.app = app
        self.headers = dict(headers)
        """The headers set on every response."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request under the policy; pass any other scope through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kept = [(name, value) for name, value in scope["headers"] if name.lower() != b"cookie"]

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                del headers["set-cookie"]
                headers.update(self.headers)
            await send(message)

        await self.app({**scope, "headers": kept}, receive, send_with_policy)


class _Build(StaticFiles):
    """A build directory's files, without those meant for other servers."""

    @override
    async def get_response(self, path: str, scope: Scope) -> Response:
        name = Path(path).name
        if name.startswith(".") or name in HIDDEN_FILES:
            raise HTTPException(status_code=404)
        return await super().get_response(path, scope)


def editor_app(build: Path) -> Starlette:
    """Return an app serving a browser build under the editor's policy.

    ``/`` serves ``index.html``; the policy is computed from it once, as a build is fixed.
    Refusals (404, 405) carry the policy too.

    Args:
        build: The unpacked build: ``index.html``, its ``.js`` and ``.wasm``.
    """
    headers = editor_headers((build / "index.html").read_bytes())
    return Starlette(
        routes=[Mount("/", app=_Build(directory=build, html=True))],
        middleware=[Middleware(EditorPolicy, headers=headers)],
    )
