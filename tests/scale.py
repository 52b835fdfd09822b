"""Workspaces grown large fast: many files, a long history, many proposals (issue 41).

The scale tests count a request's statements at two sizes. Growing a workspace through the app
would take minutes, so these commit straight through artifactr: more files are copies of one
uploaded file's manifest (their bytes are the first file's, read only where a test reads them),
revisions change the outline, and proposals propose such a change.
"""

from artifactr.core import EditArtifact, JsonPatch, ProposeChange, Proposed
from artifactr.workspace import Scope, Workspace

from artifactr.files.core.blobs import Blobs
from artifactr.files.core.manifests import NativeFile

SMALL = 10
"""The size a count is first taken at."""

LARGE = 300
"""The size it is taken at again, and must not have grown at."""


async def more_files(
    ws: Workspace, like: str, count: int, *, prefix: str = "copy", blobs: Blobs | None = None
) -> list[str]:
    """Create ``count`` files whose manifests are ``like``'s but for their names; return ids.

    With ``blobs``, each copy gets its own copy of ``like``'s bytes, as an upload leaves them.
    """
    model = (await ws.get(NativeFile, like)).data
    scope = Scope(ws.tenant_id, ws.workspace_id)
    stored = [
        (await blobs.get(scope, like, blob.sha256) or b"", blob.media_type)
        for blob in (model.content, model.text, model.review)
        if blobs is not None and blob is not None
    ]
    ids: list[str] = []
    for n in range(count):
        if blobs is not None:
            await blobs.put_many(scope, f"{prefix}-{n:05}", stored)
        copy = model.model_copy(update={"name": f"{prefix}-{n:05}.docx"})
        await ws.create(copy, artifact_id=f"{prefix}-{n:05}")
        ids.append(f"{prefix}-{n:05}")
    return ids


async def longer_history(ws: Workspace, artifact_id: str, versions: int) -> int:
    """Commit outline changes until the file has ``versions`` revisions; return the head."""
    head = (await ws.get(NativeFile, artifact_id)).version
    while head < versions:
        patch = JsonPatch(ops=({"op": "replace", "path": "/outline", "value": f"v{head + 1}"},))
        await ws.commit(EditArtifact(artifact_id=artifact_id, base_version=head, patch=patch))
        head += 1
    return head


async def proposals(ws: Workspace, artifact_id: str, count: int) -> list[str]:
    """Propose ``count`` outline changes to the file; return the proposals' ids."""
    head = (await ws.get(NativeFile, artifact_id)).version
    ids: list[str] = []
    for n in range(count):
        patch = JsonPatch(ops=({"op": "replace", "path": "/outline", "value": f"p{n}"},))
        change = EditArtifact(artifact_id=artifact_id, base_version=head, patch=patch)
        outcome = await ws.commit(ProposeChange(change=change))
        assert isinstance(outcome, Proposed)
        ids.append(outcome.proposal_id)
    return ids
