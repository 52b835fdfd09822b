"""Upload: a file's bytes in, screened and inspected, then the artifact made (RFC-0003).

An upload streams a file in, has the package screened, its kind read from its content (its main
part, never its name: a workbook is a :class:`~artifactr.files.core.manifests.Spreadsheet`
whatever it is called) and the app inspect it, puts its bytes, text and review, and only then
creates the artifact ("The artifact"), or proposes it where the type's write policy says so.
"""

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
from artifactr.files.core.formats import kind_name
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
        self._check_upload(name, media_type)
        self.jobs.admit()  # a full queue refuses before the body is read
        incoming = await spool(data, limit=self._max_size)
        try:
            printed, media = await self._screened(incoming)
            artifact_type = self._type_for(media, media_type)
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

    def _check_upload(self, name: str, media_type: str | None) -> None:
        """Refuse a blank or long name, or a declared type no kind here holds, before a read."""
        errors: list[JsonValue] = []
        if not name.strip():
            errors.append({"loc": ["name"], "msg": "a file needs a name", "type": "missing"})
        elif len(name) > MAX_NAME:
            message = f"a file's name has at most {MAX_NAME} characters"
            errors.append({"loc": ["name"], "msg": message, "type": "too_long"})
        if media_type is not None and not any(
            media_type in kind.formats for kind in self._types.values()
        ):
            message = f"{media_type} is not a native format here"
            errors.append({"loc": ["media_type"], "msg": message, "type": "unsupported"})
        if errors:
            raise ValidationFailed("the file cannot be uploaded as a native file", errors)

    def _type_for(self, media: str, declared: str | None) -> type[NativeFile]:
        """Return the kind the content makes the file: the content decides, never the name.

        Raises:
            ValidationFailed: If no kind here holds the content's format, or the declared media
                type is another native format than the content's.
        """
        if declared is not None and declared != media:
            message = f"the file is {kind_name(media)}, not {kind_name(declared)} as declared"
            error: JsonValue = {"loc": ["media_type"], "msg": message, "type": "wrong_kind"}
            raise ValidationFailed(message, [error])
        return self._kind_of(media)
