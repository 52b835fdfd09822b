"""The inner model: manifests, revisions, the fingerprint, the ports and in-memory adapters.

It imports only artifactr's public API, the standard library, pydantic and OpenTelemetry's API;
the adapters live outside (``apps/``, ``sql/``).
"""
