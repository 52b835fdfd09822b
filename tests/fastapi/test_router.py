"""The files router: every route's answer and refusal, through the app, on every database.

Uploads, downloads (ETag, 304, HEAD), pages, the lease, and check-out to check-in: a race for a
check-out, a stale check-in kept as a proposal, a retried one that changes nothing; a hidden file
answered byte for byte as a missing one; errors mapped to statuses as artifactr's router maps
them, and never a 500 for bad input. A 1 GiB check-in streams through in flat memory. The
served job is ``test_serve.py``'s.
"""

import asyncio
import hashlib
import io
import random
import tracemalloc
import urllib.parse
import zipfile
from collections.abc import AsyncIterator, Buffer, Sequence
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from artifactr.core import EditArtifact, JsonPatch, UserActor
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import DOCX, WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import About, AppCommand, CommandSpec, Edited, Inspection, Source
from artifactr.files.core.errors import AppRefused, FailureKind
from artifactr.files.core.fingerprint import ZipLimits, fingerprint
from artifactr.files.core.leases import scope_of
from artifactr.files.fastapi.router import content_disposition
from artifactr.files.native import MAX_SIZE
from tests import hostile
from tests.documents import build_docx, package
from tests.fastapi.conftest import (
    AGENT,
    ALICE,
    BOB,
    DOCX_BODY,
    MALLORY,
    WORKSPACE,
    Api,
    MakeApi,
)
from tests.native.test_jobs import until_full

EDITED = build_docx(["An edited document."])
PNG = b"\x89PNG\r\n\x1a\n"
NOISE = random.Random(0).randbytes(3 << 20)
"""Bytes that don't compress: a part of them makes a file of several MiB."""


async def revisions(api: Api, artifact_id: str) -> int:
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return len(await ws.revisions(artifact_id))


# ─── upload ───────────────────────────────────────────────────────────────────


async def test_a_person_uploads_a_file_and_gets_its_artifact_and_version(api: Api) -> None:
    data = build_docx()
    response = await api.client.post(
        api.url(), params={"name": "contract.docx"}, content=data, headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "applied"
    assert body["version"] == 1
    assert body["proposal_id"] is None
    url = f"http://files.test/workspaces/w1/files/{body['artifact_id']}/versions/1/content"
    assert body["download_url"] == response.headers["location"] == url
    download = await api.client.get(url, headers=ALICE)
    assert download.content == data


async def test_a_download_url_quotes_the_workspace_it_names(api: Api) -> None:
    response = await api.client.post(
        api.url(workspace="our team"),
        params={"name": "a.docx"},
        content=build_docx(),
        headers={**ALICE, **DOCX_BODY},
    )
    url = response.json()["download_url"]
    assert "/workspaces/our%20team/files/" in url
    assert (await api.client.get(url, headers=ALICE)).content == build_docx()


async def test_an_upload_streams_a_body_sent_in_chunks(api: Api) -> None:
    data = build_docx()

    async def chunks():
        for start in range(0, len(data), 100):
            yield data[start : start + 100]

    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=chunks(), headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == 201
    download = await api.client.get(response.json()["download_url"], headers=ALICE)
    assert download.content == data


async def test_an_agents_upload_is_a_proposal(api: Api) -> None:
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers={**AGENT, **DOCX_BODY}
    )
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "proposed"
    assert body["proposal_id"]
    assert body["artifact_id"] is None
    assert "location" not in response.headers


async def test_an_upload_without_a_content_type_is_taken_as_the_default_format(api: Api) -> None:
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers=ALICE
    )
    assert response.status_code == 201


async def test_an_unknown_caller_is_refused_with_401(api: Api) -> None:
    response = await api.client.post(api.url(), params={"name": "a.docx"}, content=build_docx())
    assert response.status_code == 401
    assert response.json() == {"detail": "who?"}


async def test_a_caller_the_workspace_refuses_is_answered_403(api: Api) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=MALLORY)
    assert response.status_code == 403
    assert response.json()["detail"]["type"] == "forbidden"


async def test_an_upload_while_the_app_is_off_is_refused_403_with_its_key(api: Api) -> None:
    api.switch.set("t1", WORKSPACE, api.files.key, enabled=False)
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert detail == {
        "type": "forbidden",
        "message": "files:fake is not enabled in this workspace",
        "integration": "files:fake",
    }


@pytest.mark.parametrize(
    ("params", "headers"),
    [
        ({"name": "   "}, DOCX_BODY),
        ({}, DOCX_BODY),
        ({"name": "x" * 256}, DOCX_BODY),
        # A NUL is removed, as every control character is, and the name kept: see the test
        # of control and direction characters below.
        ({"name": "\x00\u202e"}, DOCX_BODY),
    ],
    ids=["blank name", "no name", "long name", "only a NUL and an override"],
)
async def test_an_upload_with_a_bad_name_or_type_is_refused_422(
    api: Api, params: dict[str, str], headers: dict[str, str]
) -> None:
    response = await api.client.post(
        api.url(), params=params, content=build_docx(), headers={**ALICE, **headers}
    )
    assert response.status_code == 422


