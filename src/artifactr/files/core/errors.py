"""Errors: every way artifactr.files refuses or fails (RFC-0003, ADR-0006).

A refusal a caller can act on is an artifactr :class:`~artifactr.core.Rejection`, with a stable
``code``; an app's failure that a retry won't mend is an :class:`AppFailure`::

    Exception
    ├── Rejection                      (artifactr.core)
    │   ├── InvalidState
    │   │   ├── ArtifactBusy           another holder has the artifact's lease (in core.leases)
    │   │   ├── CheckoutOutdated       a lapsed check-out whose file moved on can't be extended
    │   │   └── ContentDamaged         a manifest names bytes the store doesn't hold as named
    │   ├── Forbidden
    │   │   └── NotEnabled             the app is switched off in this workspace
    │   ├── UnsafeFile                 a file refused before the app sees it
    │   │   └── FileTooLarge           more bytes than the limit
    │   └── ServiceBusy                too many files are being read at once: try again later
    └── AppFailure                     the app could not do the call
        ├── AppTimeout                 its deadline passed
        ├── AppCrashed                 it died, or answered nonsense
        ├── AppTooLarge                its input or reply was over a limit
        └── AppRefused (a Rejection)   it refused, with its reason
"""

from typing import ClassVar, Literal, override

from artifactr.core import Forbidden, InvalidState, Rejection
from pydantic import JsonValue

FailureKind = Literal["timeout", "crashed", "too_large", "refused"]
"""The kinds of :class:`AppFailure`, as spans, metrics and the worker's replies name them."""


DamageKind = Literal["missing", "size"]
"""How a manifest disagrees with the blob store: its bytes are not there, or not that long."""


class ContentDamaged(InvalidState):
    """A revision's manifest names bytes the blob store doesn't hold as it names them.

    Bytes are never reported from a manifest alone: a generic JSON patch or create (REST, MCP)
    may write any manifest, since provenance is a claim (RFC-0003). When the store has no such
    blob for the artifact, or holds it with another size, every read of those bytes answers
    this, never a short download or a bare 404. Its own code, ``content_damaged``; the router
    answers 409. A check-in of good bytes repairs the file.
    """

    code: ClassVar[str] = "content_damaged"

    def __init__(self, artifact_id: str, version: int, sha256: str, problem: DamageKind) -> None:
        if problem == "missing":
            why = "the store holds no such bytes for it"
        else:
            why = "the store holds them with another size"
        super().__init__(
            f"the content of artifact {artifact_id} at version {version} is damaged: its "
            f"manifest names bytes {sha256[:12]}..., and {why}. Check in a good copy to repair it"
        )
        self.artifact_id = artifact_id
        self.version = version
        self.sha256 = sha256
        self.problem: DamageKind = problem

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the artifact, its version, the digest its manifest names, and the problem."""
        return {
            "artifact_id": self.artifact_id,
            "version": self.version,
            "sha256": self.sha256,
            "problem": self.problem,
        }


class CheckoutOutdated(InvalidState):
    """A check-out can't be extended: its lease lapsed and the file moved on past its base.

    Extending takes the lease, then reads the head under it; a base older than the head would
    hold the file for work whose check-in can only be a proposal. The lease is let go, and the
    check-out stays open: checking it in keeps the work as a proposal, or it may be discarded
    and the head checked out again. It keeps :class:`~artifactr.core.InvalidState`'s code, so
    REST answers 409.
    """

    def __init__(self, checkout_id: str, base_version: int, version: int) -> None:
        super().__init__(
            f"check-out {checkout_id} is of version {base_version}, and the file moved on to "
            f"version {version} after its lease lapsed: check it in to keep your work as a "
            "proposal, or discard it and check the file out again"
        )
        self.checkout_id = checkout_id
        self.base_version = base_version
        self.version = version

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the check-out, the version it is of, and the head's version."""
        return {
            "checkout_id": self.checkout_id,
            "base_version": self.base_version,
            "version": self.version,
        }


class NotEnabled(Forbidden):
    """The app that governs a native file is switched off in this workspace (ADR-0006).

    It keeps :class:`~artifactr.core.Forbidden`'s code, so REST answers 403.
    """

    def __init__(self, key: str) -> None:
        super().__init__(f"{key} is not enabled in this workspace")
        self.key = key

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the integration's key."""
        return {"integration": self.key}


