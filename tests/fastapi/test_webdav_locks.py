"""WebDAV locks and saves: LOCK is a check-out, PUT under it a save, UNLOCK its end (ADR-0018).

Through the app, on every database: a lock's token and lease (Word's hour, the bounds), a
refresh that keeps the token, a file held by someone else answered 423 with the lock discovery
(another person's lock, a check-out, an agent's edit), shared locks refused, saves that keep the
lock (applied, unchanged, proposed when the file moved on), the If header's conditions, UNLOCK
as a discard or a check-in, a PUT without a lock (ADR-0018), and every refusal leaving what was
stored untouched. Word's request sequence, as MS-WDV and sabre/dav's notes describe it, is the
contract test at the end.
"""

import random
import xml.etree.ElementTree as ET
from datetime import timedelta

import httpx2
import pytest
from artifactr.core import AgentActor, UserActor
from artifactr.workspace import Scope

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import AppCommand, Inspection, Source
from artifactr.files.core.errors import AppCrashed, AppFailure, AppTimeout
from artifactr.files.core.leases import ArtifactBusy, scope_of
from artifactr.files.fastapi.webdav import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT
from tests.documents import build_docx, package
from tests.fastapi.conftest import ALICE, BOB, RITA, WORKSPACE, Dav, MakeDav

D = "{DAV:}"
LOCKINFO = (
    b'<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:">'
    b"<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>"
    b"<D:owner><D:href>alice</D:href></D:owner></D:lockinfo>"
)
SHARED = LOCKINFO.replace(b"exclusive", b"shared")
MINE = build_docx(["A paragraph changed in the editor."])
MORE = build_docx(["A paragraph changed in the editor, twice."])
THEIRS = build_docx(["Someone else's paragraph."])
NAME = "contract.docx"


async def lock(
    dav: Dav,
    who: dict[str, str] = ALICE,
    lease: str | None = "Second-3600",
    body: bytes = LOCKINFO,
) -> httpx2.Response:
    headers = {**who} | ({} if lease is None else {"Timeout": lease})
    return await dav.client.request("LOCK", dav.url(NAME), content=body, headers=headers)


def token_of(answer: httpx2.Response) -> str:
    assert answer.status_code == 200, answer.text
    return answer.headers["Lock-Token"].strip("<>")


def discovery(answer: httpx2.Response) -> list[ET.Element]:
    return list(ET.fromstring(answer.content).iter(f"{D}activelock"))


async def put(
    dav: Dav, data: bytes, token: str | None, who: dict[str, str] = ALICE, **headers: str
) -> httpx2.Response:
    sent = {**who, **headers} | ({} if token is None else {"If": f"(<{token}>)"})
    return await dav.client.put(dav.url(NAME), content=data, headers=sent)


async def head(dav: Dav, artifact_id: str) -> tuple[int, str]:
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    number, manifest = await dav.api.files.manifest(ws, artifact_id)
    return number, manifest.content.sha256


async def revisions(dav: Dav, artifact_id: str) -> list[tuple[int, str]]:
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    return [(r.version, r.actor.participant) for r in await ws.revisions(artifact_id)]


# ─── LOCK ─────────────────────────────────────────────────────────────────────