@pytest.mark.parametrize("sent", ["text/plain", "application/pdf; charset=binary", "image/png"])
async def test_an_upload_or_a_check_in_typed_as_no_native_format_is_refused_415(
    api: Api, sent: str
) -> None:
    wrong = {**ALICE, "content-type": sent}
    refused = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers=wrong
    )
    assert refused.status_code == 415
    media = sent.split(";")[0]
    assert refused.json()["detail"] == {
        "type": "unsupported_media_type",
        "message": f"{media} is not a format taken here: send {DOCX}, "
        "application/octet-stream, or a multipart/form-data form",
        "media_type": media,
        "accepted": [DOCX],
    }
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await ws.artifacts(WordDocument) == []
    # A check-in typed wrong is refused alike, and its check-out stays open.
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    path = api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in")
    refused = await api.client.post(path, content=EDITED, headers=wrong)
    assert refused.status_code == 415
    assert refused.json()["detail"]["type"] == "unsupported_media_type"
    assert (await ws.get(WordDocument, artifact_id)).version == 1
    applied = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert (applied.status_code, applied.json()["version"]) == (200, 2)


async def test_an_upload_that_is_not_a_zip_is_refused_422_with_its_reason(api: Api) -> None:
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=b"hello", headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == 422
    assert response.json()["detail"]["type"] == "unsafe_file"
    assert response.json()["detail"]["reason"] == "not_a_zip"


async def test_a_password_protected_upload_is_refused_telling_the_person_to_remove_it(
    api: Api,
) -> None:
    response = await api.client.post(
        api.url(),
        params={"name": "secret.docx"},
        content=hostile.password_protected(),
        headers={**ALICE, **DOCX_BODY},
    )
    assert response.status_code == 422
    assert response.json()["detail"]["reason"] == "encrypted"
    assert "remove the password" in response.json()["detail"]["message"]


async def test_an_upload_over_the_size_limit_is_refused_413(make_api: MakeApi) -> None:
    api = await make_api(max_size=1_000)
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == 413
    assert response.json()["detail"] == {
        "type": "unsafe_file",
        "message": "the file is larger than 1000 bytes",
        "reason": "too_large",
        "limit": 1_000,
    }


APP_FAILURES: list[tuple[FailureKind, int]] = [
    ("timeout", 504),
    ("crashed", 502),
    ("too_large", 413),
    ("refused", 422),
]


@pytest.mark.parametrize(("kind", "status"), APP_FAILURES)
async def test_an_upload_the_app_fails_on_is_answered_by_how_it_failed(
    make_api: MakeApi, kind: FailureKind, status: int
) -> None:
    api = await make_api(deadline=0.01)
    api.app.fail_next(kind, "inspect")
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, content=build_docx(), headers={**ALICE, **DOCX_BODY}
    )
    assert response.status_code == status
    assert response.json()["detail"]["type"] == f"app_{kind}"


class HeldApp(FakeApp):
    """FakeApp whose reading of a file waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = asyncio.Event()
        self.go = asyncio.Event()

    async def inspect(self, source: Source, *, deadline: float = 30.0) -> Inspection:
        self.reading.set()
        await self.go.wait()
        return await super().inspect(source, deadline=deadline)


async def test_past_the_files_being_read_and_those_waiting_an_upload_is_503_unstored(
    make_api: MakeApi,
) -> None:
    held = HeldApp()
    api = await make_api(app=held, jobs=1, queue=1)
    held.go.set()
    artifact_id = await api.upload()  # before the app is held
    checkout = await api.check_out(artifact_id)
    held.go.clear()
    held.reading.clear()

    async def upload(name: str) -> httpx2.Response:
        return await api.client.post(
            api.url(), params={"name": name}, content=EDITED, headers={**ALICE, **DOCX_BODY}
        )

    first = asyncio.ensure_future(upload("first.docx"))
    await held.reading.wait()  # the one job runs
    second = asyncio.ensure_future(upload("second.docx"))
    await until_full(api.files.jobs)  # the second waits its turn: the queue is full
    refused = await upload("third.docx")
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "2"
    assert refused.json()["detail"] == {
        "type": "service_busy",
        "message": "the service is busy: 1 files are being read and 1 wait; try again in 2 s",
        "reason": "1 files are being read and 1 wait",
        "retry_after": 2,
    }
    checked_in = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert (checked_in.status_code, checked_in.headers["retry-after"]) == (503, "2")
    held.go.set()
    assert [(await first).status_code, (await second).status_code] == [201, 201]
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    names = sorted(doc.data.name for doc in await ws.artifacts(WordDocument))
    assert names == ["contract.docx", "first.docx", "second.docx"]  # nothing of the third
    assert await revisions(api, artifact_id) == 1
    retried = await api.check_in(artifact_id, checkout["id"], EDITED)  # its check-out stays
    assert retried.status_code == 200, retried.text


# ─── downloads ────────────────────────────────────────────────────────────────


async def test_a_download_streams_the_revision_with_its_digest_name_and_size(api: Api) -> None:
    data = build_docx()
    artifact_id = await api.upload(data, name="Contract \u2013 final.docx")
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert response.status_code == 200
    assert response.content == data
    assert response.headers["etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert response.headers["content-type"] == DOCX
    assert response.headers["content-length"] == str(len(data))
    assert response.headers["cache-control"] == "private, no-cache"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["accept-ranges"] == "none"
    assert response.headers["content-disposition"] == (
        'attachment; filename="Contract _ final.docx"; '
        "filename*=UTF-8''Contract%20%E2%80%93%20final.docx"
    )


async def test_a_large_download_arrives_whole_in_several_chunks(api: Api) -> None:
    data = package("", extra={"word/media/noise.bin": NOISE})
    artifact_id = await api.upload(data)
    assert len(data) > 1 << 20
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert response.content == data


async def test_every_version_stays_downloadable_after_a_check_in(api: Api) -> None:
    first = build_docx()
    artifact_id = await api.upload(first)
    checkout = await api.check_out(artifact_id)
    assert (await api.check_in(artifact_id, checkout["id"], EDITED)).status_code == 200
    one = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    two = await api.client.get(api.url(f"/{artifact_id}/versions/2/content"), headers=ALICE)
    assert (one.content, two.content) == (first, EDITED)


@pytest.mark.parametrize(
    "condition",
    ["{etag}", "W/{etag}", '"other", {etag}', "*"],
    ids=["strong", "weak", "list", "any"],
)
async def test_a_download_the_client_has_is_answered_304(api: Api, condition: str) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/versions/1/content")
    etag = (await api.client.get(url, headers=ALICE)).headers["etag"]
    response = await api.client.get(
        url, headers={**ALICE, "if-none-match": condition.format(etag=etag)}
    )
    assert response.status_code == 304
    assert response.content == b""
    assert response.headers["etag"] == etag


async def test_a_download_with_another_etag_is_sent_whole(api: Api) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(
        api.url(f"/{artifact_id}/versions/1/content"), headers={**ALICE, "if-none-match": '"x"'}
    )
    assert response.status_code == 200
    assert response.content == build_docx()


async def test_head_answers_a_downloads_headers_without_its_bytes(api: Api) -> None:
    data = build_docx()
    artifact_id = await api.upload(data)
    url = api.url(f"/{artifact_id}/versions/1/content")
    response = await api.client.head(url, headers=ALICE)
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-length"] == str(len(data))
    assert response.headers["etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert response.headers["content-type"] == DOCX
    cached = await api.client.head(
        url, headers={**ALICE, "if-none-match": response.headers["etag"]}
    )
    assert cached.status_code == 304


# ─── bytes come from the store, never from a manifest alone ───────────────────


async def generic_patch(api: Api, artifact_id: str, *ops: dict[str, Any]) -> None:
    """Patch a manifest as artifactr's REST or MCP surface would: any JSON, no test op."""
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    head = await ws.get(WordDocument, artifact_id)
    await ws.commit(
        EditArtifact(artifact_id=artifact_id, base_version=head.version, patch=JsonPatch(ops=ops))
    )


