"""The worker: WordCraft in a sandbox, one job at a time, over HTTP (RFC-0003).

A small service beside the package, built into its own image (``worker/Dockerfile``) and run on
an internal network only the application joins (``worker/compose.yaml``). The application calls
it through :class:`artifactr.files.apps.worker.Worker`.

- :mod:`.service`: the HTTP API, the token, the one-job gate and each job's steps.
- :mod:`.screen`: what a file must pass before the app sees it, beyond the zip screen.
- :mod:`.launcher`: sets a job's resource limits, then becomes the app.
- :mod:`.settings`: the token, the app and every limit, from the environment.
- :mod:`.editor`: serves the same release's browser build under the editor's policy.

Run it with ``python -m artifactr_files_worker`` (in the image) or, from the repository,
``python -m worker.artifactr_files_worker``.
"""

from .screen import DEFAULT_SCREENING, Screening, screen_file
from .service import Gate, Service, create_app, serve
from .settings import Misconfigured, Settings

__all__ = [
    "DEFAULT_SCREENING",
    "Gate",
    "Misconfigured",
    "Screening",
    "Service",
    "Settings",
    "create_app",
    "screen_file",
    "serve",
]