async def test_a_lock_is_a_check_out_named_by_its_token_for_the_hour_word_asks(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    answer = await lock(dav)
    token = token_of(answer)
    assert token.startswith("opaquelocktoken:")
    (active,) = discovery(answer)
    assert active.findtext(f"{D}timeout") == "Second-3600"
    assert active.findtext(f"{D}locktoken/{D}href") == token
    assert active.find(f"{D}lockscope/{D}exclusive") is not None
    lease = await dav.api.client.get(dav.api.url(f"/{artifact_id}/lease"), headers=BOB)
    holder = lease.json()["lease"]["holder"]
    assert holder.startswith("checkout:co_")
    assert holder.endswith(":user:alice")
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.current_lock(ws, artifact_id) == token


@pytest.mark.parametrize(
    ("asked", "given"),
    [
        ("Second-5", MIN_TIMEOUT),
        ("Second-99999999", MAX_TIMEOUT),
        ("Infinite", DEFAULT_TIMEOUT),
        ("Infinite, Second-600", timedelta(seconds=600)),
        (None, DEFAULT_TIMEOUT),
        ("Eventually", DEFAULT_TIMEOUT),
    ],
)
async def test_a_lock_s_lease_is_the_timeout_asked_within_the_bounds(
    dav: Dav, asked: str | None, given: timedelta
) -> None:
    await dav.api.upload()
    (active,) = discovery(await lock(dav, lease=asked))
    assert active.findtext(f"{D}timeout") == f"Second-{int(given.total_seconds())}"


async def test_a_refresh_with_no_body_keeps_the_token_and_extends_the_lease(dav: Dav) -> None:
    await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-600"))
    dav.api.clock.advance(timedelta(seconds=500))
    refreshed = await dav.client.request(
        "LOCK", dav.url(NAME), headers={**ALICE, "If": f"(<{token}>)", "Timeout": "Second-600"}
    )
    assert refreshed.status_code == 200
    assert "Lock-Token" not in refreshed.headers
    (active,) = discovery(refreshed)
    assert active.findtext(f"{D}locktoken/{D}href") == token
    assert active.findtext(f"{D}timeout") == "Second-600"
    tagged = await dav.client.request(
        "LOCK",
        dav.url(NAME),
        headers={**ALICE, "If": f"<http://files.test{dav.url(NAME)}> (<{token}>)"},
    )
    assert tagged.status_code == 200
    no_if = await dav.client.request("LOCK", dav.url(NAME), headers=ALICE)
    assert no_if.status_code == 400
    wrong = await dav.client.request(
        "LOCK", dav.url(NAME), headers={**ALICE, "If": "(<opaquelocktoken:nothing>)"}
    )
    assert wrong.status_code == 412
    assert "lock-token-matches-request-uri" in wrong.text


async def test_a_file_someone_holds_is_423_with_the_lock_discovery(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    theirs = await lock(dav, who=BOB)
    assert theirs.status_code == 423
    assert "no-conflicting-lock" in theirs.text
    (active,) = discovery(theirs)
    assert "user:alice" in (active.findtext(f"{D}owner") or "")
    assert active.find(f"{D}locktoken") is None, "another's token is never shown"
    assert token not in theirs.text
    bob_checks_out = await dav.api.client.post(
        dav.api.url(f"/{artifact_id}/checkouts"), headers=BOB
    )
    assert bob_checks_out.status_code == 409
    agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="bob"))
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=agent)
    with pytest.raises(ArtifactBusy, match="user:alice"):
        await dav.api.files.edit(
            ws, artifact_id, base_version=1, commands=[AppCommand(command="caret.docEnd")]
        )
    seen = await dav.client.request(
        "PROPFIND",
        dav.url(NAME),
        content=b'<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>',
        headers={**BOB, "Depth": "0"},
    )
    assert token not in seen.text
    assert "user:alice" in seen.text
    own = await dav.client.request("PROPFIND", dav.url(NAME), headers={**ALICE, "Depth": "0"})
    assert token in own.text


