"""WebDAV: the surface a desktop app reads, and every refusal, through the app (ADR-0018).

OPTIONS, PROPFIND at depth 0 and 1 with each property, GET and HEAD with their validators,
PROPPATCH of Office's properties, the methods refused with their reasons, who is asking (a
capability link, or the application's resolve_actor and its Basic hook), a hidden file answered
as a missing one, and hostile XML bodies refused before anything is read. Locks and saves are
``test_webdav_locks.py``'s; real clients are ``test_webdav_clients.py``'s.
"""

import base64
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import jwt
import pytest
from artifactr.core import (
    Actor,
    AgentActor,
    ArtifactChanged,
    ArtifactCreated,
    EditArtifact,
    Forbidden,
    InvalidState,
    JsonPatch,
    NotFound,
    UserActor,
)
from artifactr.fastapi import Unauthorized
from starlette.requests import Request

from artifactr.files.core.errors import FileTooLarge, UnsafeFile
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.dav_xml import MAX_BODY, MAX_DEPTH, MAX_ELEMENTS, MalformedXml
from artifactr.files.fastapi.webdav import (
    basic_actor,
    dav_status,
    file_link,
    office_links,
    webdav_router,
)
from tests.documents import build_docx
from tests.fastapi.conftest import (
    ALICE,
    BOB,
    MALLORY,
    SECRET,
    WORKSPACE,
    Dav,
    MakeApi,
    build_app,
    resolve_actor,
)
from tests.scale import longer_history

D = "{DAV:}"
PROPFIND_ALL = b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>'


def parsed(response: httpx2.Response) -> ET.Element:
    return ET.fromstring(response.content)


def props(response: httpx2.Response) -> dict[str, dict[str, ET.Element]]:
    """Return each href's properties found (200), by local name."""
    found: dict[str, dict[str, ET.Element]] = {}
    for answer in parsed(response).iter(f"{D}response"):
        href = answer.findtext(f"{D}href") or ""
        for stat in answer.iter(f"{D}propstat"):
            if "200" in (stat.findtext(f"{D}status") or ""):
                for prop in stat.iter(f"{D}prop"):
                    for child in prop:
                        found.setdefault(href, {})[child.tag.removeprefix(D)] = child
    return found


async def propfind(
    dav: Dav, url: str, depth: str = "0", body: bytes = PROPFIND_ALL, who: dict[str, str] = ALICE
) -> httpx2.Response:
    return await dav.client.request("PROPFIND", url, content=body, headers={**who, "Depth": depth})


# ─── OPTIONS and PROPFIND ─────────────────────────────────────────────────────


async def test_options_says_class_2_and_office_s_header_without_asking_who(dav: Dav) -> None:
    for url in (dav.url("contract.docx"), dav.url(), "/dav/"):
        answer = await dav.client.options(url)
        assert answer.status_code == 200
        assert answer.headers["DAV"] == "1, 2"
        assert answer.headers["MS-Author-Via"] == "DAV"
    file = await dav.client.options(dav.url("contract.docx"))
    assert "LOCK" in file.headers["Allow"]
    assert "PUT" in file.headers["Allow"]
    assert "PUT" not in (await dav.client.options(dav.url())).headers["Allow"]
    assert (await dav.client.get("/dav/")).status_code == 404


