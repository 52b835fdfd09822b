"""The inner model: manifests, revisions, the fingerprint, the ports and in-memory adapters.

Everything here imports only artifactr's public API (``artifactr.core``, ``artifactr.workspace``),
the standard library, pydantic and OpenTelemetry's API, and nothing of the layers around it. The
ports are :mod:`~artifactr.files.core.app_port` (App), :mod:`~artifactr.files.core.blobs` (Blobs,
Renders), :mod:`~artifactr.files.core.leases`, :mod:`~artifactr.files.core.checkouts` and
:mod:`~artifactr.files.core.integrations`; the adapters live outside (``apps/``, ``sql/``).
"""
