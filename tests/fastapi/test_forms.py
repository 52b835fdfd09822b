"""Uploads and check-ins sent as forms, as browsers and portals send them (RFC 7578).

Each request goes over HTTP to the files router: a ``multipart/form-data`` body whose file part
is streamed into the service like a raw body, named by its filename where the query names
nothing, with a check-in's summary as a field before the file. Every form that doesn't carry
one file is refused with a typed problem (``form_refused`` 422, ``malformed_form`` 400), never
as a file that is not a zip, and nothing is stored; a form whose file is over the size limit is
refused 413 at the limit, in flat memory.
"""

import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from artifactr.core import UserActor

from artifactr.files import DOCX, WordDocument
from artifactr.files.fastapi.bodies import MAX_FIELD, MAX_PARTS
from tests.documents import build_docx
from tests.fastapi.conftest import AGENT, ALICE, WORKSPACE, Api, MakeApi

EDITED = build_docx(["An edited document."])
BOUNDARY = "artifactr-form-boundary"
FORM = {"content-type": f"multipart/form-data; boundary={BOUNDARY}"}
MIB = 1 << 20


def part(name: str, value: bytes, *, filename: str | None = None, media: str = "") -> bytes:
    """Return one part of a form: a text field, or a file if it has a filename."""
    disposition = f'form-data; name="{name}"'
    if filename is not None:
        disposition += f'; filename="{filename}"'
    headers = f"Content-Disposition: {disposition}\r\n"
    if media:
        headers += f"Content-Type: {media}\r\n"
    return f"--{BOUNDARY}\r\n{headers}\r\n".encode() + value + b"\r\n"


def form(*parts: bytes) -> bytes:
    """Return a whole form of these parts, closed."""
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def file_part(data: bytes = EDITED, filename: str = "contract.docx") -> bytes:
    return part("file", data, filename=filename, media=DOCX)


async def post_form(api: Api, url: str, body: Any, **params: str) -> httpx2.Response:
    return await api.client.post(url, params=params, content=body, headers={**ALICE, **FORM})


async def names(api: Api) -> list[str]:
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return [artifact.data.name for artifact in await ws.artifacts(WordDocument)]


async def summaries(api: Api) -> list[str | None]:
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return [getattr(envelope.event, "summary", None) for envelope in await ws.read()]


async def checked_out(api: Api) -> tuple[str, str]:
    """Upload a file and check it out as alice; return its check-in's URL and the artifact."""
    artifact_id = await api.upload()
    checkout = await api.check_out(artifact_id)
    return api.url(f"/{artifact_id}/checkouts/{checkout['id']}/check-in"), artifact_id


async def revisions(api: Api, artifact_id: str) -> int:
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return len(await ws.revisions(artifact_id))


# ─── uploads ──────────────────────────────────────────────────────────────────


async def test_a_browser_uploads_a_file_as_a_form_named_by_its_filename(api: Api) -> None:
    data = build_docx(["Terms."])
    response = await api.client.post(
        api.url(), files={"file": ("terms.docx", data, DOCX)}, headers=ALICE
    )
    assert response.status_code == 201, response.text
    download = await api.client.get(response.json()["download_url"], headers=ALICE)
    assert download.content == data
    assert download.headers["content-type"] == DOCX
    assert "filename*=UTF-8''terms.docx" in download.headers["content-disposition"]


async def test_a_forms_file_sent_as_octets_or_untyped_is_a_docx(api: Api) -> None:
    octets = part("file", build_docx(), filename="a.docx", media="application/octet-stream")
    untyped = part("file", build_docx(), filename="b.docx")
    for body in (form(octets), form(untyped)):
        response = await post_form(api, api.url(), body)
        assert response.status_code == 201, response.text
    assert sorted(await names(api)) == ["a.docx", "b.docx"]


async def test_the_querys_name_wins_over_the_filename(api: Api) -> None:
    response = await post_form(api, api.url(), form(file_part()), name="named.docx")
    assert response.status_code == 201
    assert await names(api) == ["named.docx"]