async def test_a_workspace_is_a_collection_listing_its_files_by_name(dav: Dav) -> None:
    first = await dav.api.upload(name="contract.docx")
    await dav.api.upload(name="notes.docx")
    await dav.api.upload(name="Contract.docx")
    listed = await propfind(dav, dav.url(), depth="1")
    assert listed.status_code == 207
    found = props(listed)
    assert sorted(found) == [
        "/dav/workspaces/w1/",
        "/dav/workspaces/w1/Contract%20%282%29.docx",
        "/dav/workspaces/w1/contract.docx",
        "/dav/workspaces/w1/notes.docx",
    ]
    collection = found["/dav/workspaces/w1/"]
    assert collection["resourcetype"].find(f"{D}collection") is not None
    file = found["/dav/workspaces/w1/contract.docx"]
    assert file["resourcetype"].find(f"{D}collection") is None
    assert file["displayname"].text == "contract.docx"
    assert file["getcontentlength"].text == str(len(build_docx()))
    assert file["getcontenttype"].text is not None
    assert "wordprocessingml" in file["getcontenttype"].text
    _, manifest = await dav.api.files.manifest(
        await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice")), first
    )
    assert file["getetag"].text == f'"{manifest.content.sha256}"'
    assert file["getlastmodified"].text is not None
    assert file["getlastmodified"].text.endswith("GMT")
    assert file["creationdate"].text is not None
    assert file["creationdate"].text.endswith("Z")
    assert file["supportedlock"].find(f".//{D}exclusive") is not None
    assert file["supportedlock"].find(f".//{D}shared") is None
    assert list(file["lockdiscovery"]) == []
    only = await propfind(dav, dav.url(), depth="0")
    assert list(props(only)) == ["/dav/workspaces/w1/"]
    infinite = await propfind(dav, dav.url(), depth="infinity")
    assert len(props(infinite)) == 4
    assert (await propfind(dav, dav.url(), depth="2")).status_code == 400


async def test_propfind_answers_names_and_named_properties_and_404_for_unknown_ones(
    dav: Dav,
) -> None:
    await dav.api.upload()
    names = b'<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>'
    answer = await propfind(dav, dav.url("contract.docx"), body=names)
    found = props(answer)["/dav/workspaces/w1/contract.docx"]
    assert "getetag" in found
    assert found["getetag"].text is None
    asked = (
        b'<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><D:getetag/><Z:colour/>'
        b"<D:quota-used-bytes/></D:prop></D:propfind>"
    )
    answer = await propfind(dav, dav.url("contract.docx"), body=asked)
    assert list(props(answer)["/dav/workspaces/w1/contract.docx"]) == ["getetag"]
    missing = [
        stat
        for stat in parsed(answer).iter(f"{D}propstat")
        if "404" in (stat.findtext(f"{D}status") or "")
    ]
    assert [child.tag for child in missing[0].iter() if child.tag.startswith("{urn")] == [
        "{urn:z}colour"
    ]
    empty = await propfind(dav, dav.url("contract.docx"), body=b"")
    assert "getetag" in props(empty)["/dav/workspaces/w1/contract.docx"]
    bare = await propfind(dav, dav.url("contract.docx"), body=b'<propfind xmlns="DAV:"/>')
    assert "getetag" in props(bare)["/dav/workspaces/w1/contract.docx"]
    for kind in (b"<D:propname/>", b"<D:prop><D:resourcetype/><D:nothing/></D:prop>"):
        body = b'<D:propfind xmlns:D="DAV:">' + kind + b"</D:propfind>"
        assert (await propfind(dav, dav.url(), body=body)).status_code == 207


