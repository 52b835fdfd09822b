"""Revisions: the JSON Patch an edit or a check-in commits (RFC-0003).

Every revision after the first is a patch that first tests the content digest it was made from,
then replaces each changed value whole, so accepting a stale proposal fails with
``PatchFailed`` instead of replacing what came since.
"""

from typing import Final

from artifactr.core import JsonPatch
from pydantic import JsonValue

from artifactr.files.core.manifests import NativeFile

REPLACED: Final = ("content", "provenance", "fingerprint", "text", "review", "outline", "pages")
"""The fields a revision replaces, in order, after its test."""

ADDED: Final = ("styles",)
"""The fields a revision sets whether its base has them or not (a manifest stored before the
field was), after those it replaces."""


def revision_patch(tested: str, after: NativeFile) -> JsonPatch:
    """Return the patch that turns a manifest whose content is ``tested`` into ``after``."""
    data = after.model_dump(mode="json")
    ops: list[dict[str, JsonValue]] = [
        {"op": "test", "path": "/content/sha256", "value": tested},
        *({"op": "replace", "path": f"/{name}", "value": data[name]} for name in REPLACED),
        *({"op": "add", "path": f"/{name}", "value": data[name]} for name in ADDED),
    ]
    return JsonPatch(ops=tuple(ops))