@pytest.mark.parametrize(
    ("filename", "saved"),
    [
        ("C:\\Users\\ada\\report.docx", "report.docx"),
        ("../../etc/report.docx", "report.docx"),
        ("\u202einvoice\x1b.docx", "invoice.docx"),
        ("x" * 300 + ".docx", "x" * 250 + ".docx"),
    ],
    ids=["a windows path", "a relative path", "controls", "a long name"],
)
async def test_a_filename_is_cleaned_to_a_name_as_any_upload_s_is(
    api: Api, filename: str, saved: str
) -> None:
    response = await post_form(api, api.url(), form(file_part(build_docx(), filename)))
    assert response.status_code == 201, response.text
    assert await names(api) == [saved]


async def test_a_form_without_a_filename_or_a_name_is_refused_422(api: Api) -> None:
    response = await post_form(api, api.url(), form(file_part(build_docx(), filename="")))
    assert response.status_code == 422
    assert response.json()["detail"]["type"] == "validation_failed"
    assert await names(api) == []


async def test_an_agents_form_upload_is_a_proposal(api: Api) -> None:
    response = await api.client.post(
        api.url(), files={"file": ("a.docx", build_docx(), DOCX)}, headers=AGENT
    )
    assert response.status_code == 202
    assert response.json()["proposal_id"]


async def test_a_form_streamed_in_small_pieces_uploads_whole(api: Api) -> None:
    data = build_docx(["Sent seven bytes at a time."])
    body = form(part("note", b"kept out"), file_part(data, "small.docx"))

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 7):
            yield body[start : start + 7]

    response = await post_form(api, api.url(), pieces())
    assert response.status_code == 201, response.text
    download = await api.client.get(response.json()["download_url"], headers=ALICE)
    assert download.content == data


# ─── check-ins ────────────────────────────────────────────────────────────────