async def test_a_missing_or_hidden_file_is_404_alike_and_no_member_is_403(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    dav.api.hidden["user:bob"] = {artifact_id}
    hidden = await propfind(dav, dav.url("contract.docx"), who=BOB)
    missing = await propfind(dav, dav.url("other.docx"), who=BOB)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.text.replace("contract", "other") == missing.text
    assert list(props(await propfind(dav, dav.url(), depth="1", who=BOB))) == [
        "/dav/workspaces/w1/"
    ]
    assert (await dav.client.get(dav.url("contract.docx"), headers=BOB)).status_code == 404
    assert (await propfind(dav, dav.url(), who=MALLORY)).status_code == 403
    nobody = await propfind(dav, dav.url(), who={})
    assert nobody.status_code == 401
    assert nobody.headers["WWW-Authenticate"].startswith("Basic")


# ─── GET and HEAD ─────────────────────────────────────────────────────────────


async def test_get_streams_the_head_with_its_validators_and_honours_conditions(dav: Dav) -> None:
    await dav.api.upload()
    got = await dav.client.get(dav.url("contract.docx"), headers=ALICE)
    assert got.status_code == 200
    assert got.content == build_docx()
    etag = got.headers["ETag"]
    assert got.headers["Last-Modified"].endswith("GMT")
    head = await dav.client.head(dav.url("contract.docx"), headers=ALICE)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["ETag"] == etag
    assert head.headers["Content-Length"] == str(len(build_docx()))
    same = await dav.client.get(dav.url("contract.docx"), headers={**ALICE, "If-None-Match": etag})
    assert same.status_code == 304
    assert same.content == b""
    star = await dav.client.get(dav.url("contract.docx"), headers={**ALICE, "If-None-Match": "*"})
    assert star.status_code == 304
    wrong = await dav.client.get(dav.url("contract.docx"), headers={**ALICE, "If-Match": '"x"'})
    assert wrong.status_code == 412
    right = await dav.client.get(dav.url("contract.docx"), headers={**ALICE, "If-Match": etag})
    assert right.status_code == 200
    any_tag = await dav.client.get(dav.url("contract.docx"), headers={**ALICE, "If-Match": "*"})
    assert any_tag.status_code == 200
    other = await dav.client.get(
        dav.url("contract.docx"), headers={**ALICE, "If-None-Match": '"y"'}
    )
    assert other.status_code == 200


async def test_a_name_matches_without_regard_to_case_and_percent_encoding(dav: Dav) -> None:
    await dav.api.upload(name="Q3 plan.docx")
    listed = props(await propfind(dav, dav.url(), depth="1"))
    assert "/dav/workspaces/w1/Q3%20plan.docx" in listed
    assert (await dav.client.get(dav.url("q3%20PLAN.docx"), headers=ALICE)).status_code == 200


# ─── PROPPATCH and the refused methods ────────────────────────────────────────

WIN32 = (
    b'<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:">'
    b"<D:set><D:prop><Z:Win32CreationTime>Tue, 01 Dec 2026 10:00:00 GMT</Z:Win32CreationTime>"
    b"<Z:Win32LastModifiedTime>Tue, 01 Dec 2026 10:00:00 GMT</Z:Win32LastModifiedTime>"
    b"<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes></D:prop></D:set>"
    b"</D:propertyupdate>"
)


async def test_proppatch_of_office_s_properties_succeeds_and_stores_nothing(dav: Dav) -> None:
    await dav.api.upload()
    answer = await dav.client.request(
        "PROPPATCH", dav.url("contract.docx"), content=WIN32, headers=ALICE
    )
    assert answer.status_code == 207
    statuses = [stat.findtext(f"{D}status") for stat in parsed(answer).iter(f"{D}propstat")]
    assert statuses == ["HTTP/1.1 200 OK"]
    later = await propfind(dav, dav.url("contract.docx"))
    assert "Win32FileAttributes" not in later.text


async def test_proppatch_of_any_other_property_is_refused_and_fails_the_rest(dav: Dav) -> None:
    await dav.api.upload()
    body = (
        b'<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:" xmlns:P="urn:p">'
        b"<D:set><D:prop><P:colour>red</P:colour></D:prop></D:set>"
        b"<D:remove><D:prop><Z:Win32FileAttributes/></D:prop></D:remove></D:propertyupdate>"
    )
    answer = await dav.client.request(
        "PROPPATCH", dav.url("contract.docx"), content=body, headers=ALICE
    )
    statuses = [stat.findtext(f"{D}status") for stat in parsed(answer).iter(f"{D}propstat")]
    assert statuses == ["HTTP/1.1 403 Forbidden", "HTTP/1.1 424 Failed Dependency"]
    only = (
        b'<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:x/></D:prop></D:set>'
        b"</D:propertyupdate>"
    )
    refused = await dav.client.request(
        "PROPPATCH", dav.url("contract.docx"), content=only, headers=ALICE
    )
    assert [s.findtext(f"{D}status") for s in parsed(refused).iter(f"{D}propstat")] == [
        "HTTP/1.1 403 Forbidden"
    ]
    collection = await dav.client.request("PROPPATCH", dav.url(), content=WIN32, headers=ALICE)
    assert "403" in collection.text
    empty = b'<D:propertyupdate xmlns:D="DAV:"/>'
    none = await dav.client.request(
        "PROPPATCH", dav.url("contract.docx"), content=empty, headers=ALICE
    )
    assert none.status_code == 207
    no_body = await dav.client.request("PROPPATCH", dav.url("contract.docx"), headers=ALICE)
    assert no_body.status_code == 400
    missing = await dav.client.request(
        "PROPPATCH", dav.url("gone.docx"), content=WIN32, headers=ALICE
    )
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("method", "status", "reason"),
    [
        ("MKCOL", 405, "collections are not made here"),
        ("COPY", 403, "not copied"),
        ("MOVE", 403, "not moved"),
        ("DELETE", 403, "history is never deleted"),
        ("POST", 405, "not a WebDAV method"),
    ],
)
async def test_what_a_versioned_store_never_does_is_refused_with_the_reason(
    dav: Dav, method: str, status: int, reason: str
) -> None:
    await dav.api.upload()
    for url in (dav.url("contract.docx"), dav.url("new.docx"), dav.url()):
        answer = await dav.client.request(method, url, headers=ALICE)
        assert answer.status_code == status
        assert reason in answer.text