async def test_a_manifest_patched_to_another_size_is_answered_as_damaged_not_cut_short(
    api: Api,
) -> None:
    artifact_id = await api.upload(package("", extra={"word/media/noise.bin": NOISE[:13_000]}))
    await generic_patch(api, artifact_id, {"op": "replace", "path": "/content/size", "value": 1})
    for method in ("GET", "HEAD"):
        response = await api.client.request(
            method, api.url(f"/{artifact_id}/versions/2/content"), headers=ALICE
        )
        assert response.status_code == 409, method
        assert "content-length: 1" not in str(response.headers).lower()
    damaged = await api.client.get(api.url(f"/{artifact_id}/versions/2/content"), headers=ALICE)
    detail = damaged.json()["detail"]
    assert detail["type"] == "content_damaged"
    assert detail["artifact_id"] == artifact_id
    assert detail["version"] == 2
    assert detail["problem"] == "size"
    assert "damaged" in detail["message"]
    # The version the bytes were put for still downloads whole.
    one = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert one.status_code == 200


async def test_a_generic_copy_of_a_manifest_names_bytes_its_artifact_does_not_hold(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    original = await ws.get(WordDocument, artifact_id)
    await ws.create(original.data, artifact_id="art_copy")
    response = await api.client.get(api.url("/art_copy/versions/1/content"), headers=ALICE)
    assert response.status_code == 409
    assert response.json()["detail"]["type"] == "content_damaged"
    assert response.json()["detail"]["problem"] == "missing"
    page = await api.client.get(api.url("/art_copy/versions/1/pages/1"), headers=ALICE)
    assert page.json()["detail"]["type"] == "content_damaged"


async def test_a_download_takes_its_type_from_the_store_not_the_manifests_claim(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    await generic_patch(
        api,
        artifact_id,
        {"op": "replace", "path": "/content/media_type", "value": "text/html"},
    )
    response = await api.client.get(api.url(f"/{artifact_id}/versions/2/content"), headers=ALICE)
    assert response.status_code == 200
    assert response.headers["content-type"] == DOCX


@pytest.mark.parametrize(
    ("path", "status"),
    [("/versions/2/content", 404), ("/versions/0/content", 422), ("/versions/x/content", 422)],
)
async def test_a_download_of_no_such_version_is_refused(api: Api, path: str, status: int) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(api.url(f"/{artifact_id}{path}"), headers=ALICE)
    assert response.status_code == status


async def test_a_download_whose_bytes_were_collected_is_answered_as_damaged_content(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    api.clock.advance(timedelta(days=1))
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    # Collected as if no revision named them: the manifest stays, its bytes are gone.
    await api.files.blobs.collect(scope_of(ws), set(), before=api.clock.now)
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert response.status_code == 409
    assert response.json()["detail"]["problem"] == "missing"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain.docx", "attachment; filename=\"plain.docx\"; filename*=UTF-8''plain.docx"),
        (
            'a "quoted" \\ 100%.docx',
            'attachment; filename="a _quoted_ _ 100_.docx"; '
            "filename*=UTF-8''a%20%22quoted%22%20%5C%20100%25.docx",
        ),
        (
            "two\r\nlines.docx",
            "attachment; filename=\"two lines.docx\"; filename*=UTF-8''two%20lines.docx",
        ),
        (
            "Ünïcødé.docx",
            'attachment; filename="_n_c_d_.docx"; '
            "filename*=UTF-8''%C3%9Cn%C3%AFc%C3%B8d%C3%A9.docx",
        ),
        ("lone\ud800.docx", "attachment; filename=\"lone.docx\"; filename*=UTF-8''lone.docx"),
        (
            "report\u202excod.docx",
            "attachment; filename=\"reportxcod.docx\"; filename*=UTF-8''reportxcod.docx",
        ),
        (
            "\u2067\u200eright\u061c\u2069.docx",
            "attachment; filename=\"right.docx\"; filename*=UTF-8''right.docx",
        ),
        ("\u202e", "attachment; filename=\"file\"; filename*=UTF-8''file"),
    ],
    ids=["plain", "quotes", "newline", "unicode", "surrogate", "override", "isolates", "empty"],
)
def test_a_files_name_is_given_as_an_ascii_fallback_and_in_utf_8(name: str, expected: str) -> None:
    assert content_disposition(name) == expected


