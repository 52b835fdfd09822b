"""A file's life: an upload makes it, a batch of the app's commands edits it (RFC-0003).

An upload streams a file in, has the package screened and the app inspect it, puts its bytes,
text and review, and only then creates the artifact ("The artifact"). An edit is an agent's
batch of the app's own commands on a base version, run under a lease of seconds
(``edit:<uuid>``, "Check-out: a lease on the artifact"): the app applies it, the result is put,
and the revision commits as a JSON Patch that tests the digest it was made from ("Edits: JSON
Patch with a test"). Either becomes a proposal when the type's write policy says so; a batch
that changes nothing makes no revision.
"""

import asyncio
import json
import uuid
from collections.abc import AsyncIterable, Iterable, Sequence
from typing import Final, Literal

from artifactr.core import (
    Applied,
    EditArtifact,
    Proposed,
    ValidationFailed,
    VersionConflict,
    new_artifact_id,
)
from artifactr.workspace import Workspace
from pydantic import BaseModel, ConfigDict, JsonValue

from artifactr.files.core import log
from artifactr.files.core.app import AppCommand
from artifactr.files.core.errors import AppCrashed, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.leases import hold_artifact, scope_of
from artifactr.files.core.manifests import NativeFile, Provenance, clean_text
from artifactr.files.core.revisions import revision_patch
from artifactr.files.native.service import BYTES_IN, JSON, Service
from artifactr.files.native.spool import spool

MAX_NAME: Final = 255
"""The most characters a file's name may have."""


class Unchanged(BaseModel):
    """The batch or check-in left the file as it was: no revision was made."""

    model_config = ConfigDict(frozen=True)

    type: Literal["unchanged"] = "unchanged"
    """The outcome's tag."""
    artifact_id: str
    """The artifact."""
    version: int
    """Its version, still the head."""


class FileLife(Service):
    """The part of the service that makes a native file and edits it."""

    @log.logged("uploaded")
    async def upload(
        self,
        ws: Workspace,
        name: str,
        data: AsyncIterable[bytes],
        *,
        media_type: str | None = None,
        thread_id: str | None = None,
    ) -> Applied | Proposed:
        """Create a native file from a stream: inspected by the app, put, then created.

        An agent's upload becomes a proposal, as the type's write policy says.

        Raises:
            NotEnabled: If the app is off here.
            ValidationFailed: If the name or media type doesn't fit a native kind.
            FileTooLarge: If the stream is over the size limit.
            UnsafeFile: If the file is not a package or is hostile.
            AppFailure: If the app can't read it.
        """
        await self._require_enabled(ws)
        name = clean_text(name)
        artifact_type = self._type_for(name, media_type)
        media = media_type or next(iter(sorted(artifact_type.formats)))
        incoming = await spool(data, limit=self._max_size)
        try:
            printed = await asyncio.to_thread(fingerprint, incoming.file, limits=self._limits)
            artifact_id = new_artifact_id()
            inspection = await self._inspect(ws, artifact_id, incoming)
            blobs, _ = await self._put_all(ws, artifact_id, incoming, media, inspection, printed)
        finally:
            incoming.close()
        manifest = artifact_type(
            name=name,
            provenance=Provenance(
                source="upload",
                app=inspection.about.app,
                app_version=inspection.about.version,
                build=inspection.about.build,
            ),
            **blobs,
        )
        return await ws.create(manifest, artifact_id=artifact_id, thread_id=thread_id)

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
        revision commits. An agent's edit becomes a proposal; a person's commits. A batch that
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
        with self._telemetry.operation("apply", scoped, attributes) as span:
            edited = await self.app.apply(
                source, batch, deadline=self._deadline, author=ws.actor.display_name
            )
            span.set_attributes(self._about(edited.inspection))
            span.set_attribute("artifactr.files.bytes.out", len(edited.content))
        try:
            printed = await asyncio.to_thread(fingerprint, edited.content, limits=self._limits)
        except UnsafeFile as unsafe:
            raise AppCrashed(f"the app saved a package that can't be read: {unsafe}") from unsafe
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

    def _type_for(self, name: str, media_type: str | None) -> type[NativeFile]:
        kinds = [
            kind
            for kind in self._types.values()
            if media_type is None or media_type in kind.formats
        ]
        errors: list[JsonValue] = []
        if not name.strip():
            errors.append({"loc": ["name"], "msg": "a file needs a name", "type": "missing"})
        elif len(name) > MAX_NAME:
            message = f"a file's name has at most {MAX_NAME} characters"
            errors.append({"loc": ["name"], "msg": message, "type": "too_long"})
        if not kinds:
            message = f"{media_type} is not a native format here"
            errors.append({"loc": ["media_type"], "msg": message, "type": "unsupported"})
        if errors:
            raise ValidationFailed("the file cannot be uploaded as a native file", errors)
        return kinds[0]


def _canonical(batch: Sequence[AppCommand]) -> bytes:
    """Return a batch as canonical JSON: sorted keys, no spaces."""
    data = [command.model_dump(mode="json") for command in batch]
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _summary(batch: Sequence[AppCommand]) -> str:
    names = ", ".join(command.command for command in batch[:5])
    more = f" and {len(batch) - 5} more" if len(batch) > 5 else ""
    return f"ran {names}{more}"
