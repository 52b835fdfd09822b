"""The worker's entry point: ``python -m artifactr_files_worker`` (RFC-0003).

It reads :class:`~.settings.Settings` from the environment, refuses to start without a token,
and serves the app with uvicorn on ``WORKER_HOST`` and ``WORKER_PORT``
(:func:`~.service.serve`). Each job logs one line; file contents are never logged.
"""

from .service import serve

serve()