async def test_a_person_s_check_out_or_an_agent_s_edit_holding_it_is_423_too(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    await dav.api.check_out(artifact_id, who=BOB)
    held = await lock(dav)
    assert held.status_code == 423
    assert "user:bob" in held.text
    unlocked = await put(dav, MINE, None, **{"If-Match": '"x"'})
    assert unlocked.status_code == 423


async def test_shared_locks_and_locks_on_the_collection_are_refused_with_the_reason(
    dav: Dav,
) -> None:
    await dav.api.upload()
    shared = await lock(dav, body=SHARED)
    assert shared.status_code == 412
    assert "one editor at a time" in shared.text
    collection = await dav.client.request("LOCK", dav.url(), content=LOCKINFO, headers=ALICE)
    assert collection.status_code == 405
    bad = await lock(dav, body=b"<D:propfind xmlns:D='DAV:'/>")
    assert bad.status_code == 400


# ─── PUT and UNLOCK ───────────────────────────────────────────────────────────


async def test_puts_under_the_lock_are_saves_that_keep_it(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    first = await put(dav, MINE, token)
    assert first.status_code == 204, first.text
    assert first.headers["X-Artifactr-Outcome"] == "applied"
    version, sha = await head(dav, artifact_id)
    assert version == 2
    assert first.headers["ETag"] == f'"{sha}"'
    again = await put(dav, MINE, token)
    assert again.headers["X-Artifactr-Outcome"] == "unchanged"
    second = await put(dav, MORE, token)
    assert second.headers["X-Artifactr-Outcome"] == "applied"
    assert await revisions(dav, artifact_id) == [
        (1, "user:alice"),
        (2, "user:alice"),
        (3, "user:alice"),
    ]
    got = await dav.client.get(dav.url(NAME), headers=ALICE)
    assert got.content == MORE
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.current_lock(ws, artifact_id) == token
    ended = await unlock(dav, token)
    assert ended.status_code == 204
    assert await dav.api.files.lease(ws, artifact_id) is None
    assert await dav.api.files.checkouts.open_on(scope_of(ws), artifact_id) == []


async def unlock(dav: Dav, token: str, who: dict[str, str] = ALICE) -> httpx2.Response:
    headers = {**who, "Lock-Token": f"<{token}>"}
    return await dav.client.request("UNLOCK", dav.url(NAME), headers=headers)


async def ended_as(dav: Dav, artifact_id: str) -> str:
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    (record,) = list(await dav.api.files.checkouts.open_on(scope_of(ws), artifact_id)) or [None]
    return "open" if record is not None else "ended"


async def test_unlock_ends_the_session_and_names_its_lock_exactly(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    missing = await dav.client.request("UNLOCK", dav.url(NAME), headers=ALICE)
    assert missing.status_code == 400
    wrong = await unlock(dav, "opaquelocktoken:other")
    assert wrong.status_code == 409
    assert "lock-token-matches-request-uri" in wrong.text
    assert (await unlock(dav, token)).status_code == 204
    assert (await unlock(dav, token)).status_code == 409
    assert await ended_as(dav, artifact_id) == "ended"
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
    relocked = await lock(dav, who=BOB)
    assert relocked.status_code == 200


async def test_a_put_on_a_locked_file_names_the_lock_or_is_refused(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    without = await put(dav, MINE, None)
    assert without.status_code == 423
    assert "lock-token-submitted" in without.text
    wrong = await put(dav, MINE, "opaquelocktoken:other")
    assert wrong.status_code == 412
    bob = await put(dav, MINE, token, who=BOB)
    assert bob.status_code == 403, "a lock's token is its taker's (RFC 4918, 6.4)"
    negated = await dav.client.put(
        dav.url(NAME),
        content=MINE,
        headers={**ALICE, "If": f"(Not <DAV:no-lock> <{token}>)"},
    )
    assert negated.status_code == 204
    etag = (await dav.client.head(dav.url(NAME), headers=ALICE)).headers["ETag"]
    with_tag = await dav.client.put(
        dav.url(NAME), content=MORE, headers={**ALICE, "If": f"(<{token}> [{etag}])"}
    )
    assert with_tag.status_code == 204
    stale_tag = await dav.client.put(
        dav.url(NAME), content=MINE, headers={**ALICE, "If": f"(<{token}> [{etag}])"}
    )
    assert stale_tag.status_code == 412
    other_resource = await dav.client.put(
        dav.url(NAME),
        content=MINE,
        headers={**ALICE, "If": f"<http://files.test/elsewhere> (<{token}>)"},
    )
    assert other_resource.status_code == 204
    for broken in ("(<a>", "<a> <b>", "((<a>))", "junk", "Not (<a>)"):
        answer = await dav.client.put(dav.url(NAME), content=MINE, headers={**ALICE, "If": broken})
        assert answer.status_code == 400, broken
    del artifact_id


async def test_litmus_s_complex_conditions_hold_or_fail_when_sent_whole(dav: Dav) -> None:
    # litmus cuts these headers at 199 bytes, mid-list with our 64-digit ETags (400): whole,
    # they hold (or, with a corrupt ETag, fail with 412) as RFC 4918 says.
    await dav.api.upload()
    token = token_of(await lock(dav))
    etag = (await dav.client.head(dav.url(NAME), headers=ALICE)).headers["ETag"]
    complex_if = f"(<{token}> [{etag}]) (Not <DAV:no-lock> [{etag}])"
    assert len(complex_if) > 199
    held = await dav.client.put(dav.url(NAME), content=MINE, headers={**ALICE, "If": complex_if})
    assert held.status_code == 204
    etag = held.headers["ETag"]
    corrupt = etag[:-3] + chr(ord(etag[-3]) + 1) + etag[-2:]
    failed = await dav.client.put(
        dav.url(NAME),
        content=MORE,
        headers={**ALICE, "If": f"(<{token}> [{corrupt}]) (Not <DAV:no-lock> [{corrupt}])"},
    )
    assert failed.status_code == 412
    cut = await dav.client.put(
        dav.url(NAME), content=MORE, headers={**ALICE, "If": complex_if[:199]}
    )
    assert cut.status_code == 400


async def test_a_save_after_someone_else_s_revision_is_kept_as_a_proposal(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    dav.api.clock.advance(timedelta(minutes=2))  # the lease lapses, and Bob checks in
    checkout = await dav.api.check_out(artifact_id, who=BOB)
    theirs = await dav.api.check_in(artifact_id, checkout["id"], THEIRS, who=BOB)
    assert theirs.json()["status"] == "applied"
    saved = await put(dav, MINE, token)
    assert saved.status_code == 204, saved.text
    assert saved.headers["X-Artifactr-Outcome"] == "proposed"
    assert saved.headers["X-Artifactr-Proposal"].startswith("prp_")
    assert "ETag" not in saved.headers
    assert (await dav.client.get(dav.url(NAME), headers=ALICE)).content == THEIRS
    assert (await unlock(dav, token)).status_code == 204


async def test_a_lapsed_lock_taken_by_another_is_refused_and_a_refresh_fails(dav: Dav) -> None:
    await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    dav.api.clock.advance(timedelta(minutes=2))
    token_of(await lock(dav, who=BOB))
    refused = await put(dav, MINE, token)
    assert refused.status_code == 412
    refresh = await dav.client.request(
        "LOCK", dav.url(NAME), headers={**ALICE, "If": f"(<{token}>)"}
    )
    assert refresh.status_code == 412


async def test_a_lock_s_token_is_used_by_the_person_who_took_it_only(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    refresh = {"If": f"(<{token}>)"}
    for answer in (
        await put(dav, MINE, token, who=BOB),
        await dav.client.request("LOCK", dav.url(NAME), headers={**BOB, **refresh}),
        await unlock(dav, token, who=BOB),
    ):
        assert answer.status_code == 403, answer.text
        assert "someone else's" in answer.text
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.current_lock(ws, artifact_id) == token
    # Lapsed, the session is still Alice's to take up again, never Bob's.
    dav.api.clock.advance(timedelta(minutes=2))
    assert (await put(dav, MINE, token, who=BOB)).status_code == 403
    assert await dav.api.files.lease(ws, artifact_id) is None
    saved = await put(dav, MINE, token)
    assert saved.headers["X-Artifactr-Outcome"] == "applied"
    assert await revisions(dav, artifact_id) == [(1, "user:alice"), (2, "user:alice")]


async def test_unlock_ends_the_person_s_own_session_whose_lease_lapsed(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    assert (await put(dav, MINE, token)).status_code == 204
    dav.api.clock.advance(timedelta(minutes=2))  # LibreOffice closes after a long sleep
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    (session,) = await dav.api.files.open_checkouts(ws, artifact_id)
    assert (await unlock(dav, token)).status_code == 204
    ended = await dav.api.files.checkouts.get(scope_of(ws), session.id)
    assert ended is not None
    assert ended.state == "checked_in"
    assert await dav.api.files.lease(ws, artifact_id) is None
    assert (await unlock(dav, token)).status_code == 409


async def test_unlock_of_a_lapsed_session_whose_file_someone_took_is_423(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    dav.api.clock.advance(timedelta(minutes=2))
    await dav.api.check_out(artifact_id, who=BOB)
    held = await unlock(dav, token)
    assert held.status_code == 423
    assert "user:bob" in held.text
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    (session,) = await dav.api.files.open_checkouts(ws, artifact_id)
    assert session.lock == token, "the session stays, for a later lock to end"


# ─── PUT without a lock, and bad files ────────────────────────────────────────


async def test_a_put_without_a_lock_needs_if_match_and_never_overwrites_a_moved_file(
    dav: Dav,
) -> None:
    artifact_id = await dav.api.upload()
    bare = await put(dav, MINE, None)
    assert bare.status_code == 428
    assert "If-Match" in bare.text
    etag = (await dav.client.head(dav.url(NAME), headers=ALICE)).headers["ETag"]
    stale = await put(dav, MINE, None, **{"If-Match": '"0000"'})
    assert stale.status_code == 412
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
    saved = await put(dav, MINE, None, **{"If-Match": etag})
    assert saved.status_code == 204
    assert saved.headers["X-Artifactr-Outcome"] == "applied"
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.lease(ws, artifact_id) is None
    assert await ended_as(dav, artifact_id) == "ended"
    again = await put(dav, MINE, None, **{"If-Match": etag})
    assert again.status_code == 412


async def test_a_put_over_the_limit_or_hostile_is_refused_and_stores_nothing(
    make_dav: MakeDav,
) -> None:
    dav = await make_dav(max_size=len(MINE) + 10)
    artifact_id = await dav.api.upload(build_docx(["small"]))
    token = token_of(await lock(dav))
    big = await put(dav, MINE + b"x" * 100, token)
    assert big.status_code == 413
    bomb = await put(dav, b"PK\x03\x04 not a zip at all", token)
    assert bomb.status_code == 422
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.current_lock(ws, artifact_id) == token


# ─── Word's sequence ──────────────────────────────────────────────────────────

WORD = {
    **ALICE,
    "User-Agent": "Microsoft Office Word 2014",
    "X-Office-Major-Version": "16",
    "Translate": "f",
}
"""What Word sends with each request, as MS-WDV and sabre/dav's notes on Office describe it."""

WORD_LOCK = (
    b'<?xml version="1.0" encoding="utf-8" ?><D:lockinfo xmlns:D="DAV:">'
    b"<D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>"
    b"<D:owner><D:href>CONTOSO\\alice</D:href></D:owner></D:lockinfo>"
)


async def test_word_s_request_sequence_opens_saves_refreshes_and_closes(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    url = dav.url(NAME)
    client = dav.client
    # Word asks the folder first, with no credentials, then the server's root.
    assert (await client.options(dav.url(), headers={"Translate": "f"})).headers["DAV"] == "1, 2"
    assert (await client.options("/dav/")).status_code == 200
    folder = await client.request("PROPFIND", dav.url(), headers={**WORD, "Depth": "1"})
    assert folder.status_code == 207
    assert (await client.head(url, headers=WORD)).status_code == 200
    locked = await client.request(
        "LOCK", url, content=WORD_LOCK, headers={**WORD, "Timeout": "Second-3600"}
    )
    token = token_of(locked)
    assert (await client.get(url, headers=WORD)).status_code == 200
    props = await client.request("PROPFIND", url, headers={**WORD, "Depth": "0"})
    assert token in props.text
    # Word tags its If header with the file's absolute URL.
    tagged = {**WORD, "If": f"<http://files.test{url}> (<{token}>)"}
    saved = await client.put(url, content=MINE, headers=tagged)
    assert saved.status_code == 204
    assert saved.headers["X-Artifactr-Outcome"] == "applied"
    win32 = await client.request(
        "PROPPATCH",
        url,
        headers=tagged,
        content=(
            b'<?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:"'
            b' xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop>'
            b"<Z:Win32LastModifiedTime>Wed, 02 Dec 2026 10:00:00 GMT</Z:Win32LastModifiedTime>"
            b"<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes>"
            b"</D:prop></D:set></D:propertyupdate>"
        ),
    )
    assert "HTTP/1.1 200 OK" in win32.text
    dav.api.clock.advance(timedelta(minutes=50))
    refreshed = await client.request(
        "LOCK", url, headers={**WORD, "If": f"(<{token}>)", "Timeout": "Second-3600"}
    )
    (active,) = discovery(refreshed)
    assert active.findtext(f"{D}locktoken/{D}href") == token
    assert active.findtext(f"{D}timeout") == "Second-3600"
    again = await client.put(url, content=MORE, headers=tagged)
    assert again.headers["X-Artifactr-Outcome"] == "applied"
    closed = await client.request("UNLOCK", url, headers={**WORD, "Lock-Token": f"<{token}>"})
    assert closed.status_code == 204
    assert await revisions(dav, artifact_id) == [
        (1, "user:alice"),
        (2, "user:alice"),
        (3, "user:alice"),
    ]
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert await dav.api.files.lease(ws, artifact_id) is None


async def test_word_opens_read_only_when_someone_else_holds_the_file(dav: Dav) -> None:
    await dav.api.upload()
    token_of(await lock(dav, who=BOB))
    refused = await dav.client.request(
        "LOCK", dav.url(NAME), content=WORD_LOCK, headers={**WORD, "Timeout": "Second-3600"}
    )
    assert refused.status_code == 423
    assert (await dav.client.get(dav.url(NAME), headers=WORD)).status_code == 200


# ─── the edges ────────────────────────────────────────────────────────────────


class Failing(FakeApp):
    """FakeApp, until told to fail the way an app fails."""

    failure: AppFailure | None = None

    async def inspect(self, source: Source, *, deadline: float = 30.0) -> Inspection:
        if self.failure is not None:
            raise self.failure
        return await super().inspect(source, deadline=deadline)


@pytest.mark.parametrize(
    ("failure", "status"), [(AppTimeout("slow"), 504), (AppCrashed("died"), 502)]
)
async def test_an_app_that_fails_on_a_save_is_a_gateway_error_and_stores_nothing(
    make_dav: MakeDav, failure: AppFailure, status: int
) -> None:
    app = Failing()
    dav = await make_dav(app=app)
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    app.failure = failure
    answer = await put(dav, MINE, token)
    assert answer.status_code == status
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]


async def test_a_lapsed_session_whose_file_someone_checked_out_is_423_on_save(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav, lease="Second-60"))
    dav.api.clock.advance(timedelta(minutes=2))
    await dav.api.check_out(artifact_id, who=BOB)
    refused = await put(dav, MINE, token)
    assert refused.status_code == 423
    assert "user:bob" in refused.text


async def test_an_agent_s_edit_or_a_vanished_check_out_shows_in_the_lock_discovery(
    dav: Dav,
) -> None:
    artifact_id = await dav.api.upload()
    scope = Scope(tenant_id="t1", workspace_id=WORKSPACE)
    await dav.api.files.leases.acquire(scope, artifact_id, "edit:run_1", timedelta(seconds=45))
    agent = await lock(dav)
    assert agent.status_code == 423
    assert "an agent's edit" in agent.text
    await dav.api.files.leases.release(scope, artifact_id, "edit:run_1")
    await dav.api.files.leases.acquire(
        scope, artifact_id, "checkout:co_gone:user:bob", timedelta(minutes=5)
    )
    gone = await lock(dav)
    assert gone.status_code == 423
    assert "user:bob" in gone.text


async def test_a_large_file_is_read_back_in_many_chunks(dav: Dav) -> None:
    noise = random.Random(0).randbytes(3 << 20)
    data = package("", extra={"word/media/noise.bin": noise})
    await dav.api.upload(data)
    got = await dav.client.get(dav.url(NAME), headers=ALICE)
    assert got.content == data


# ─── who may do what to a lock (issue 38) ─────────────────────────────────────


async def test_a_viewer_who_knows_the_token_unlocks_refreshes_and_saves_nothing(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    token = token_of(await lock(dav))
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    before = await dav.api.files.lease(ws, artifact_id)
    refresh = {"If": f"(<{token}>)", "Timeout": "Second-60"}
    _, sha = await head(dav, artifact_id)
    for answer in (
        await unlock(dav, token, who=RITA),
        await dav.client.request("LOCK", dav.url(NAME), headers={**RITA, **refresh}),
        await put(dav, MINE, token, who=RITA),
        await put(dav, MINE, None, who=RITA, **{"If-Match": f'"{sha}"'}),
        await lock(dav, who=RITA),
    ):
        assert answer.status_code == 403, answer.text
        assert token not in answer.text
    assert await dav.api.files.lease(ws, artifact_id) == before
    assert await dav.api.files.current_lock(ws, artifact_id) == token
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
    assert (await put(dav, MINE, token)).headers["X-Artifactr-Outcome"] == "applied"


async def test_webdav_never_acts_under_a_wopi_lock_even_its_taker_s(dav: Dav) -> None:
    artifact_id = await dav.api.upload()
    ws = await dav.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    await dav.api.files.lock(ws, artifact_id, lock="W1")
    assert (await unlock(dav, "W1")).status_code == 409
    refreshed = await dav.client.request("LOCK", dav.url(NAME), headers={**ALICE, "If": "(<W1>)"})
    assert refreshed.status_code == 412
    assert (await put(dav, MINE, "W1")).status_code == 412  # no WebDAV lock is named W1
    saved = await put(dav, MINE, None, **{"If-Match": f'"{(await head(dav, artifact_id))[1]}"'})
    assert saved.status_code == 423
    assert "W1" not in saved.text
    assert await dav.api.files.current_lock(ws, artifact_id, personal=False) == "W1"
    assert await revisions(dav, artifact_id) == [(1, "user:alice")]
