"""The app's switch: an integration per app, on or off per workspace (ADR-0006).

A native file's app is an integration, ``files:<app>``. :class:`Integrations` is the port, and
:func:`integration_gate` an ``authorize`` hook for :class:`~artifactr.workspace.Workspaces` that
refuses a write to a native file while its app is off, on every surface. Reads go on.
"""

from collections.abc import Callable, Mapping
from typing import Final, Protocol

from artifactr.core import Actor
from artifactr.workspace import Access, Authorize, Scope, Storage

from artifactr.files.core.errors import NotEnabled

WRITES: Final = frozenset(
    {
        "artifactr:create_artifact",
        "artifactr:edit_artifact",
        "artifactr:archive_artifact",
        "artifactr:propose_change",
        "artifactr:respond_to_proposal",
    }
)
"""The actions that change an artifact: refused on a native file while its app is off."""

KINDS_KEPT: Final = 4096
"""How many artifacts' kinds a gate keeps, so a write asked again reads none (ADR-0034)."""

KeyOf = Callable[[str], str | None]
"""Returns the integration key that governs an artifact kind, or None if none does."""


class Integrations(Protocol):
    """Whether an integration is on in a tenant's workspace."""

    async def is_enabled(self, tenant_id: str, workspace_id: str, key: str) -> bool:
        """Return whether ``key`` is on in the workspace."""
        ...


class InMemoryIntegrations:
    """Switches in a dict: each key's default, and each workspace's choice over it.

    Args:
        defaults: Each key's state where a workspace has not chosen; a key not named is on.
    """

    def __init__(self, defaults: Mapping[str, bool] | None = None) -> None:
        self._defaults = dict(defaults or {})
        self._set: dict[tuple[str, str, str], bool] = {}

    async def is_enabled(self, tenant_id: str, workspace_id: str, key: str) -> bool:
        """Return whether ``key`` is on in the workspace."""
        chosen = self._set.get((tenant_id, workspace_id, key))
        return self._defaults.get(key, True) if chosen is None else chosen

    def set(self, tenant_id: str, workspace_id: str, key: str, *, enabled: bool) -> None:
        """Switch ``key`` on or off in one workspace (an admin's choice)."""
        self._set[(tenant_id, workspace_id, key)] = enabled


def integration_gate(
    integrations: Integrations,
    key_of: KeyOf,
    storage: Storage,
    *,
    authorize: Authorize | None = None,
    kept: int = KINDS_KEPT,
) -> Authorize:
    """Return an ``authorize`` hook that refuses writes to a native file while its app is off.

    It wraps ``authorize`` (grantr's or the application's own), asked first: a refusal there
    stays a :class:`~artifactr.core.Forbidden`. Then, for a write that names an existing
    artifact of a kind ``key_of`` governs, it asks ``integrations`` and raises
    :class:`NotEnabled` while the key is off. ``storage`` is the one the ``Workspaces`` holds;
    the gate reads only an artifact's kind from it.

    A create names no existing artifact, and ``Access`` carries no kind, so a create over a
    generic surface is not gated: native files are created by :meth:`NativeFiles.upload`, which
    asks the switch itself.

    An artifact's kind never changes, so the gate keeps the last ``kept`` it read and reads each
    artifact's once; the switch is asked on every write, and a missing artifact is never kept
    (ADR-0034).

    Args:
        integrations: The switch.
        key_of: The integration key of a kind (:meth:`NativeFiles.key_of`).
        storage: The workspaces' storage, to read an artifact's kind.
        authorize: The hook it wraps; allows everything if omitted.
        kept: How many artifacts' kinds it keeps (:data:`KINDS_KEPT`), the oldest let go first.
    """
    kinds: dict[tuple[str, str, str], str] = {}

    async def kind_of(tenant_id: str, workspace_id: str, artifact_id: str) -> str | None:
        known = (tenant_id, workspace_id, artifact_id)
        kind = kinds.get(known)
        if kind is None:
            found = await storage.artifact(Scope(tenant_id, workspace_id), artifact_id)
            if found is None:
                return None  # not kept: an id missing now may name nothing, ever
            if len(kinds) >= kept:
                del kinds[next(iter(kinds))]
            kind = kinds[known] = found.kind
        return kind

    async def gate(tenant_id: str, workspace_id: str | None, actor: Actor, access: Access) -> bool:
        if authorize is not None and not await authorize(tenant_id, workspace_id, actor, access):
            return False
        if workspace_id is None or access.artifact_id is None or access.action not in WRITES:
            return True
        kind = await kind_of(tenant_id, workspace_id, access.artifact_id)
        key = None if kind is None else key_of(kind)
        if key is not None and not await integrations.is_enabled(tenant_id, workspace_id, key):
            raise NotEnabled(key)
        return True

    return gate