UnsafeReason = Literal[
    "not_a_zip",
    "too_many_entries",
    "duplicate_name",
    "part_too_large",
    "total_too_large",
    "inflate_ratio",
    "too_large",
    "not_docx",
    "macro_enabled",
    "binary_format",
    "encrypted",
    "too_deep",
    "too_many_elements",
    "token_too_large",
    "image_too_large",
    "nested_too_deep",
]
"""Why a file was refused before any app saw it; the one list the package's zip screen
(:mod:`artifactr.files.core.screen`) and the worker's screen both name their refusals from.

- ``not_a_zip``: not a zip archive, or a malformed one (truncated, lying, overlapping).
- ``not_docx``: a zip or compound file that is not a .docx package (no content types, a
  document type declaration, a part named as XML that isn't, an older .doc).
- ``macro_enabled``: a macro-enabled package (.docm, .xlsm, .pptm, or any with a VBA project).
- ``binary_format``: a binary format no native kind holds (.xlsb, an Excel 97-2003 .xls, a
  PowerPoint 97-2003 .ppt); the message names it.
- ``encrypted``: protected by a password: the person must remove it and upload again.
- ``too_many_entries``: more entries, or a larger directory, than the limit.
- ``duplicate_name``: two parts with one name, once case and slashes are folded.
- ``part_too_large`` / ``total_too_large``: a part, or all of them, inflate past the limit.
- ``inflate_ratio``: the parts inflate too many times the file's size (a zip bomb).
- ``too_large``: more bytes arrived than the upload limit.
- ``too_deep``: XML elements nest deeper than the limit.
- ``too_many_elements``: the package's XML holds more elements than the limit.
- ``token_too_large``: one XML token (a tag, a comment) runs on past the limit.
- ``image_too_large``: an image declares more pixels than the limit, or hides its size.
- ``nested_too_deep``: packages inside packages, deeper than the limit.
"""


class UnsafeFile(Rejection):
    """A file refused before any app sees it: not a package, or hostile (a zip bomb)."""

    code: ClassVar[str] = "unsafe_file"

    def __init__(self, reason: UnsafeReason, message: str) -> None:
        super().__init__(message)
        self.reason: UnsafeReason = reason

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return why the file was refused."""
        return {"reason": self.reason}


class FileTooLarge(UnsafeFile):
    """A file with more bytes than the limit allows."""

    def __init__(self, limit: int) -> None:
        super().__init__("too_large", f"the file is larger than {limit} bytes")
        self.limit = limit

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the reason and the limit in bytes."""
        return {**super().details(), "limit": self.limit}


class ServiceBusy(Rejection):
    """Too many files are being screened and read at once: try again after ``retry_after`` s.

    The service reads a bounded number of files at once, and lets a bounded number wait
    (:class:`~artifactr.files.native.jobs.Jobs`, ADR-0015); a call past both is refused with
    this before anything is stored. Its own code, ``service_busy``; the router answers 503 with
    ``Retry-After``, as the worker does when its queue is full.
    """

    code: ClassVar[str] = "service_busy"

    def __init__(self, reason: str, retry_after: int = 2) -> None:
        super().__init__(f"the service is busy: {reason}; try again in {retry_after} s")
        self.reason = reason
        self.retry_after = retry_after

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return why, and the seconds to wait before trying again."""
        return {"reason": self.reason, "retry_after": self.retry_after}


class AppFailure(Exception):
    """The app could not do a call. ``kind`` names how; ``reason`` says why, in the app's words."""

    kind: ClassVar[FailureKind]

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AppTimeout(AppFailure):
    """The call's deadline passed; the app was stopped."""

    kind: ClassVar[FailureKind] = "timeout"


class AppCrashed(AppFailure):
    """The app died, exited early, broke its pipe or answered something unreadable."""

    kind: ClassVar[FailureKind] = "crashed"


class AppTooLarge(AppFailure):
    """The file or the app's reply was over a size limit."""

    kind: ClassVar[FailureKind] = "too_large"


class AppRefused(AppFailure, Rejection):
    """The app refused the call, with its reason: a bad command, or one confinement forbids.

    A :class:`~artifactr.core.Rejection` too, so an agent retries with the reason.
    """

    code: ClassVar[str] = "app_refused"
    kind: ClassVar[FailureKind] = "refused"

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the app's reason."""
        return {"reason": self.reason}


def failure_of(kind: FailureKind, reason: str) -> AppFailure:
    """Return the typed failure for a kind, as the worker's replies name it."""
    return _FAILURES[kind](reason)


_FAILURES: dict[FailureKind, type[AppFailure]] = {
    "timeout": AppTimeout,
    "crashed": AppCrashed,
    "too_large": AppTooLarge,
    "refused": AppRefused,
}
