"""Telemetry: the app's calls as spans, a duration histogram per operation, failures by kind."""

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from artifactr.files import AppTimeout
from artifactr.files.core.telemetry import DURATION, FAILURES, SCOPE, Telemetry

SCOPED = {"artifactr.tenant.id": "t1", "artifactr.workspace.id": "w1"}


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def telemetry(exporter: InMemorySpanExporter, reader: InMemoryMetricReader) -> Telemetry:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Telemetry(tracer_provider, MeterProvider(metric_readers=[reader]))


def points(reader: InMemoryMetricReader, name: str) -> list[dict[str, object]]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        {**dict(point.attributes or {}), "value": getattr(point, "count", None) or point.value}
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        if scope.scope.name == SCOPE
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


def test_a_call_is_a_span_with_its_attributes_and_a_timed_point(
    telemetry: Telemetry, exporter: InMemorySpanExporter, reader: InMemoryMetricReader
) -> None:
    with telemetry.operation("apply", SCOPED, {"artifactr.files.commands": 2}) as span:
        span.set_attribute("artifactr.files.bytes.out", 10)
    (finished,) = exporter.get_finished_spans()
    assert finished.name == "artifactr.files.apply"
    assert finished.instrumentation_scope is not None
    assert finished.instrumentation_scope.name == SCOPE
    assert dict(finished.attributes or {}) == {
        **SCOPED,
        "artifactr.files.commands": 2,
        "artifactr.files.operation": "apply",
        "artifactr.files.bytes.out": 10,
        "artifactr.outcome": "ok",
    }
    # The workspace stays on the span: a metric point carries only bounded attributes.
    assert points(reader, DURATION) == [
        {"artifactr.files.operation": "apply", "artifactr.outcome": "ok", "value": 1}
    ]


def test_a_failure_is_counted_by_kind_and_marks_the_span(
    telemetry: Telemetry, exporter: InMemorySpanExporter, reader: InMemoryMetricReader
) -> None:
    with pytest.raises(AppTimeout), telemetry.operation("render", SCOPED, {}):
        raise AppTimeout("the deadline passed")
    (finished,) = exporter.get_finished_spans()
    assert finished.status.status_code == StatusCode.ERROR
    assert finished.attributes is not None
    assert finished.attributes["error.type"] == "timeout"
    assert points(reader, FAILURES) == [
        {"artifactr.files.operation": "render", "error.type": "timeout", "value": 1}
    ]
    assert points(reader, DURATION)[0]["artifactr.outcome"] == "failed"
