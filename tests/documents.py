"""Documents for tests: the package's own builder of small real .docx files."""

from artifactr.files.core.documents import (
    AUTHOR,
    DATE,
    DEFAULT_PARAGRAPHS,
    R,
    W,
    build_docx,
    package,
    paragraph,
    run,
)

__all__ = [
    "AUTHOR",
    "DATE",
    "DEFAULT_PARAGRAPHS",
    "R",
    "W",
    "build_docx",
    "package",
    "paragraph",
    "run",
]