def test_a_long_name_is_saved_within_255_bytes_with_its_extension() -> None:
    header = content_disposition("\u6587" * 255 + ".docx")
    encoded = header.split("filename*=UTF-8''")[1]
    saved = urllib.parse.unquote(encoded)
    assert saved.endswith(".docx")
    assert len(saved.encode()) <= 255
    assert saved.startswith("\u6587" * 80)


# ─── pages ────────────────────────────────────────────────────────────────────


async def test_a_page_is_rendered_as_a_png_at_a_scale(api: Api) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/versions/1/pages/1")
    whole = await api.client.get(url, headers=ALICE)
    half = await api.client.get(url, params={"scale": 0.5}, headers=ALICE)
    assert whole.status_code == half.status_code == 200
    assert whole.headers["content-type"] == "image/png"
    assert whole.content.startswith(PNG)
    assert whole.headers["etag"] == f'"{hashlib.sha256(whole.content).hexdigest()}"'
    assert len(half.content) < len(whole.content)


async def test_a_page_once_rendered_comes_from_the_cache(api: Api) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/versions/1/pages/1")
    first = await api.client.get(url, headers=ALICE)
    api.app.fail_next("crashed", "render")
    again = await api.client.get(url, headers=ALICE)
    assert again.status_code == 200
    assert again.content == first.content


async def test_a_page_the_client_has_is_answered_304(api: Api) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/versions/1/pages/1")
    etag = (await api.client.get(url, headers=ALICE)).headers["etag"]
    response = await api.client.get(url, headers={**ALICE, "if-none-match": etag})
    assert response.status_code == 304
    assert response.content == b""


async def test_a_page_past_the_last_is_refused_422_with_the_apps_reason(api: Api) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/pages/9"), headers=ALICE)
    assert response.status_code == 422
    assert response.json()["detail"] == {
        "type": "app_refused",
        "message": "no page 9",
        "reason": "no page 9",
    }


@pytest.mark.parametrize("scale", ["0", "0.09", "4.1", "nan", "inf", "-1", "x"])
async def test_a_page_at_a_scale_out_of_range_is_refused_422(api: Api, scale: str) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(
        api.url(f"/{artifact_id}/versions/1/pages/1"), params={"scale": scale}, headers=ALICE
    )
    assert response.status_code == 422


@pytest.mark.parametrize(("kind", "status"), [("timeout", 504), ("crashed", 502)])
async def test_a_page_the_app_fails_to_render_is_answered_by_how_it_failed(
    make_api: MakeApi, kind: FailureKind, status: int
) -> None:
    api = await make_api(render_deadline=0.01)
    artifact_id = await api.upload()
    api.app.fail_next(kind, "render")
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/pages/1"), headers=ALICE)
    assert response.status_code == status


# ─── the lease ────────────────────────────────────────────────────────────────


async def test_the_lease_is_null_while_the_file_is_free(api: Api) -> None:
    artifact_id = await api.upload()
    response = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=BOB)
    assert response.status_code == 200
    assert response.json() == {"artifact_id": artifact_id, "lease": None}


async def test_the_lease_names_the_holder_and_expiry_of_a_check_out(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    response = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=BOB)
    assert response.json() == {
        "artifact_id": artifact_id,
        "lease": {"holder": checkout["holder"], "expires_at": checkout["expires_at"]},
    }
    assert checkout["holder"] == f"checkout:{checkout['id']}:user:alice"


# ─── check-out ────────────────────────────────────────────────────────────────


async def test_a_check_out_names_its_base_its_expiry_and_where_to_download_it(api: Api) -> None:
    data = build_docx()
    artifact_id = await api.upload(data)
    checkout = await api.check_out(artifact_id)
    assert checkout["id"].startswith("co_")
    assert checkout["artifact_id"] == artifact_id
    assert checkout["base_version"] == 1
    assert checkout["base_sha256"] == hashlib.sha256(data).hexdigest()
    assert checkout["expires_at"] == "2026-11-30T20:00:00Z"
    assert checkout["checked_in"] is False
    download = await api.client.get(checkout["download_url"], headers=ALICE)
    assert download.content == data


