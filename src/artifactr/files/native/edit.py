"""Edit: an agent's batch of the app's commands on a base version (RFC-0003).

An edit runs under a lease of seconds (``edit:<uuid>``, "Check-out: a lease on the artifact"):
the app applies the batch, the result is put, and the revision commits as a JSON Patch that tests
the digest it was made from ("Edits: JSON Patch with a test"), or becomes a proposal when the
type's write policy says so. A batch that changes nothing makes no revision.
"""

import asyncio
import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Literal

from artifactr.core import (
    Applied,
    EditArtifact,
    Proposed,
    ValidationFailed,
    VersionConflict,
)
from artifactr.workspace import Workspace
from pydantic import BaseModel, ConfigDict

from artifactr.files.core import log
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppCrashed, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.leases import hold_artifact, scope_of
from artifactr.files.core.manifests import NativeFile, Provenance
from artifactr.files.core.revisions import revision_patch
from artifactr.files.native.base import BYTES_IN, JSON, ServiceBase


class Unchanged(BaseModel):
    """The batch or check-in left the file as it was: no revision was made."""

    model_config = ConfigDict(frozen=True)

    type: Literal["unchanged"] = "unchanged"
    """The outcome's tag."""
    artifact_id: str
    """The artifact."""
    version: int
    """Its version, still the head."""


class Edit(ServiceBase):
    """The part of the service that edits a native file by a batch of the app's commands."""

    @log.logged("edited")
    async def edit(
        self,
        ws: Workspace,
        artifact_id: str,
        *,
        base_version: int,
        commands: Iterable[AppCommand],
        summary: str | None = None,
        thread_id: str | None = None,
    ) -> Applied | Proposed | Unchanged:
        """Run a batch of the app's commands on a version and commit the result.

        The edit holds the file for ``edit_ttl`` (``edit:<uuid>``) while the app runs and the
        revision commits, and checks its base against the head again once the file is held
        (ADR-0015). An agent's edit becomes a proposal; a person's commits. A batch that
        changes nothing (the fingerprint is the base's) makes no revision.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            ValidationFailed: If the batch is empty.
            VersionConflict: If ``base_version`` is not the head.
            Forbidden: If the actor may not edit it.
            ArtifactBusy: If someone holds it: a person's check-out or another edit.
            AppRefused: If the app refuses a command.
            AppFailure: If the app times out, crashes or finds the file too large.
            ServiceBusy: If too many files are being read at once (ADR-0015).
        """
        batch = tuple(commands)
        version, manifest = await self.manifest(ws, artifact_id)
        await self._require_enabled(ws)
        if not batch:
            raise ValidationFailed(
                "a batch needs at least one command",
                [{"loc": ["commands"], "msg": "empty batch", "type": "too_short"}],
            )
        if base_version != version:
            raise VersionConflict(artifact_id, base=base_version, head=version)
        holder = f"edit:{uuid.uuid4()}"
        # The manifest read proved the file there and visible: the lease needs no second look.
        await hold_artifact(ws, self.leases, artifact_id, holder=holder, ttl=self._edit_ttl)
        try:
            # The head again, under the lease: someone may have committed and let go of the
            # file since the first read, and the app must not run on a version already gone.
            version, manifest = await self.manifest(ws, artifact_id)
            if base_version != version:
                raise VersionConflict(artifact_id, base=base_version, head=version)
            return await self._edit(ws, artifact_id, version, manifest, batch, summary, thread_id)
        finally:
            await self.leases.release(scope_of(ws), artifact_id, holder)

    async def _edit(
        self,
        ws: Workspace,
        artifact_id: str,
        version: int,
        manifest: NativeFile,
        batch: tuple[AppCommand, ...],
        summary: str | None,
        thread_id: str | None,
    ) -> Applied | Proposed | Unchanged:
        source = await self._blob(ws, artifact_id, version, manifest.content)
        scoped = self._scoped(ws, artifact_id)
        attributes = {
            "artifactr.files.commands": len(batch),
            "artifactr.files.content.sha256": manifest.content.sha256,
            BYTES_IN: len(source),
        }
        async with self.jobs.turn():
            with self._telemetry.operation("apply", scoped, attributes) as span:
                edited = await self.app.apply(
                    source, batch, deadline=self._deadline, author=ws.actor.display_name
                )
                span.set_attributes(self._about(edited.inspection))
                span.set_attribute("artifactr.files.bytes.out", len(edited.content))
            try:
                printed = await asyncio.to_thread(fingerprint, edited.content, limits=self._limits)
            except UnsafeFile as unsafe:
                message = f"the app saved a package that can't be read: {unsafe}"
                raise AppCrashed(message) from unsafe
        if printed == manifest.fingerprint:
            return Unchanged(artifact_id=artifact_id, version=version)
        blobs, [commands] = await self._put_all(
            ws,
            artifact_id,
            edited.content,
            manifest.content.media_type,
            edited.inspection,
            printed,
            also=[(_canonical(batch), JSON)],
        )
        about = edited.inspection.about
        after = manifest.model_copy(
            update={
                **blobs,
                "provenance": Provenance(
                    source="commands",
                    app=about.app,
                    app_version=about.version,
                    build=about.build,
                    base=manifest.content.sha256,
                    commands=commands,
                ),
            }
        )
        return await ws.commit(
            EditArtifact(
                artifact_id=artifact_id,
                base_version=version,
                patch=revision_patch(manifest.content.sha256, after),
                summary=summary or _summary(batch),
                thread_id=thread_id,
            )
        )


def _canonical(batch: Sequence[AppCommand]) -> bytes:
    """Return a batch as canonical JSON: sorted keys, no spaces."""
    data = [command.model_dump(mode="json") for command in batch]
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _summary(batch: Sequence[AppCommand]) -> str:
    names = ", ".join(command.command for command in batch[:5])
    more = f" and {len(batch) - 5} more" if len(batch) > 5 else ""
    return f"ran {names}{more}"
