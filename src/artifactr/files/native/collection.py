"""Collection: the blobs nothing names any more are removed (RFC-0003 "Blob storage").

A write puts bytes first and commits after, so a failure between the two leaves blobs that no
revision names. Collection removes them: every blob that no revision, pending proposal or open
check-out names, and that was put more than a grace period ago, so a put racing its commit is
kept.
"""

from collections.abc import Iterable
from datetime import timedelta

from artifactr.core import Forbidden
from artifactr.workspace import Workspace
from pydantic import JsonValue

from artifactr.files.core import log
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import NativeFile
from artifactr.files.native.base import ServiceBase


class Collection(ServiceBase):
    """The part of the service that removes what no revision, proposal or check-out names."""

    @log.logged("collected")
    async def collect(self, ws: Workspace, *, grace: timedelta = timedelta(hours=1)) -> int:
        """Remove blobs that no revision, pending proposal or open check-out names.

        Only blobs put more than ``grace`` ago go, so a put racing its commit is kept. Run it
        as an actor that sees every artifact (a system actor).

        Raises:
            Forbidden: If some artifact is hidden from the handle's actor, whose blobs would
                look unreferenced.
        """
        if (await ws.hidden()).artifacts:
            raise Forbidden("collect must run as an actor that sees every artifact")
        referenced: set[tuple[str, str]] = set()
        listed = [a.id for a in await ws.artifacts(NativeFile, include_archived=True)]
        # The files' revisions a batch of files a statement (issue 41), not a read per file.
        for artifact_id, revisions in (await self.history.revisions(ws, listed)).items():
            for revision in revisions:
                referenced |= {(artifact_id, sha) for sha in _digests(revision.data)}
        for proposal in await ws.proposals():
            change = proposal.change.model_dump(mode="json")
            referenced |= {(proposal.artifact_id, sha) for sha in _digests(change)}
        scope = scope_of(ws)
        now = self._clock()
        for record in await self.checkouts.active(scope, now=now):
            referenced.add((record.artifact_id, record.base_sha256))
        return await self.blobs.collect(scope, referenced, before=now - grace)


def _digests(data: JsonValue) -> Iterable[str]:
    """Yield every blob digest in a manifest's or patch's JSON."""
    if isinstance(data, dict):
        sha = data.get("sha256")
        if isinstance(sha, str) and "size" in data:
            yield sha
        for value in data.values():
            yield from _digests(value)
    elif isinstance(data, list):
        for value in data:
            yield from _digests(value)
