"""Editor: the same release's browser build, served under the editor's policy (RFC-0003).

The recipe's ``editor`` service runs ``python -m artifactr_files_worker.editor``: it serves the
unpacked ``wordcraft-web-<ver>.zip`` (``EDITOR_BUILD``, ``/srv/editor`` in the image) with
:func:`artifactr.files.fastapi.editor.editor_app`, which adds the hosted editor's headers (its
Content Security Policy, no framing, no cookies either way) and hides the build's ``_headers`` and
dot files. WordCraft's licence files and NOTICE sit beside ``index.html`` and are served with it.
The stack's edge puts it on a host name of its own, where portalr sets no cookies.
"""

import os
from collections.abc import Mapping
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from artifactr.files.fastapi.editor import editor_app

BUILD = "/srv/editor"
"""Where the image unpacks the browser build."""


def app(environ: Mapping[str, str] = os.environ) -> Starlette:
    """Return the editor's app over the build in ``EDITOR_BUILD``."""
    return editor_app(Path(environ.get("EDITOR_BUILD", BUILD)))


def main(environ: Mapping[str, str] = os.environ) -> None:
    """Serve the editor on ``EDITOR_HOST`` and ``EDITOR_PORT`` (127.0.0.1:8080 by default)."""
    uvicorn.run(
        app(environ),
        host=environ.get("EDITOR_HOST", "127.0.0.1"),
        port=int(environ.get("EDITOR_PORT", "8080")),
        server_header=False,
        proxy_headers=False,
    )


if __name__ == "__main__":
    main()
