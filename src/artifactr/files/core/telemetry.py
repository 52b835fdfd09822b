"""Telemetry: spans and metrics for the app's calls, through OpenTelemetry's API (RFC-0003).

Each app call (apply, inspect, render) is a span on the tracer ``"artifactr.files"`` with the
tenant, workspace, artifact, app, build, counts and outcome: digests, never content. Durations go
to a histogram and failures are counted by kind, with a bounded set of attributes
(:data:`METRIC_ATTRIBUTES`); the tenant joins them only with ``tenant_in_metrics=True``.
"""

import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, StatusCode, TracerProvider

from artifactr.files.core.errors import AppFailure

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

APP: Final = "artifactr.files.app"
"""The app's name (``wordcraft``), on spans and metrics."""

OPERATION: Final = "artifactr.files.operation"
"""The call: ``apply``, ``inspect`` or ``render``."""

OUTCOME: Final = "artifactr.outcome"
"""``ok`` or ``failed``."""

ERROR_TYPE: Final = "error.type"
"""A failure's kind: ``timeout``, ``crashed``, ``too_large`` or ``refused``."""

METRIC_ATTRIBUTES: Final = frozenset({APP, OPERATION, OUTCOME, ERROR_TYPE, TENANT_ID})
"""Every attribute a metric point may carry; the tenant only where the deployment opts in."""

Attributes = Mapping[str, str | int | float | bool]
"""Span and metric attributes."""


class Telemetry:
    """The package's tracer and instruments.

    Args:
        tracer_provider: Where spans go; the global provider if omitted.
        meter_provider: Where metrics go; the global provider if omitted.
        tenant_in_metrics: Whether metric points carry the tenant, for a deployment that has
            few enough tenants to keep a series for each.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        *,
        tenant_in_metrics: bool = False,
    ) -> None:
        self._kept = METRIC_ATTRIBUTES if tenant_in_metrics else METRIC_ATTRIBUTES - {TENANT_ID}
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

        ``scoped`` and ``attributes`` all go on the span; the metrics take from them only
        :data:`METRIC_ATTRIBUTES` (the app, and the tenant if opted in).
        """
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            f"artifactr.files.{name}",
            attributes={**scoped, **attributes, OPERATION: name},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            given = {**scoped, **attributes}
            measured = {key: value for key, value in given.items() if key in self._kept}
            measured[OPERATION] = name
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
