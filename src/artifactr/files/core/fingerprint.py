"""Fingerprint: the digest of a package that ignores what every save rewrites (RFC-0003).

It works for any OOXML package: a .docx, an .xlsx or a .pptx.

The fingerprint is the SHA-256 of the package's parts but ``docProps/core.xml``, by name and
content in name order, whatever the zip's order, compression or timestamps. :func:`fingerprint`
digests the parts as the zip screen reads them, within the same :class:`ZipLimits`, and refuses
what it refuses (both are importable from here).
"""

import hashlib
from collections import deque
from collections.abc import Iterator
from typing import IO, Final

from artifactr.files.core.screen import (
    CHUNK_SIZE,
    CONTENT_TYPES,
    DEFAULT_LIMITS,
    MAX_DIRECTORY_SIZE,
    MAX_ENTRIES,
    MAX_PART_SIZE,
    MAX_RATIO,
    MAX_TOTAL_SIZE,
    RATIO_THRESHOLD,
    Part,
    PartCheck,
    ZipLimits,
    part_key,
    screen,
)

__all__ = [
    "CHUNK_SIZE",
    "CONTENT_TYPES",
    "DEFAULT_LIMITS",
    "IGNORED_PARTS",
    "MAX_DIRECTORY_SIZE",
    "MAX_ENTRIES",
    "MAX_PART_SIZE",
    "MAX_RATIO",
    "MAX_TOTAL_SIZE",
    "RATIO_THRESHOLD",
    "ZipLimits",
    "fingerprint",
    "screen",
]

IGNORED_PARTS: Final = frozenset({"docProps/core.xml"})
"""Parts left out of the fingerprint: rewritten on every save. Matched case-insensitively."""

_IGNORED: Final = frozenset(part_key(name) for name in IGNORED_PARTS)


def fingerprint(
    source: bytes | IO[bytes],
    *,
    limits: ZipLimits = DEFAULT_LIMITS,
    check: PartCheck | None = None,
) -> str:
    """Return the fingerprint of an OOXML package (.docx, .xlsx, .pptx), screening it as it is read.

    Args:
        source: The file's bytes, or a seekable binary file read in chunks from its start. The
            file's position is put back afterwards.
        limits: The limits the zip is screened against.
        check: A further check of each part, in the same pass (the worker's screen), if given.

    Returns:
        The SHA-256, in hex, of every part's name and content in name order, except
        :data:`IGNORED_PARTS` and folders.

    Raises:
        UnsafeFile: If the file is not a zip, not a .docx, passes one of ``limits``, or
            ``check`` refuses a part.
    """
    digest = hashlib.sha256()

    def digested(chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            digest.update(chunk)
            yield chunk

    def read(part: Part, chunks: Iterator[bytes]) -> None:
        if not part.name.endswith("/") and part_key(part.name) not in _IGNORED:
            name = part.name.encode()
            digest.update(len(name).to_bytes(8, "big") + name)
            digest.update(part.size.to_bytes(8, "big"))
            chunks = digested(chunks)
        if check is not None:
            check(part, chunks)
        deque(chunks, maxlen=0)

    screen(source, limits=limits, check=read)
    return digest.hexdigest()