async def test_a_new_name_is_neither_put_nor_locked_and_a_collection_is_not_read(dav: Dav) -> None:
    await dav.api.upload()
    put = await dav.client.put(dav.url("new.docx"), content=build_docx(), headers=ALICE)
    assert put.status_code == 403
    assert "upload" in put.text
    lock = await dav.client.request("LOCK", dav.url("new.docx"), headers=ALICE)
    assert lock.status_code == 403
    assert (await dav.client.get(dav.url(), headers=ALICE)).status_code == 405
    assert (
        await dav.client.request("UNLOCK", dav.url("new.docx"), headers=ALICE)
    ).status_code == 404
    assert (await dav.client.request("PUT", dav.url(), headers=ALICE)).status_code == 405


# ─── hostile bodies ───────────────────────────────────────────────────────────

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&lol3;</D:displayname></D:prop></D:propfind>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE propfind [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&xxe;</D:displayname></D:prop></D:propfind>"""

EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE propfind SYSTEM "http://127.0.0.1:9/evil.dtd">
<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>"""


def nested(depth: int) -> bytes:
    return (
        b'<D:propfind xmlns:D="DAV:"><D:prop>'
        + b"<x>" * depth
        + b"</x>" * depth
        + b"</D:prop></D:propfind>"
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (LAUGHS, "declaration"),
        (XXE, "declaration"),
        (EXTERNAL_DTD, "declaration"),
        (b"<D:propfind xmlns:D='DAV:'><D:prop>", "not_xml"),
        (nested(MAX_DEPTH), "too_deep"),
        (
            b"<D:propfind xmlns:D='DAV:'><D:prop>"
            + b"<x/>" * MAX_ELEMENTS
            + b"</D:prop></D:propfind>",
            "too_many_elements",
        ),
        (b"<D:lockinfo xmlns:D='DAV:'/>", "not_expected"),
    ],
)
async def test_a_hostile_or_malformed_body_is_refused_400_before_it_is_read(
    dav: Dav, body: bytes, reason: str
) -> None:
    await dav.api.upload()
    answer = await propfind(dav, dav.url("contract.docx"), body=body)
    assert answer.status_code == 400, answer.text
    assert "/etc/passwd" not in answer.text
    assert "root:" not in answer.text
    del reason


async def test_a_body_over_the_limit_is_413_and_a_lock_body_is_read_hardened(dav: Dav) -> None:
    await dav.api.upload()
    big = b"<D:propfind xmlns:D='DAV:'>" + b" " * MAX_BODY + b"</D:propfind>"
    assert (await propfind(dav, dav.url("contract.docx"), body=big)).status_code == 413
    lock = await dav.client.request("LOCK", dav.url("contract.docx"), content=LAUGHS, headers=ALICE)
    assert lock.status_code == 400


# ─── who is asking ────────────────────────────────────────────────────────────


