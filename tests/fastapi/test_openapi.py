"""The files router's OpenAPI document: committed in docs/openapi.json, and held to the router.

Regenerate the committed document after changing a route::

    .venv/bin/python -m tests.fastapi.test_openapi
"""

import json
from pathlib import Path
from typing import Any

from artifactr.files import DOCX, PPTX, XLSX
from tests.fastapi.conftest import build_app
from tests.world import world_in_memory

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
"""The committed document."""

REGENERATE = ".venv/bin/python -m tests.fastapi.test_openapi"


def openapi_document() -> dict[str, Any]:
    """Return the document an app serves that mounts the files router alone, at the root."""
    world = world_in_memory()
    return build_app(world.files, world.workspaces).openapi()


def write_document() -> None:
    """Write the router's document to docs/openapi.json, sorted and indented."""
    DOCUMENT.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in openapi_document()["paths"].items()
        for method, operation in item.items()
    ]


def test_the_committed_document_is_the_one_the_router_serves() -> None:
    committed = json.loads(DOCUMENT.read_text())
    assert committed == openapi_document(), (
        f"{DOCUMENT.name} has drifted from the router: regenerate it with `{REGENERATE}`"
    )


def test_the_committed_document_is_written_as_the_regeneration_writes_it() -> None:
    expected = json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n"
    assert DOCUMENT.read_text() == expected, f"regenerate it with `{REGENERATE}`"


def test_every_route_names_a_workspace_and_sits_under_its_files() -> None:
    assert all(path.startswith("/workspaces/{workspace_id}/files") for _, path, _ in operations())


def test_every_route_that_serves_bytes_names_an_artifact_and_a_revision_or_proposal() -> None:
    for method, path, operation in operations():
        contents = {
            media
            for response in operation["responses"].values()
            for media in response.get("content", {})
        }
        if contents - {"application/json"}:
            named = (
                "/{artifact_id}/versions/{version}/",
                "/{artifact_id}/proposals/{proposal_id}/",
            )
            assert any(part in path for part in named), (method, path)


def test_every_route_documents_refusals_for_identity_and_access() -> None:
    for method, path, operation in operations():
        assert {"401", "403"} <= set(operation["responses"]), (method, path)
        assert operation["description"], (method, path)


def test_uploads_and_check_ins_take_the_files_bytes_as_their_body() -> None:
    bodies = {
        path: operation["requestBody"]
        for method, path, operation in operations()
        if "requestBody" in operation
    }
    assert sorted(bodies) == [
        "/workspaces/{workspace_id}/files",
        "/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/check-in",
    ]
    binary = {"schema": {"format": "binary", "type": "string"}}
    for body in bodies.values():
        content = body["content"]
        assert set(content) == {DOCX, XLSX, PPTX, "application/octet-stream", "multipart/form-data"}
        assert content[DOCX] == content[XLSX] == content[PPTX] == binary
        assert content["application/octet-stream"] == binary
        form = content["multipart/form-data"]["schema"]
        assert form["required"] == ["file"]
        assert {"format": "binary", "type": "string"}.items() <= form["properties"]["file"].items()
        assert body["required"] is True
    check_in = "/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/check-in"
    form = bodies[check_in]["content"]["multipart/form-data"]["schema"]
    assert form["properties"]["summary"] == {"maxLength": 1000, "type": "string"}


def test_uploads_and_check_ins_document_a_malformed_form_and_a_file_too_large() -> None:
    for _, path, operation in operations():
        if "requestBody" in operation:
            assert {"400", "413", "422"} <= set(operation["responses"]), path


def test_an_upload_is_named_by_the_query_or_by_the_forms_filename() -> None:
    [upload] = [op for method, path, op in operations() if path.endswith("/files")]
    [name] = [param for param in upload["parameters"] if param["name"] == "name"]
    assert name["required"] is False


if __name__ == "__main__":
    write_document()