async def test_two_people_racing_to_check_out_get_one_check_out_and_one_busy(api: Api) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/checkouts")
    answers = await asyncio.gather(
        api.client.post(url, headers=ALICE), api.client.post(url, headers=BOB)
    )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200, 409]
    won = next(answer for answer in answers if answer.status_code == 200).json()
    busy = next(answer for answer in answers if answer.status_code == 409).json()["detail"]
    assert busy["type"] == "artifact_busy"
    assert busy["artifact_id"] == artifact_id
    assert (busy["holder"], busy["until"]) == (won["holder"], "2026-11-30T20:00:00Z")
    assert busy["lease"] == {"holder": won["holder"], "expires_at": "2026-11-30T20:00:00Z"}
    assert won["expires_at"] == busy["until"]  # one date format in every response


async def test_a_second_tab_is_refused_as_busy(api: Api) -> None:
    artifact_id = await api.upload()
    await api.check_out(artifact_id)
    response = await api.client.post(api.url(f"/{artifact_id}/checkouts"), headers=ALICE)
    assert response.status_code == 409


async def test_a_check_out_while_the_app_is_off_is_refused_403(api: Api) -> None:
    artifact_id = await api.upload()
    api.switch.set("t1", WORKSPACE, api.files.key, enabled=False)
    response = await api.client.post(api.url(f"/{artifact_id}/checkouts"), headers=ALICE)
    assert response.status_code == 403
    assert response.json()["detail"]["integration"] == "files:fake"


async def test_a_check_out_of_no_such_file_is_answered_404(api: Api) -> None:
    response = await api.client.post(api.url("/art_missing/checkouts"), headers=ALICE)
    assert response.status_code == 404
    assert response.json()["detail"] == {
        "type": "not_found",
        "message": "artifact art_missing does not exist",
        "entity": "artifact",
        "id": "art_missing",
    }


async def test_a_check_out_reads_back_as_it_was_made(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    response = await api.client.get(
        api.url(f"/{artifact_id}/checkouts/{checkout['id']}"), headers=ALICE
    )
    assert response.status_code == 200
    assert response.json() == checkout


async def test_someone_elses_check_out_is_refused_403_but_may_be_broken(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}")
    answers = [
        await api.client.get(url, headers=BOB),
        await api.client.post(f"{url}/extend", headers=BOB),
        await api.client.post(f"{url}/check-in", content=EDITED, headers=BOB),
    ]
    assert [answer.status_code for answer in answers] == [403] * 3
    assert await revisions(api, artifact_id) == 1
    # Breaking it is another matter: anyone who may archive the file may (ADR-0006), and
    # with no authorize hook here, everyone may.
    assert (await api.client.delete(url, headers=BOB)).status_code == 204


@pytest.mark.parametrize(
    ("checkout_id", "status"),
    [("co_0000000000000000", 404), ("co%00x", 422), ("a b", 422), ("x" * 256, 422)],
    ids=["unknown", "NUL", "space", "long"],
)
async def test_a_check_out_id_that_names_none_is_refused(
    api: Api, checkout_id: str, status: int
) -> None:
    artifact_id = await api.upload()
    url = api.url(f"/{artifact_id}/checkouts/{checkout_id}")
    answers = [
        await api.client.get(url, headers=ALICE),
        await api.client.post(f"{url}/extend", headers=ALICE),
        await api.client.delete(url, headers=ALICE),
        await api.client.post(f"{url}/check-in", content=EDITED, headers=ALICE),
    ]
    assert [answer.status_code for answer in answers] == [status] * 4


async def test_a_check_out_is_found_only_under_its_own_file(api: Api) -> None:
    first = await api.upload()
    second = await api.upload(name="other.docx")
    checkout = await api.check_out(first)
    url = api.url(f"/{second}/checkouts/{checkout['id']}")
    response = await api.client.get(url, headers=ALICE)
    assert response.status_code == 404
    assert response.json()["detail"]["entity"] == "checkout"
    check_in = await api.check_in(second, checkout["id"], EDITED)
    assert check_in.status_code == 404
    assert await revisions(api, first) == await revisions(api, second) == 1


async def test_extending_a_check_out_moves_its_expiry_from_now(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    api.clock.advance(timedelta(hours=7))
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}/extend")
    response = await api.client.post(url, headers=ALICE)
    assert response.status_code == 200
    assert response.json() == {**checkout, "expires_at": "2026-12-01T03:00:00Z"}
    lease = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=ALICE)
    assert lease.json()["lease"]["expires_at"] == "2026-12-01T03:00:00Z"


async def test_a_check_out_checked_in_can_no_longer_be_extended(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    await api.check_in(artifact_id, checkout["id"], EDITED)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}/extend")
    response = await api.client.post(url, headers=ALICE)
    assert response.status_code == 409
    assert response.json()["detail"]["type"] == "invalid_state"


async def test_discarding_a_check_out_frees_the_file(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}")
    response = await api.client.delete(url, headers=ALICE)
    assert response.status_code == 204
    assert response.content == b""
    lease = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=ALICE)
    assert lease.json()["lease"] is None
    assert (await api.client.delete(url, headers=ALICE)).status_code == 204  # a retry
    ended = (await api.client.get(url, headers=ALICE)).json()
    assert (ended["state"], ended["ended_by"]["id"], ended["checked_in"]) == (
        "discarded",
        "alice",
        False,
    )
    await api.check_out(artifact_id, BOB)


