"""Visibility: a hidden artifact answered as a missing one, in its time too (RFC-0003).

:func:`visible` reads an artifact as every read of this package does: for a hidden id it asks
``authorize`` and storage about a decoy id, the work a missing id costs, then raises the same
:class:`~artifactr.core.NotFound`, so neither the answer nor its time tells hidden from missing.
"""

import contextlib

from artifactr.core import Artifact, NotFound, Versioned, new_artifact_id
from artifactr.workspace import Workspace


async def visible[A: Artifact](
    ws: Workspace, artifact_type: type[A], artifact_id: str
) -> Versioned[A]:
    """Return an artifact's head, as :meth:`Workspace.get` does, hidden as missing in time too.

    Raises:
        NotFound: If there is no such artifact of that type, or it is hidden.
    """
    try:
        return await ws.get(artifact_type, artifact_id)
    except NotFound:
        if artifact_id in (await ws.hidden()).artifacts:
            # The hidden id was refused before authorize and storage were asked: ask them of an
            # id that names nothing, as a missing id would have, then answer as missing.
            with contextlib.suppress(NotFound):
                await ws.get(artifact_type, new_artifact_id())
        raise
