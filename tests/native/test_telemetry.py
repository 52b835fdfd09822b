"""NativeFiles' telemetry: spans name the file and the app; metrics keep a bounded set.

Each call to the app is a span with the tenant, workspace and artifact, and the app with its
version and build, the render's too. Metric points carry only the app, the operation, the
outcome and a failure's kind (and the tenant where the deployment opts in): never an artifact
or a workspace, so there is no series per file.
"""

from collections.abc import Sequence

import pytest
from artifactr import UserActor, Workspaces
from artifactr.workspace import InMemoryStorage
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from artifactr.files import (
    FakeApp,
    InMemoryBlobs,
    InMemoryCheckouts,
    InMemoryLeases,
    Inspection,
    NativeFiles,
    Telemetry,
    WordDocument,
)
from artifactr.files.core.app_port import EDIT_DEADLINE, Source
from artifactr.files.core.telemetry import DURATION, METRIC_ATTRIBUTES, TENANT_ID
from tests.native.conftest import chunks, sample_docx


class Unversioned(FakeApp):
    """FakeApp that reports no version, as an app may not."""

    async def inspect(self, source: Source, *, deadline: float = EDIT_DEADLINE) -> Inspection:
        found = await super().inspect(source, deadline=deadline)
        return found.model_copy(update={"about": found.about.model_copy(update={"version": None})})


def service(
    app: FakeApp, *, tenant_in_metrics: bool = False
) -> tuple[NativeFiles, InMemorySpanExporter, InMemoryMetricReader]:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(
        tracer_provider,
        MeterProvider(metric_readers=[reader]),
        tenant_in_metrics=tenant_in_metrics,
    )
    files = NativeFiles(
        blobs=InMemoryBlobs(),
        app=app,
        leases=InMemoryLeases(),
        checkouts=InMemoryCheckouts(),
        telemetry=telemetry,
    )
    return files, exporter, reader


def metric_points(reader: InMemoryMetricReader) -> Sequence[dict[str, object]]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        dict(point.attributes or {})
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == DURATION
        for point in metric.data.data_points
    ]


async def upload_and_render(files: NativeFiles) -> str:
    workspaces = Workspaces(InMemoryStorage(), types=[WordDocument])
    ws = await workspaces.open("t1", "w1", actor=UserActor(id="alice"))
    outcome = await files.upload(ws, "contract.docx", chunks(sample_docx()))
    assert outcome.type == "applied"
    await files.render(ws, outcome.artifact_id, 1, 1)
    return outcome.artifact_id


async def test_every_span_names_the_file_and_the_app_the_render_s_version_and_build_too() -> None:
    files, exporter, reader = service(FakeApp())
    artifact_id = await upload_and_render(files)
    spans = {span.name: dict(span.attributes or {}) for span in exporter.get_finished_spans()}
    assert set(spans) == {"artifactr.files.inspect", "artifactr.files.render"}
    for attributes in spans.values():
        assert attributes["artifactr.artifact.id"] == artifact_id
        assert attributes["artifactr.workspace.id"] == "w1"
        assert attributes["artifactr.files.app"] == "fake"
        assert attributes["artifactr.files.app.version"]
        assert attributes["artifactr.files.app.build"]
    points = metric_points(reader)
    assert {point["artifactr.files.operation"] for point in points} == {"inspect", "render"}
    for point in points:
        assert set(point) <= METRIC_ATTRIBUTES - {TENANT_ID}
        assert point["artifactr.files.app"] == "fake"


@pytest.mark.parametrize("opted_in", [True, False])
async def test_the_tenant_is_on_metric_points_only_where_the_deployment_opts_in(
    opted_in: bool,
) -> None:
    files, _, reader = service(FakeApp(), tenant_in_metrics=opted_in)
    await upload_and_render(files)
    assert all((TENANT_ID in point) == opted_in for point in metric_points(reader))


async def test_a_render_span_has_no_version_until_the_app_reports_one() -> None:
    files, exporter, _ = service(Unversioned())
    await upload_and_render(files)
    render = next(s for s in exporter.get_finished_spans() if s.name == "artifactr.files.render")
    assert "artifactr.files.app.version" not in dict(render.attributes or {})
    assert dict(render.attributes or {})["artifactr.files.app.build"] == "fake"
