"""artifactr.files: native files (Word documents first) as versioned artifactr artifacts.

A native file is a manifest (:class:`WordDocument`) over bytes in a content-addressed blob
store. Agents edit it by batches of the native app's own commands; people check it out, edit it
in the app's browser build and check it in. Every revision is a JSON Patch that first tests the
content digest it was made from (RFC-0003, ADR-0006)::

    from artifactr.files import NativeFiles, WordDocument, integration_gate

Extras: ``sql``/``sqlite``/``postgres`` (:mod:`artifactr.files.sql`), ``fastapi``
(:mod:`artifactr.files.router`), ``worker`` (:mod:`artifactr.files.wordcraft`), ``mcp``
(:mod:`artifactr.files.mcp`).
"""

from artifactr.files.app import (
    About,
    App,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
    ReviewItem,
)
from artifactr.files.blobs import Blobs, InMemoryBlobs, InMemoryRenders, RenderKey, Renders
from artifactr.files.checkouts import Checkout, Checkouts, InMemoryCheckouts
from artifactr.files.errors import (
    AppCrashed,
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    ArtifactBusy,
    ContentDamaged,
    FileTooLarge,
    NotEnabled,
    UnsafeFile,
)
from artifactr.files.leases import (
    ArtifactLease,
    InMemoryLeases,
    Leases,
    artifact_lease,
    lease_artifact,
    release_artifact,
)
from artifactr.files.manifests import DOCX, Blob, NativeFile, Provenance, WordDocument

__all__ = [
    "DOCX",
    "About",
    "App",
    "AppCommand",
    "AppCrashed",
    "AppFailure",
    "AppRefused",
    "AppTimeout",
    "AppTooLarge",
    "ArtifactBusy",
    "ArtifactLease",
    "Blob",
    "Blobs",
    "Checkout",
    "Checkouts",
    "CommandSpec",
    "ContentDamaged",
    "Edited",
    "FileTooLarge",
    "InMemoryBlobs",
    "InMemoryCheckouts",
    "InMemoryLeases",
    "InMemoryRenders",
    "Inspection",
    "Leases",
    "NativeFile",
    "NotEnabled",
    "Provenance",
    "RenderKey",
    "Renders",
    "ReviewItem",
    "UnsafeFile",
    "WordDocument",
    "artifact_lease",
    "lease_artifact",
    "release_artifact",
]
