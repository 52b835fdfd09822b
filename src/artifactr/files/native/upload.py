"""Upload: a file's bytes in, screened and inspected, then the artifact made (RFC-0003).

An upload streams a file in, has the package screened and the app inspect it, puts its bytes,
text and review, and only then creates the artifact ("The artifact"), or proposes it where the
type's write policy says so.
"""

import asyncio
from collections.abc import AsyncIterable
from typing import Final

from artifactr.core import (
    Applied,
    Proposed,
    ValidationFailed,
    new_artifact_id,
)
from artifactr.workspace import Workspace
from pydantic import JsonValue

from artifactr.files.core import log
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.manifests import NativeFile, Provenance, clean_text
from artifactr.files.native.base import ServiceBase
from artifactr.files.native.spool import spool

MAX_NAME: Final = 255
"""The most characters a file's name may have."""


class Upload(ServiceBase):
    """The part of the service that makes a native file from an upload."""

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
            ServiceBusy: If too many files are being read at once (ADR-0015).
        """
        await self._require_enabled(ws)
        name = clean_text(name)
        artifact_type = self._type_for(name, media_type)
        media = media_type or next(iter(sorted(artifact_type.formats)))
        self.jobs.admit()  # a full queue refuses before the body is read
        incoming = await spool(data, limit=self._max_size)
        try:
            printed = await asyncio.to_thread(fingerprint, incoming.file, limits=self._limits)
            artifact_id = new_artifact_id()
            async with self.jobs.turn():
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
