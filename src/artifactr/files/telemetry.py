"""Telemetry: spans and metrics for the app's calls (RFC-0003 "The log, feedback and telemetry").

Each call to the app (apply, inspect, render) is a span on the tracer ``"artifactr.files"``,
which artifactr's span filter accepts, carrying the app, its version and build, the command
count, byte counts and the outcome: digests, never content. Each call's duration goes to a
histogram per operation, and each failure is counted by kind, through OpenTelemetry's API only.
Attribute names for the tenant and workspace are artifactr's.
"""

import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, StatusCode, TracerProvider

from artifactr.files.errors import AppFailure

SCOPE: Final = "artifactr.files"
"""The instrumentation scope of the package's tracer and meter."""

DURATION: Final = "artifactr.files.operation.duration"
"""The histogram of the app's calls, in seconds, by operation and outcome."""

FAILURES: Final = "artifactr.files.operation.failures"
"""The counter of the app's failed calls, by operation and kind."""

TENANT_ID: Final = "artifactr.tenant.id"
"""artifactr's attribute for the tenant."""

WORKSPACE_ID: Final = "artifactr.workspace.id"
"""artifactr's attribute for the workspace."""

ARTIFACT_ID: Final = "artifactr.artifact.id"
"""artifactr's attribute for the artifact."""

Attributes = Mapping[str, str | int | float | bool]
"""Span and metric attributes."""


class Telemetry:
    """The package's tracer and instruments.

    Args:
        tracer_provider: Where spans go; the global provider if omitted.
        meter_provider: Where metrics go; the global provider if omitted.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            DURATION, unit="s", description="How long the app's calls take."
        )
        self._failures = meter.create_counter(
            FAILURES, unit="{failure}", description="The app's failed calls, by kind."
        )

    @contextmanager
    def operation(self, name: str, scoped: Attributes, attributes: Attributes) -> Generator[Span]:
        """Trace and time one call to the app; a failure is recorded with its kind.

        ``scoped`` holds the tenant and workspace, which go on the span and the metrics;
        ``attributes`` go on the span alone.
        """
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            f"artifactr.files.{name}",
            attributes={**scoped, **attributes, "artifactr.files.operation": name},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            measured = {**scoped, "artifactr.files.operation": name}
            try:
                yield span
            except AppFailure as failure:
                span.set_attributes({"artifactr.outcome": "failed", "error.type": failure.kind})
                span.set_status(StatusCode.ERROR, failure.kind)
                self._failures.add(1, {**measured, "error.type": failure.kind})
                self._duration.record(
                    time.perf_counter() - started, {**measured, "artifactr.outcome": "failed"}
                )
                raise
            span.set_attribute("artifactr.outcome", "ok")
            self._duration.record(
                time.perf_counter() - started, {**measured, "artifactr.outcome": "ok"}
            )