async def test_a_capability_link_opens_its_one_file_as_its_person(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    await dav.api.upload(name="other.docx")
    link = await dav.link(artifact_id, who="bob")
    assert link.endswith("/workspaces/w1/contract.docx")
    got = await dav.client.get(link)
    assert got.status_code == 200
    assert got.content == build_docx()
    collection = link.removesuffix("contract.docx")
    listed = props(await propfind(dav, collection, depth="1", who={}))
    assert sorted(listed) == [collection, link]
    assert (await propfind(dav, collection.rstrip("/"), who={})).status_code == 207
    other = await dav.client.get(collection + "other.docx")
    assert other.status_code == 401
    assert "another file" in other.text
    assert (await dav.client.get(collection + "nothing.docx")).status_code == 404
    assert "WWW-Authenticate" not in other.headers


async def test_a_forged_expired_or_misplaced_link_is_401_and_names_no_token(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    link = await dav.link(artifact_id)
    token = link.split("/")[3]
    forged = Capabilities("another secret of at least thirty-two bytes", clock=dav.api.clock)
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    for bad in (
        file_link("", forged, ws, artifact_id, "contract.docx"),
        link.replace("/w1/", "/w2/"),
        link.replace(token, token[:-2] + "xx"),
        link.replace(token, "not-a-token"),
    ):
        answer = await dav.client.get(bad)
        assert answer.status_code == 401, bad
        assert token not in answer.text
    dav.api.clock.advance(timedelta(hours=11))
    expired = await dav.client.get(link)
    assert expired.status_code == 401
    assert "expired" in expired.text


async def test_a_link_still_asks_the_workspace_so_hiding_and_refusals_hold(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    dav.api.hidden["user:bob"] = {artifact_id}
    hidden = await dav.client.get(await dav.link(artifact_id, who="bob"))
    assert hidden.status_code == 404
    token = dav.links.mint("t1", WORKSPACE, artifact_id, UserActor(id="mallory"))
    refused = await dav.client.get(f"/dav/t/{token}/workspaces/w1/contract.docx")
    assert refused.status_code == 403


async def test_a_link_is_for_a_person_and_a_secret_is_long_enough(dav: Dav) -> None:
    ws = await dav.api.workspaces.open(
        "t1",
        WORKSPACE,
        actor=AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice")),
    )
    with pytest.raises(Forbidden):
        file_link("", dav.links, ws, "art_1", "contract.docx")
    with pytest.raises(ValueError, match="32 bytes"):
        Capabilities("short")
    assert (
        Capabilities(SECRET.encode())
        .read(Capabilities(SECRET).mint("t", "w", "a", UserActor(id="u")))
        .actor.id
        == "u"
    )


async def test_links_without_capabilities_are_not_served(make_api: MakeApi) -> None:
    api = await make_api()
    app = build_app(api.files, api.workspaces)
    app.include_router(
        webdav_router(api.files, api.workspaces, resolve_actor=resolve_actor, challenge=None)
    )
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://files.test"
    ) as client:
        answer = await client.get("/dav/t/token/workspaces/w1/contract.docx")
        assert answer.status_code == 404
        nobody = await client.request("PROPFIND", "/dav/workspaces/w1/")
        assert nobody.status_code == 401
        assert "WWW-Authenticate" not in nobody.headers


def basic(user: str, password: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


async def check(user: str, password: str) -> tuple[str, Actor] | None:
    return ("t1", UserActor(id=user)) if password == "right" else None


def request(headers: dict[str, str], scheme: str = "https") -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "scheme": scheme, "headers": raw, "path": "/", "server": ("h", 443)}
    return Request(scope)


async def test_the_basic_hook_reads_a_password_over_tls_only() -> None:
    resolve = basic_actor(check)
    assert await resolve(request(basic("eddie", "right"))) == ("t1", UserActor(id="eddie"))
    for headers, scheme in (
        (basic("eddie", "right"), "http"),
        (basic("eddie", "wrong"), "https"),
        ({"authorization": "Bearer x"}, "https"),
        ({"authorization": "Basic %%%"}, "https"),
        ({"authorization": "Basic " + base64.b64encode(b"nocolon").decode()}, "https"),
        ({"authorization": "Basic " + base64.b64encode(b"\xff:x").decode()}, "https"),
    ):
        with pytest.raises(Unauthorized):
            await resolve(request(headers, scheme))
    loopback = basic_actor(check, require_tls=False)
    assert await loopback(request(basic("eddie", "right"), "http")) == ("t1", UserActor(id="eddie"))


def test_office_links_open_for_editing_or_read_only() -> None:
    url = "https://files.example/dav/t/tok/workspaces/w1/contract.docx"
    editing = office_links(url, may_edit=True)
    assert editing.word == f"ms-word:ofe|u|{url}"
    assert editing.libreoffice == f"vnd.libreoffice.command:ofe|u|{url}"
    viewing = office_links(url, may_edit=False)
    assert viewing.word == f"ms-word:ofv|u|{url}"
    assert viewing.libreoffice == f"vnd.libreoffice.command:ofv|u|{url}"
    assert not viewing.editing


# ─── the edges ────────────────────────────────────────────────────────────────


def test_each_refusal_answers_its_webdav_status() -> None:
    assert dav_status(ArtifactBusy("art_1", None)) == 423
    assert dav_status(FileTooLarge(10)) == 413
    assert dav_status(UnsafeFile("not_a_zip", "no")) == 422
    assert dav_status(NotFound("file", "x")) == 404
    assert dav_status(Forbidden("no")) == 403
    assert dav_status(InvalidState("ended")) == 409
    refused = MalformedXml("too_deep", "deep")
    assert dav_status(refused) == 400
    assert refused.payload()["reason"] == "too_deep"


async def test_names_without_an_extension_are_made_unique_too(dav: Dav) -> None:
    await dav.api.upload(name="notes")
    await dav.api.upload(name="Notes")
    listed = props(await propfind(dav, dav.url(), depth="1"))
    assert "/dav/workspaces/w1/Notes%20%282%29" in listed


async def test_times_are_the_logs_exact_at_any_age_or_fixed_when_it_is_refused(
    dav: Dav,
) -> None:
    first = await dav.api.upload()
    await dav.api.upload(name="other.docx")
    ws = await dav.api.ws()
    await longer_history(ws, first, 4)  # the head is made after the creation, in the log
    log = {
        (e.event.artifact_id, e.event.version): e.ts
        for e in await ws.read()
        if isinstance(e.event, ArtifactCreated | ArtifactChanged)
    }
    listed = props(await propfind(dav, dav.url(), depth="1"))
    href = "/dav/workspaces/w1/contract.docx"
    assert listed[href]["creationdate"].text == _second(log[first, 1])
    assert listed[href]["getlastmodified"].text == format_datetime(log[first, 4], usegmt=True)
    carol = props(await propfind(dav, dav.url("contract.docx"), who={"x-user": "carol"}))
    assert carol[href]["getlastmodified"].text == "Thu, 01 Jan 1970 00:00:00 GMT"


def test_a_token_whose_expiry_is_not_a_number_is_refused() -> None:
    links = Capabilities(SECRET)
    claims = {"aud": "dav", "sub": "u", "t": "t", "w": "w", "a": "a", "exp": "soon"}
    token = jwt.encode(claims, SECRET.encode(), algorithm="HS256")
    with pytest.raises(Unauthorized):
        links.read(token)


def _second(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("path", "value"), [("/content/sha256", "0" * 64), ("/content/size", 1)])
async def test_a_listing_of_a_file_whose_bytes_are_damaged_is_refused(
    dav: Dav, path: str, value: object
) -> None:
    doc = await dav.api.upload()
    ws = await dav.api.ws()
    patch = JsonPatch(ops=({"op": "replace", "path": path, "value": value},))
    await ws.commit(EditArtifact(artifact_id=doc, base_version=1, patch=patch))

    answer = await dav.client.request("PROPFIND", dav.url(), headers={**ALICE, "depth": "1"})

    assert answer.status_code == 409
