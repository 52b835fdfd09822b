"""Fuzzing the files router from its own OpenAPI document: no request makes a server error.

schemathesis draws requests for each operation of the committed document (docs/openapi.json),
hypothesis shrinks any failure, and each answer is checked against the document: never a 5xx,
a documented status, content type and body. A third of the time every drawn id is swapped for a
real one (the workspace, a file, alice's check-out of it, version 1, page 1), a third of the time
some are, and half the bodies are real documents, raw or in a form; the caller is a person, an
agent, someone the workspace refuses or nobody. So requests reach past authentication and
lookups into the service.
"""

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from artifactr.files import DOCX
from tests.documents import build_docx
from tests.fastapi.conftest import Api
from tests.fastapi.test_diff import PARAGRAPHS, agent_proposal
from tests.fastapi.test_openapi import DOCUMENT

schemathesis.serializer.alias(DOCX, "application/octet-stream")

SCHEMA = schemathesis.openapi.from_dict(json.loads(DOCUMENT.read_text()))
OPERATIONS = [
    (method.upper(), path)
    for path, item in json.loads(DOCUMENT.read_text())["paths"].items()
    for method in item
]
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
CALLERS: list[dict[str, str]] = [
    {"x-user": "alice"},
    {"x-user": "alice"},
    {"x-user": "bob"},
    {"x-agent": "alice"},
    {"x-user": "mallory"},
    {},
]
BOUNDARY = "fuzzed-form"
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@pytest.fixture
async def seeded(api: Api) -> tuple[Api, dict[str, Any]]:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    proposal_id = await agent_proposal(api, artifact_id)
    checkout = await api.check_out(artifact_id)
    real = {
        "workspace_id": "w1",
        "artifact_id": artifact_id,
        "checkout_id": checkout["id"],
        "version": 1,
        "page": 1,
        "proposal_id": proposal_id,
    }
    return api, real


def multipart(fields: list[tuple[str, tuple[str | None, object]]]) -> bytes:
    """Return the drawn fields as a form, whatever they hold: a name may break its header."""
    parts: list[bytes] = []
    for name, (filename, value) in fields:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        raw = value if isinstance(value, bytes) else str(value).encode()
        parts.append(f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode())
        parts.append(raw + b"\r\n")
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    return build_docx([draw(TEXT) or "x" for _ in range(draw(st.integers(1, 3)))])


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[" ".join(o) for o in OPERATIONS])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_no_request_makes_a_server_error(
    seeded: tuple[Api, dict[str, Any]], method: str, path: str, data: st.DataObject
) -> None:
    api, real = seeded
    case = data.draw(SCHEMA[path][method].as_strategy())
    reality = data.draw(st.sampled_from(["real", "mixed", "drawn"]))
    for name in case.path_parameters or {}:
        if reality == "real" or (reality == "mixed" and data.draw(st.booleans())):
            case.path_parameters[name] = real[name]
    form = case.media_type == "multipart/form-data"
    real = case.body is not None and data.draw(st.booleans())
    if real and not form:
        case.body = data.draw(bodies())
    caller = data.draw(st.sampled_from(CALLERS))
    request = case.as_transport_kwargs(base_url="http://files.test")
    content, headers = request.get("data"), {**request["headers"], **caller}
    if form:
        drawn = [("file", ("contract.docx", data.draw(bodies())))] if real else request["files"]
        content = multipart(drawn)
        headers["content-type"] = f"multipart/form-data; boundary={BOUNDARY}"
    response = await api.client.request(
        request["method"],
        request["url"],
        params=request.get("params"),
        headers=headers,
        content=content,
    )
    event(f"{response.status_code}")
    case.validate_response(response, checks=CHECKS)
