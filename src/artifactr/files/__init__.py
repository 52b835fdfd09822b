"""artifactr.files: native files (Word documents first) as versioned artifactr artifacts.

A native file is a manifest (:class:`WordDocument`) over bytes in a content-addressed blob
store. Agents edit it by batches of the app's commands; people check it out and in. Every
revision is a JSON Patch that first tests the content digest it was made from::

    from artifactr.files import NativeFiles, WordDocument, integration_gate

The top level holds what an application uses. The adapters that need an extra load when first
used, and a missing extra is an :class:`ImportError` that names it: ``SqlBlobs``,
``SqlCheckouts``, ``SqlHistory``, ``SqlLeases``, ``SqlRenders`` (``sqlite`` or ``postgres``),
``S3Blobs`` (``s3``), ``files_router`` (``fastapi``), ``Subprocess`` and ``Worker``
(``worker``), ``native_file_tools``. The MCP tools are :mod:`artifactr.files.mcp` (``mcp``).
"""

import importlib
from typing import TYPE_CHECKING, Final

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import (
    About,
    App,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
    ReviewItem,
)
from artifactr.files.core.blobs import Blobs, InMemoryBlobs
from artifactr.files.core.checkouts import Checkout, Checkouts, InMemoryCheckouts
from artifactr.files.core.errors import (
    AppCrashed,
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    CheckoutOutdated,
    ContentDamaged,
    FileTooLarge,
    NotEnabled,
    ServiceBusy,
    UnsafeFile,
)
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.history import History, WorkspaceHistory
from artifactr.files.core.integrations import InMemoryIntegrations, Integrations, integration_gate
from artifactr.files.core.leases import (
    ArtifactBusy,
    ArtifactLease,
    InMemoryLeases,
    Leases,
    artifact_lease,
    lease_artifact,
    release_artifact,
)
from artifactr.files.core.manifests import (
    DOCX,
    PPTX,
    XLSX,
    Blob,
    NativeFile,
    Presentation,
    Provenance,
    Spreadsheet,
    WordDocument,
)
from artifactr.files.core.renders import InMemoryRenders, RenderKey, Renders
from artifactr.files.core.screen import DEFAULT_LIMITS, ZipLimits
from artifactr.files.core.telemetry import Telemetry
from artifactr.files.native import CheckedIn, NativeFiles, Unchanged

if TYPE_CHECKING:
    # What an extra brings, named for type checkers; at run time __getattr__ loads it.
    from artifactr.files.agent.tools import native_file_tools as native_file_tools
    from artifactr.files.apps.wordcraft import Subprocess as Subprocess
    from artifactr.files.apps.worker import Worker as Worker
    from artifactr.files.fastapi.router import files_router as files_router
    from artifactr.files.fastapi.wopi import WopiSettings as WopiSettings
    from artifactr.files.fastapi.wopi import wopi_router as wopi_router
    from artifactr.files.fastapi.wopi_tokens import mint_access_token as mint_access_token
    from artifactr.files.s3 import S3Blobs as S3Blobs
    from artifactr.files.sql import SqlBlobs as SqlBlobs
    from artifactr.files.sql import SqlCheckouts as SqlCheckouts
    from artifactr.files.sql import SqlHistory as SqlHistory
    from artifactr.files.sql import SqlLeases as SqlLeases
    from artifactr.files.sql import SqlRenders as SqlRenders

_SQL: Final = "the 'sqlite' or 'postgres' extra: pip install 'artifactr-files-ai[sqlite]'"
_WORKER: Final = "the 'worker' extra: pip install 'artifactr-files-ai[worker]'"
_FASTAPI: Final = "the 'fastapi' extra: pip install 'artifactr-files-ai[fastapi]'"
_S3: Final = "the 's3' extra: pip install 'artifactr-files-ai[s3]'"

EXTRAS: Final[dict[str, tuple[str, str]]] = {
    "SqlBlobs": ("artifactr.files.sql", _SQL),
    "SqlCheckouts": ("artifactr.files.sql", _SQL),
    "SqlHistory": ("artifactr.files.sql", _SQL),
    "SqlLeases": ("artifactr.files.sql", _SQL),
    "SqlRenders": ("artifactr.files.sql", _SQL),
    "S3Blobs": ("artifactr.files.s3", _S3),
    "Subprocess": ("artifactr.files.apps.wordcraft", _WORKER),
    "Worker": ("artifactr.files.apps.worker", _WORKER),
    "files_router": ("artifactr.files.fastapi.router", _FASTAPI),
    "wopi_router": ("artifactr.files.fastapi.wopi", _FASTAPI),
    "WopiSettings": ("artifactr.files.fastapi.wopi", _FASTAPI),
    "mint_access_token": ("artifactr.files.fastapi.wopi_tokens", _FASTAPI),
    "native_file_tools": (
        "artifactr.files.agent.tools",
        "pydantic-ai, which artifactr-ai brings: pip install 'artifactr-ai>=0.2.1'",
    ),
}
"""Each name an extra brings: the module it lives in, and what to install for it."""


def __getattr__(name: str) -> object:
    """Return a name an extra brings, importing its module on first use.

    Raises:
        AttributeError: If the package has no such name.
        ImportError: If what it needs is not installed; the message names the extra.
    """
    if name not in EXTRAS:
        raise AttributeError(f"module 'artifactr.files' has no attribute {name!r}")
    module, needs = EXTRAS[name]
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as missing:
        raise ImportError(
            f"artifactr.files.{name} needs {needs} ({missing.name} is not installed)",
            name=missing.name,
        ) from missing
    return getattr(loaded, name)


def __dir__() -> list[str]:
    return sorted([*__all__, *EXTRAS])


__all__ = [
    "DEFAULT_LIMITS",
    "DOCX",
    "PPTX",
    "XLSX",
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
    "CheckedIn",
    "Checkout",
    "CheckoutOutdated",
    "Checkouts",
    "CommandSpec",
    "ContentDamaged",
    "Edited",
    "FakeApp",
    "FileTooLarge",
    "History",
    "InMemoryBlobs",
    "InMemoryCheckouts",
    "InMemoryIntegrations",
    "InMemoryLeases",
    "InMemoryRenders",
    "Inspection",
    "Integrations",
    "Leases",
    "NativeFile",
    "NativeFiles",
    "NotEnabled",
    "Presentation",
    "Provenance",
    "RenderKey",
    "Renders",
    "ReviewItem",
    "ServiceBusy",
    "Spreadsheet",
    "Telemetry",
    "Unchanged",
    "UnsafeFile",
    "WordDocument",
    "WorkspaceHistory",
    "ZipLimits",
    "artifact_lease",
    "fingerprint",
    "integration_gate",
    "lease_artifact",
    "release_artifact",
]
