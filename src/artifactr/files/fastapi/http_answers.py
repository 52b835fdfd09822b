"""Routing: what the files routes share, the router's and the diffs' (RFC-0003, ADR-0011).

The bounds of what a path names (:data:`MAX_INT`, the scales), how a refusal answers
(:func:`or_http`) and how the OpenAPI document lists it (:func:`refusals`), and the cache
validators every route that serves bytes answers with (:func:`cached_png`, :func:`matches`).

Refusals answer as artifactr's router does: ``{"detail": rejection.payload()}`` with the
rejection's status from ``STATUS_CODES`` (else 400). The package's own map to their own:
:class:`~artifactr.files.core.errors.ArtifactBusy` 409 with the lease, ``NotEnabled`` 403,
``FileTooLarge`` 413, ``UnsafeFile`` and ``AppRefused`` 422, ``ContentDamaged`` 409, and a
body's :class:`~artifactr.files.fastapi.bodies.MalformedForm` 400 and
:class:`~artifactr.files.fastapi.bodies.FormRefused` 422; an app that times out is 504, one that
crashes 502, and a file too large for the app 413.
"""

import hashlib
from collections.abc import Awaitable
from typing import Annotated, Any, Final

from artifactr.core import Rejection
from artifactr.fastapi import STATUS_CODES
from artifactr.fastapi.router import REFUSALS

from artifactr.files.core.errors import AppFailure, FailureKind, FileTooLarge
from fastapi import HTTPException, Path, Query, Request, Response

MAX_INT: Final = 2**31 - 1
"""The largest version or page a path may name: what a database's integer holds."""

MAX_SCALE: Final = 4.0
"""The largest scale a page is rendered at, in pixels per point (288 dpi)."""

MIN_SCALE: Final = 0.1
"""The smallest scale a page is rendered at."""

CACHE_CONTROL: Final = "private, no-cache"
"""Bytes may be kept by the browser, but each use asks again, so access is checked each time."""

ID_PATTERN: Final = r"^[A-Za-z0-9_.:-]+$"
"""What an id the package makes (``co_<hex>``, ``prop_<hex>``) is made of."""

ArtifactPath = Annotated[str, Path(min_length=1, max_length=255)]
"""An artifact's id in a path."""

PagePath = Annotated[int, Path(ge=1, le=MAX_INT)]
"""A page in a path, from 1."""

ScaleQuery = Annotated[float, Query(ge=MIN_SCALE, le=MAX_SCALE, allow_inf_nan=False)]
"""The scale a page is rendered at, in pixels per point (1 is 72 dpi)."""

BINARY: Final[dict[str, Any]] = {"schema": {"type": "string", "format": "binary"}}
"""A body of bytes, in the OpenAPI document."""

ETAG: Final[dict[str, Any]] = {
    "ETag": {
        "description": "The bytes' SHA-256, quoted: a strong tag",
        "schema": {"type": "string"},
    }
}
"""The ``ETag`` header, in the OpenAPI document."""

STATUSES: Final = {
    **STATUS_CODES,
    "artifact_busy": 409,
    "unsafe_file": 422,
    "app_refused": 422,
    "content_damaged": 409,
    "malformed_form": 400,
    "form_refused": 422,
}
"""The HTTP status of each rejection's code; any other is 400."""

APP_STATUSES: Final[dict[FailureKind, int]] = {
    "timeout": 504,
    "crashed": 502,
    "too_large": 413,
    "refused": 422,
}
"""The HTTP status of each way an app fails."""

_REFUSED: Final = REFUSALS[400]["model"]


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Return the OpenAPI document's refused responses of a route, with these statuses."""
    return {status: {"model": _REFUSED, "description": "Refused"} for status in statuses}


def png_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """Return the OpenAPI document's responses of a page route: the PNG, 304, and refusals."""
    return {
        200: {
            "content": {"image/png": BINARY},
            "headers": ETAG,
            "description": "The page as a PNG",
        },
        304: {"headers": ETAG, "description": "Not modified: the ETag matches"},
        **refusals(*statuses),
    }


async def or_http[T](awaitable: Awaitable[T]) -> T:
    """Return what ``awaitable`` returns, or raise its refusal or failure as an HTTP problem.

    Raises:
        HTTPException: With the status of the rejection or the app's failure, and its payload.
    """
    try:
        return await awaitable
    except Rejection as rejection:
        status = 413 if isinstance(rejection, FileTooLarge) else STATUSES.get(rejection.code, 400)
        raise HTTPException(status_code=status, detail=rejection.payload()) from rejection
    except AppFailure as failure:
        detail = {"type": f"app_{failure.kind}", "message": failure.reason}
        raise HTTPException(status_code=APP_STATUSES[failure.kind], detail=detail) from failure


def cache_headers(etag: str) -> dict[str, str]:
    """Return the headers of bytes with this ``ETag``: kept, but asked again on each use."""
    return {"ETag": etag, "Cache-Control": CACHE_CONTROL, "X-Content-Type-Options": "nosniff"}


def matches(request: Request, etag: str) -> bool:
    """Return whether the request's ``If-None-Match`` names ``etag``, weakly (RFC 9110 13.1.2)."""
    tags = {
        tag.strip().removeprefix("W/")
        for tag in request.headers.get("if-none-match", "").split(",")
    }
    return etag in tags or "*" in tags


def cached_png(request: Request, png: bytes) -> Response:
    """Return a rendered page, tagged with its digest; 304 if the request has it already."""
    etag = f'"{hashlib.sha256(png).hexdigest()}"'
    if matches(request, etag):
        return Response(status_code=304, headers=cache_headers(etag))
    return Response(png, media_type="image/png", headers=cache_headers(etag))