# ─── check-in ─────────────────────────────────────────────────────────────────


async def test_a_check_in_commits_a_new_version_and_frees_the_file(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    response = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert response.status_code == 200
    assert response.json() == {
        "status": "applied",
        "artifact_id": artifact_id,
        "version": 2,
        "proposal_id": None,
        "ended_by": None,
        "ended_at": None,
    }
    lease = await api.client.get(api.url(f"/{artifact_id}/lease"), headers=ALICE)
    assert lease.json()["lease"] is None
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    head = await ws.get(WordDocument, artifact_id)
    assert head.data.provenance.source == "check_in"
    assert head.data.content.sha256 == hashlib.sha256(EDITED).hexdigest()


async def test_a_check_in_streams_a_body_sent_in_chunks(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)

    async def chunks():
        for start in range(0, len(EDITED), 64):
            yield EDITED[start : start + 64]

    response = await api.client.post(
        api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in"),
        content=chunks(),
        headers=ALICE,
    )
    assert response.json()["status"] == "applied"


async def test_a_check_in_takes_its_summary_from_the_query(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in")
    refused = await api.client.post(
        url, params={"summary": "x" * 1001}, content=EDITED, headers=ALICE
    )
    assert refused.status_code == 422
    response = await api.client.post(
        url, params={"summary": "tightened clause 4"}, content=EDITED, headers=ALICE
    )
    assert response.status_code == 200
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    summaries = [getattr(envelope.event, "summary", None) for envelope in await ws.read()]
    assert "tightened clause 4" in summaries


async def test_an_upload_and_a_check_in_keep_no_control_or_direction_characters(
    api: Api,
) -> None:
    # U+202E turns "invoice\u202excod.docx" into "invoicecod.docx" shown as "invoicexdoc.exe".
    artifact_id = await api.upload(name="\u202einvoice\x00\u200f\u2066cod.docx\t")
    response = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"invoicecod.docx\"; filename*=UTF-8''invoicecod.docx"
    )
    checkout = await api.check_out(artifact_id)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in")
    summary = "fixed\u202e clause\r\n4\x1b[31m"
    checked_in = await api.client.post(
        url, params={"summary": summary}, content=EDITED, headers=ALICE
    )
    assert checked_in.status_code == 200
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert (await ws.get(WordDocument, artifact_id)).data.name == "invoicecod.docx"
    summaries = [getattr(envelope.event, "summary", None) for envelope in await ws.read()]
    assert "fixed clause 4[31m" in summaries  # the escape goes, its text stays


async def test_an_upload_named_only_by_invisible_characters_is_refused_422(api: Api) -> None:
    response = await api.client.post(
        api.url(), params={"name": "\u202e\u200f\x00"}, content=build_docx(), headers=ALICE
    )
    assert response.status_code == 422


async def test_a_retried_check_in_answers_what_the_first_did(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    first = await api.check_in(artifact_id, checkout["id"], EDITED)
    again = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert again.status_code == first.status_code == 200
    assert (
        again.json()
        == first.json()
        == {
            "status": "applied",
            "artifact_id": artifact_id,
            "version": 2,
            "proposal_id": None,
            "ended_by": None,
            "ended_at": None,
        }
    )
    assert await revisions(api, artifact_id) == 2
    other = await api.check_in(artifact_id, checkout["id"], build_docx(["Another file."]))
    assert other.status_code == 409
    assert "another file" in other.json()["detail"]["message"]


RETRIES = 30
"""How many copies of one check-in a client sends at once."""


async def test_many_retries_of_one_check_in_at_once_give_one_outcome_and_no_5xx(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    answers = await asyncio.gather(
        *(api.check_in(artifact_id, checkout["id"], EDITED) for _ in range(RETRIES))
    )
    assert [answer.status_code for answer in answers] == [200] * RETRIES
    assert {answer.text for answer in answers} == {answers[0].text}
    assert answers[0].json()["status"] == "applied"
    assert await revisions(api, artifact_id) == 2


async def test_many_retries_of_a_stale_check_in_at_once_give_one_proposal(api: Api) -> None:
    artifact_id = await api.upload()
    alices = await api.check_out(artifact_id)
    api.clock.advance(timedelta(hours=8, minutes=1))
    bobs = await api.check_out(artifact_id, BOB)
    assert (await api.check_in(artifact_id, bobs["id"], build_docx(["Bob's."]), BOB)).is_success
    answers = await asyncio.gather(
        *(api.check_in(artifact_id, alices["id"], EDITED) for _ in range(RETRIES))
    )
    assert [answer.status_code for answer in answers] == [202] * RETRIES
    assert {answer.text for answer in answers} == {answers[0].text}
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="bob"))
    assert [p.id for p in await ws.proposals()] == [answers[0].json()["proposal_id"]]


async def test_a_check_in_after_someone_broke_the_check_out_says_who_and_when(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    url = api.url(f"/{artifact_id}/checkouts/{checkout['id']}")
    assert (await api.client.delete(url, headers=BOB)).status_code == 204
    response = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "proposed"
    assert body["ended_by"] == {"kind": "user", "id": "bob", "name": "Bob"}
    assert body["ended_at"] == "2026-11-30T12:00:00Z"
    assert await revisions(api, artifact_id) == 1


async def test_a_check_in_after_the_lease_lapsed_and_someone_committed_is_a_proposal(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    alices = await api.check_out(artifact_id)
    api.clock.advance(timedelta(hours=8, minutes=1))
    bobs = await api.check_out(artifact_id, BOB)
    bob_edit = build_docx(["Bob was here."])
    assert (await api.check_in(artifact_id, bobs["id"], bob_edit, BOB)).json()["version"] == 2
    response = await api.check_in(artifact_id, alices["id"], EDITED)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "proposed"
    assert body["version"] == 2
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="bob"))
    proposals = await ws.proposals()
    assert [proposal.id for proposal in proposals] == [body["proposal_id"]]
    assert await revisions(api, artifact_id) == 2


async def test_an_agents_check_in_is_a_proposal(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id, AGENT)
    response = await api.check_in(artifact_id, checkout["id"], EDITED, AGENT)
    assert response.status_code == 202
    assert response.json()["status"] == "proposed"


async def test_a_check_in_that_is_not_a_zip_is_refused_422_and_keeps_the_check_out(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    response = await api.check_in(artifact_id, checkout["id"], b"not a zip")
    assert response.status_code == 422
    assert response.json()["detail"]["reason"] == "not_a_zip"
    assert (await api.check_in(artifact_id, checkout["id"], EDITED)).status_code == 200


async def test_a_check_in_over_the_size_limit_is_refused_413(make_api: MakeApi) -> None:
    api = await make_api(max_size=1 << 20)
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    bigger = package("", extra={"word/media/noise.bin": NOISE})
    response = await api.check_in(artifact_id, checkout["id"], bigger)
    assert response.status_code == 413
    assert response.json()["detail"]["reason"] == "too_large"


@pytest.mark.parametrize(("kind", "status"), APP_FAILURES)
async def test_a_check_in_the_app_fails_on_is_answered_by_how_it_failed(
    make_api: MakeApi, kind: FailureKind, status: int
) -> None:
    # The upload runs at the usual deadline, which a loaded machine's parse never nears; only
    # the check-in's deadline is short, so a told timeout ends at once.
    artifact_id = await (await make_api()).upload()
    api = await make_api(deadline=0.01)
    checkout = await api.check_out(artifact_id)
    api.app.fail_next(kind, "inspect")
    response = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert response.status_code == status
    assert await revisions(api, artifact_id) == 1


async def test_a_check_in_while_the_app_is_off_is_refused_403(api: Api) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    api.switch.set("t1", WORKSPACE, api.files.key, enabled=False)
    response = await api.check_in(artifact_id, checkout["id"], EDITED)
    assert response.status_code == 403
    download = await api.client.get(api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE)
    assert download.status_code == 200


# ─── hiding and bad input ─────────────────────────────────────────────────────


async def test_a_hidden_file_is_answered_byte_for_byte_as_a_missing_one_on_every_route(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id, BOB)
    api.hidden["user:bob"] = {artifact_id}
    base = f"/{artifact_id}"
    co = f"{base}/checkouts/{checkout['id']}"
    requests = [
        ("GET", f"{base}/versions/1/content", None),
        ("HEAD", f"{base}/versions/1/content", None),
        ("GET", f"{base}/versions/1/pages/1", None),
        ("GET", f"{base}/lease", None),
        ("POST", f"{base}/checkouts", None),
        ("GET", co, None),
        ("POST", f"{co}/extend", None),
        ("DELETE", co, None),
        ("POST", f"{co}/check-in", EDITED),
    ]
    for method, path, body in requests:
        hidden = await api.client.request(method, api.url(path), content=body, headers=BOB)
        # The same id in a workspace where no such file was ever made.
        missing = await api.client.request(
            method, api.url(path, workspace="w2"), content=body, headers=BOB
        )
        assert hidden.status_code == 404, (method, path)
        assert hidden.content == missing.content, (method, path)
        assert hidden.headers == missing.headers, (method, path)
    assert await revisions(api, artifact_id) == 1


async def test_a_hidden_file_costs_the_database_what_a_missing_one_does_on_every_route(
    api: Api, engine: AsyncEngine
) -> None:
    # A hidden id answered before any read would be answered faster: an oracle by its timing.
    artifact_id = await api.upload()
    api.hidden["user:bob"] = {artifact_id}
    missing = "art_" + "0" * (len(artifact_id) - 4)
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(args[2])

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        for method, path in [
            ("GET", "/{}/versions/1/content"),
            ("HEAD", "/{}/versions/1/content"),
            ("GET", "/{}/versions/2/content"),
            ("GET", "/{}/versions/1/pages/1"),
            ("GET", "/{}/lease"),
            ("POST", "/{}/checkouts"),
        ]:
            work: list[list[str]] = []
            for named in (artifact_id, missing):
                statements.clear()
                response = await api.client.request(
                    method, api.url(path.format(named)), headers=BOB
                )
                assert response.status_code == 404, (method, path)
                work.append(list(statements))
            assert work[0] == work[1], (method, path)
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


@pytest.mark.parametrize(
    "path",
    [
        "/workspaces/w%00/files/art_1/lease",
        "/workspaces/w1/files/art%00/lease",
        "/workspaces/w1/files/art%00/versions/1/content",
        "/workspaces/w1/files/art%00/checkouts",
    ],
)
async def test_a_nul_in_an_id_is_refused_422_not_a_server_error(api: Api, path: str) -> None:
    response = await api.client.request(
        "POST" if path.endswith("checkouts") else "GET", path, headers=ALICE
    )
    assert response.status_code == 422


async def test_a_version_or_page_past_what_a_database_holds_is_refused_422(api: Api) -> None:
    artifact_id = await api.upload()
    answers = [
        await api.client.get(api.url(f"/{artifact_id}/versions/{2**31}/content"), headers=ALICE),
        await api.client.get(api.url(f"/{artifact_id}/versions/1/pages/{2**31}"), headers=ALICE),
    ]
    assert [answer.status_code for answer in answers] == [422, 422]


# ─── a 1 GiB check-in ─────────────────────────────────────────────────────────

GIB = 1 << 30
MIB = 1 << 20
BIG_LIMITS = ZipLimits(max_part_size=2 * GIB, max_total_size=2 * GIB)
FLAT = 64 * MIB
"""The most Python memory a check-in of any size may take at its peak."""


class Sink(io.RawIOBase):
    """A write-only stream whose bytes are taken out as they are written."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Buffer) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def drain(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


class LazyDocx:
    """A .docx of any size, made chunk by chunk as it is sent: one big stored part.

    The zip is written to a sink that is drained after every MiB, so it is never whole in
    memory; zipfile computes the part's CRC as it goes and writes it after the data.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        sink = Sink()
        block = bytes(range(256)) * (MIB // 256)
        with zipfile.ZipFile(sink, "w", zipfile.ZIP_STORED) as archive:
            for name, data in docx_frame().items():
                archive.writestr(name, data)
            with archive.open("word/media/big.bin", "w") as part:
                for _ in range(self.size // MIB):
                    part.write(block)
                    yield self.counted(sink.drain())
        yield self.counted(sink.drain())

    def counted(self, chunk: bytes) -> bytes:
        self.sent += len(chunk)
        return chunk


def docx_frame() -> dict[str, bytes]:
    """Return what names a package a Word document: its content types and its main part."""
    with zipfile.ZipFile(io.BytesIO(build_docx())) as small:
        return {
            name: small.read(name)
            for name in ("[Content_Types].xml", "_rels/.rels", "word/document.xml")
        }


class StreamingApp:
    """An app that reads a file by streaming it, as one needing no whole copy would.

    FakeApp, like WordCraft, holds a document whole and refuses one past its limit, so this
    stands in for the app to measure what the router and NativeFiles hold themselves.
    """

    name = "streaming"

    async def inspect(self, source: Source, *, deadline: float = 30.0) -> Inspection:
        stream = io.BytesIO(source) if isinstance(source, bytes) else source
        printed = await asyncio.to_thread(fingerprint, stream, limits=BIG_LIMITS)
        return Inspection(fingerprint=printed, about=About(app=self.name))

    async def apply(self, source: bytes, commands: Sequence[AppCommand], **_: Any) -> Edited:
        raise AppRefused("this app only reads")

    async def render(self, source: bytes, page: int, **_: Any) -> bytes:
        raise AppRefused("this app only reads")

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        return []


async def measured_check_in(api: Api, big: LazyDocx) -> tuple[httpx2.Response, int]:
    """Check a lazy file in through the router; return the answer and the peak memory."""
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    chunks = big.chunks()
    tracemalloc.start()
    try:
        response = await api.client.post(
            api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in"),
            content=chunks,
            headers={**ALICE, **DOCX_BODY},
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await chunks.aclose()
    return response, peak


@pytest.mark.timeout(180)  # a gibibyte hashed and stored: half a minute on a busy machine
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
async def test_a_1_gib_check_in_is_applied_through_the_router_in_flat_memory(
    make_api: MakeApi,
) -> None:
    api = await make_api(app=StreamingApp(), max_size=2 * GIB, limits=BIG_LIMITS)
    big = LazyDocx(GIB)
    response, peak = await measured_check_in(api, big)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "applied"
    assert big.sent > GIB
    assert peak < FLAT, f"peak {peak / MIB:.1f} MiB"


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
async def test_a_1_gib_check_in_is_refused_413_at_the_limit_in_flat_memory(
    make_api: MakeApi,
) -> None:
    api = await make_api()
    big = LazyDocx(GIB)
    response, peak = await measured_check_in(api, big)
    assert response.status_code == 413
    assert response.json()["detail"]["limit"] == MAX_SIZE
    assert MAX_SIZE < big.sent < MAX_SIZE + 4 * MIB
    assert peak < FLAT, f"peak {peak / MIB:.1f} MiB"


async def test_a_browser_s_octet_stream_uploads_and_checks_in_as_a_docx(api: Api) -> None:
    octets = {"content-type": "application/octet-stream"}
    response = await api.client.post(
        api.url(),
        params={"name": "contract.docx"},
        content=build_docx(),
        headers={**ALICE, **octets},
    )
    assert response.status_code == 201, response.text
    artifact_id = response.json()["artifact_id"]
    head = await api.client.head(response.headers["location"], headers=ALICE)
    assert head.headers["content-type"] == DOCX
    checkout = await api.check_out(artifact_id)
    checked_in = await api.client.post(
        api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in"),
        content=EDITED,
        headers={**ALICE, **octets},
    )
    assert (checked_in.status_code, checked_in.json()["status"]) == (200, "applied")