async def test_a_browser_checks_a_file_in_as_a_form_with_its_summary(api: Api) -> None:
    url, artifact_id = await checked_out(api)
    response = await api.client.post(
        url,
        data={"summary": "tightened clause 4"},
        files={"file": ("contract.docx", EDITED, DOCX)},
        headers=ALICE,
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "applied"
    assert "tightened clause 4" in await summaries(api)
    download = await api.client.get(api.url(f"/{artifact_id}/versions/2/content"), headers=ALICE)
    assert download.content == EDITED


async def test_a_check_ins_summary_in_the_query_wins_over_the_forms(api: Api) -> None:
    url, _ = await checked_out(api)
    body = form(part("summary", b"from the form"), file_part())
    response = await post_form(api, url, body, summary="from the query")
    assert response.status_code == 200
    said = await summaries(api)
    assert "from the query" in said
    assert "from the form" not in said


async def test_fields_a_route_doesnt_read_are_passed_over_before_and_after_the_file(
    api: Api,
) -> None:
    url, _ = await checked_out(api)
    body = form(part("csrf", b"token"), file_part(), part("submit", b"Check in"))
    response = await post_form(api, url, body)
    assert (response.status_code, response.json()["status"]) == (200, "applied")


# ─── refusals ─────────────────────────────────────────────────────────────────

REFUSED_FORMS: list[Any] = [
    pytest.param(form(part("summary", b"no file")), "no_file", id="no file"),
    pytest.param(form(), "no_file", id="no part at all"),
    pytest.param(
        form(part("file", b"", filename=""), part("summary", b"x")),
        "no_file",
        id="a file input left empty",
    ),
    pytest.param(form(file_part(), file_part()), "two_files", id="two files"),
    pytest.param(form(file_part(), part("summary", b"late")), "late_field", id="a late summary"),
    pytest.param(
        form(*[part(f"f{n}", b"x") for n in range(MAX_PARTS)], file_part()),
        "too_many_parts",
        id="too many parts",
    ),
    pytest.param(
        form(part("csrf", b"x" * (MAX_FIELD + 1)), file_part()),
        "field_too_large",
        id="a field over its bytes",
    ),
    pytest.param(
        form(part("summary", "é".encode() * 1_001), file_part()),
        "field_too_large",
        id="a summary over its characters",
    ),
]


@pytest.mark.parametrize(("body", "problem"), REFUSED_FORMS)
async def test_a_check_in_form_without_one_file_is_refused_422_saying_why(
    api: Api, body: bytes, problem: str
) -> None:
    url, artifact_id = await checked_out(api)
    response = await post_form(api, url, body)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert (detail["type"], detail["problem"]) == ("form_refused", problem)
    assert "zip" not in detail["message"]
    assert await revisions(api, artifact_id) == 1
    again = await api.client.post(
        url, data={"summary": "now"}, files={"file": EDITED}, headers=ALICE
    )
    assert again.json()["status"] == "applied"  # the check-out is still open


async def test_an_upload_form_with_two_files_stores_nothing(api: Api) -> None:
    response = await post_form(api, api.url(), form(file_part(build_docx()), file_part()))
    assert response.status_code == 422
    assert response.json()["detail"]["problem"] == "two_files"
    assert await names(api) == []


async def test_a_url_encoded_form_carries_no_file_and_is_refused_422(api: Api) -> None:
    response = await api.client.post(
        api.url(), params={"name": "a.docx"}, data={"file": "contract.docx"}, headers=ALICE
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert (detail["type"], detail["problem"]) == ("form_refused", "no_file")
    assert "multipart/form-data" in detail["message"]


MALFORMED: list[Any] = [
    pytest.param({"content-type": "multipart/form-data"}, form(file_part()), id="no boundary"),
    pytest.param(
        {"content-type": f"multipart/form-data; boundary={'b' * 300}"},
        form(file_part()),
        id="a boundary too long",
    ),
    pytest.param(FORM, b"this is not a form at all", id="not a form"),
    pytest.param(FORM, form(file_part())[:-30], id="cut off"),
    pytest.param(FORM, b"", id="empty"),
    pytest.param(
        FORM,
        f"--{BOUNDARY}\r\nBad Header: x\r\n\r\n".encode() + form(file_part()),
        id="a bad header",
    ),
]


@pytest.mark.parametrize(("headers", "body"), MALFORMED)
async def test_a_malformed_form_is_refused_400_on_upload_and_check_in(
    api: Api, headers: dict[str, str], body: bytes
) -> None:
    url, artifact_id = await checked_out(api)
    for target in (api.url(), url):
        response = await api.client.post(
            target, params={"name": "a.docx"}, content=body, headers={**ALICE, **headers}
        )
        assert response.status_code == 400, response.text
        detail = response.json()["detail"]
        assert detail["type"] == "malformed_form"
        assert detail["message"].startswith("the body is not the multipart/form-data its type")
    assert await names(api) == ["contract.docx"]
    assert await revisions(api, artifact_id) == 1


# ─── the size limit ───────────────────────────────────────────────────────────


class LazyForm:
    """A form whose file part is ``size`` bytes, made as it is sent, counting what was sent."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        yield self.counted(part("summary", b"big"))
        head = file_part(b"", "big.docx").removesuffix(b"\r\n")
        yield self.counted(head)
        block = bytes(range(256)) * (MIB // 256)
        for _ in range(self.size // MIB):
            yield self.counted(block)
        yield self.counted(f"\r\n--{BOUNDARY}--\r\n".encode())

    def counted(self, chunk: bytes) -> bytes:
        self.sent += len(chunk)
        return chunk


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
@pytest.mark.parametrize("route", ["upload", "check-in"])
async def test_a_form_over_the_size_limit_is_refused_413_at_the_limit_in_flat_memory(
    make_api: MakeApi, route: str
) -> None:
    limit = 48 * MIB
    api = await make_api(max_size=limit)
    url = api.url() if route == "upload" else (await checked_out(api))[0]
    big = LazyForm(256 * MIB)
    chunks = big.chunks()
    tracemalloc.start()
    try:
        response = await post_form(api, url, chunks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await chunks.aclose()
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert (detail["reason"], detail["limit"]) == ("too_large", limit)
    assert limit < big.sent < limit + 4 * MIB
    assert peak < limit / 2, f"peak {peak / MIB:.1f} MiB"
