"""The WOPI host on SQLite and PostgreSQL: what an editor sees, operation by operation.

CheckFileInfo's properties (none null), GetFile's bytes, locks as check-outs (409 with the
lock that holds the file), PutFile as a save (a revision, unchanged, or a proposal), Collabora's
timestamp and flags, and every refusal: tokens (401), hidden (404), a viewer (403), sizes (413),
hostile zips, bad locks and unknown overrides (400), and unsupported operations (501).
"""

import io
import logging
import os
import zipfile
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from artifactr import UserActor
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.blobs import CHUNK_SIZE
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.wopi import (
    editor_launch,
    stamped_version,
    version_stamp,
    wopi_src,
)
from artifactr.files.fastapi.wopi_discovery import DiscoveryCache
from artifactr.files.fastapi.wopi_tokens import (
    ISSUER,
    AccessTokenRefused,
    mint_access_token,
    read_access_token,
)
from tests.wopi import (
    AGENT,
    CAROL,
    EDDIE,
    ERIN,
    MALLORY,
    RITA,
    SECRET,
    TENANT,
    WORKSPACE,
    Host,
    build_host,
    document,
    in_process,
)


@pytest.fixture
async def host(engine: AsyncEngine) -> AsyncIterator[Host]:
    async with in_process(await build_host(engine)) as made:
        yield made


DISCOVERY = b"""<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery><net-zone name="external-https">
<app name="application/vnd.openxmlformats-officedocument.wordprocessingml.document">
<action default="true" ext="" name="edit" urlsrc="https://cool.test/browser/1/cool.html?"/>
</app>
<app name="writer"><action ext="odt" name="edit" urlsrc="https://cool.test/browser/1/cool.html?"/>
<action ext="docx" name="view" urlsrc="https://cool.test/browser/1/cool.html?&lt;ui=UI_LLCC&amp;&gt;"/>
</app></net-zone></wopi-discovery>"""


SUGGESTION = AppCommand(command="caret.docEnd")


def edited(data: bytes, words: str) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "word/document.xml":
                content = content.replace(b"Draft", words.encode())
            target.writestr(info, content)
    return out.getvalue()


def with_noise(data: bytes, size: int) -> bytes:
    """A package with a stored part of random bytes: large, and never smaller zipped."""
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_STORED) as package:
        package.writestr("word/media/noise.bin", os.urandom(size))
    return out.getvalue()


async def head_bytes(host: Host, artifact_id: str) -> bytes:
    response = await host.call(artifact_id, contents=True)
    assert response.status_code == 200
    return response.content


# ─── CheckFileInfo and GetFile ────────────────────────────────────────────────


async def test_check_file_info_names_the_file_the_person_and_what_they_may_do(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data, name="validator.wopitest")
    response = await host.call(artifact_id)
    assert response.status_code == 200
    info = response.json()
    assert None not in info.values()
    assert info["BaseFileName"] == "validator.wopitest"
    assert info["FileExtension"] == ".wopitest"
    assert (info["Size"], info["Version"], info["UserId"]) == (len(data), "1", "user:eddie")
    assert (info["UserFriendlyName"], info["OwnerId"]) == ("Eddie", "workspace:w1")
    assert info["UserCanWrite"] is True
    assert info["ReadOnly"] is False
    for supported in ("SupportsLocks", "SupportsGetLock", "SupportsUpdate"):
        assert info[supported] is True
    assert info["SupportsExtendedLockLength"] is True
    assert info["UserCanNotWriteRelative"] is True
    assert info["LastModifiedTime"] == await made_stamp(host, artifact_id, 1)
    assert info["PostMessageOrigin"] == "https://cool.test"
    viewer = (await host.call(artifact_id, person=RITA)).json()
    assert (viewer["UserCanWrite"], viewer["ReadOnly"]) == (False, True)
    host.switch.set(TENANT, WORKSPACE, host.files.key, enabled=False)
    assert (await host.call(artifact_id)).json()["UserCanWrite"] is False


async def test_get_file_serves_the_head_with_its_version(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    response = await host.call(artifact_id, contents=True)
    assert response.status_code == 200
    assert response.content == data
    assert response.headers["X-WOPI-ItemVersion"] == "1"
    too_small = await host.call(artifact_id, contents=True, X_WOPI_MaxExpectedSize="10")
    assert too_small.status_code == 412


async def test_a_name_without_an_extension_has_no_file_extension(host: Host) -> None:
    artifact_id = await host.upload(name="contract")
    assert "FileExtension" not in (await host.call(artifact_id)).json()


# ─── tokens and access ────────────────────────────────────────────────────────


async def test_an_expired_forged_malformed_or_other_file_token_is_401(host: Host) -> None:
    artifact_id = await host.upload()
    other = await host.upload()
    expired = host.token(artifact_id, lifetime=timedelta(minutes=1))
    host.clock.advance(timedelta(minutes=2))
    forged = mint_access_token(
        "another secret, also of at least 32 bytes",
        tenant_id=TENANT,
        workspace_id=WORKSPACE,
        artifact_id=artifact_id,
        person=EDDIE,
        clock=host.clock,
    ).token
    for token in (expired, forged, "not-a-token", "", host.token(other), "x" * 5000):
        response = await host.call(artifact_id, token=token)
        assert response.status_code == 401, token
        assert token == "" or token not in response.text
        assert response.json()["detail"]["type"] == "access_token_refused"


async def test_a_hidden_file_is_missing_and_a_stranger_is_refused(host: Host) -> None:
    artifact_id = await host.upload()
    host.hidden["user:erin"] = {artifact_id}
    hidden = await host.call(artifact_id, person=ERIN)
    missing_id = "art_" + "0" * 26
    missing = await host.call(missing_id, person=ERIN)
    assert (hidden.status_code, missing.status_code) == (404, 404)
    assert hidden.json()["detail"]["type"] == missing.json()["detail"]["type"]
    assert (await host.call(artifact_id, person=MALLORY)).status_code == 403


async def test_a_viewer_is_refused_lock_and_put_file(host: Host) -> None:
    artifact_id = await host.upload()
    refused = await host.call(artifact_id, "LOCK", person=RITA, X_WOPI_Lock="L1")
    assert refused.status_code == 403
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")).status_code == 200
    put = await host.call(
        artifact_id, "PUT", contents=True, person=RITA, body=document("Rita"), X_WOPI_Lock="L1"
    )
    assert put.status_code == 403
    assert (await host.call(artifact_id)).json()["Version"] == "1"


# ─── locks ────────────────────────────────────────────────────────────────────


async def test_a_lock_is_a_check_out_and_a_mismatch_answers_the_lock(host: Host) -> None:
    artifact_id = await host.upload()
    locked = await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    assert (locked.status_code, locked.headers["X-WOPI-ItemVersion"]) == (200, "1")
    lease = await host.http.get(
        f"/workspaces/{WORKSPACE}/files/{artifact_id}/lease", headers={"x-user": "rita"}
    )
    assert lease.json()["lease"]["holder"].endswith(":user:eddie")
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == "L1"
    for override, headers in (
        ("LOCK", {"X_WOPI_Lock": "L2"}),
        ("REFRESH_LOCK", {"X_WOPI_Lock": "L2"}),
        ("UNLOCK", {"X_WOPI_Lock": "L2"}),
        ("LOCK", {"X_WOPI_Lock": "L3", "X_WOPI_OldLock": "L2"}),
    ):
        response = await host.call(artifact_id, override, person=ERIN, **headers)
        assert response.status_code == 409, override
        assert response.headers["X-WOPI-Lock"] == "L1"
        assert "held by" in response.headers["X-WOPI-LockFailureReason"]
    assert (await host.call(artifact_id, "REFRESH_LOCK", X_WOPI_Lock="L1")).status_code == 200
    relocked = await host.call(artifact_id, "LOCK", X_WOPI_Lock="L2", X_WOPI_OldLock="L1")
    assert relocked.status_code == 200
    assert (await host.call(artifact_id, "UNLOCK", X_WOPI_Lock="L2")).status_code == 200
    unlocked = await host.call(artifact_id, "UNLOCK", X_WOPI_Lock="L2")
    assert (unlocked.status_code, unlocked.headers["X-WOPI-Lock"]) == (409, "")
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == ""


async def test_an_agent_s_edit_is_busy_while_an_editor_holds_the_lock(host: Host) -> None:
    artifact_id = await host.upload()
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    with pytest.raises(ArtifactBusy) as caught:
        await host.files.edit(
            await host.ws(AGENT), artifact_id, base_version=1, commands=[SUGGESTION]
        )
    assert str(caught.value.details()["holder"]).endswith(":user:eddie")
    assert caught.value.details()["until"]


async def test_a_person_s_check_out_makes_a_lock_busy_with_no_lock(host: Host) -> None:
    artifact_id = await host.upload()
    checkout = await host.http.post(
        f"/workspaces/{WORKSPACE}/files/{artifact_id}/checkouts", headers={"x-user": "erin"}
    )
    assert checkout.status_code == 200
    busy = await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    assert (busy.status_code, busy.headers["X-WOPI-Lock"]) == (409, "")
    assert "user:erin" in busy.headers["X-WOPI-LockFailureReason"]


async def test_lock_strings_up_to_1024_ascii_characters_and_bad_requests(host: Host) -> None:
    artifact_id = await host.upload()
    longest = "L" * 1024
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock=longest)).status_code == 200
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == longest
    too_long = await host.call(artifact_id, "LOCK", X_WOPI_Lock="L" * 1025)
    assert too_long.status_code == 400
    assert too_long.json()["detail"]["errors"][0]["type"] == "too_long"
    assert (await host.call(artifact_id, "LOCK")).status_code == 400  # no X-WOPI-Lock
    unknown = await host.call(artifact_id, "TELEPORT", X_WOPI_Lock=longest)
    assert (unknown.status_code, unknown.json()["detail"]["type"]) == (400, "unknown_override")
    for unsupported in ("PUT_RELATIVE", "RENAME_FILE", "DELETE", "PUT_USER_INFO"):
        assert (await host.call(artifact_id, unsupported)).status_code == 501
    wrong = await host.call(artifact_id, "LOCK", contents=True, X_WOPI_Lock=longest)
    assert wrong.status_code == 400
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == longest


SECOND = timedelta(seconds=1)


# ─── PutFile ──────────────────────────────────────────────────────────────────


async def test_put_file_under_the_lock_is_a_revision_and_the_lock_stays(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    first = edited(data, "First")
    saved = await host.call(artifact_id, "PUT", contents=True, body=first, X_WOPI_Lock="L1")
    assert saved.status_code == 200, saved.text
    assert saved.headers["X-WOPI-ItemVersion"] == "2"
    assert saved.json() == {"LastModifiedTime": await made_stamp(host, artifact_id, 2)}
    again = await host.call(artifact_id, "PUT", contents=True, body=first, X_WOPI_Lock="L1")
    assert (again.status_code, again.headers["X-WOPI-ItemVersion"]) == (200, "2")
    second = edited(data, "Second")
    saved = await host.call(artifact_id, "PUT", contents=True, body=second, X_WOPI_Lock="L1")
    assert saved.headers["X-WOPI-ItemVersion"] == "3"
    assert await head_bytes(host, artifact_id) == second
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == "L1"
    unlocked = await host.call(artifact_id, "UNLOCK", X_WOPI_Lock="L1")
    assert unlocked.headers["X-WOPI-ItemVersion"] == "3"


async def test_put_file_without_the_lock_is_409_and_stores_nothing(host: Host) -> None:
    artifact_id = await host.upload()
    body = document("Unlocked")
    unlocked = await host.call(artifact_id, "PUT", contents=True, body=body)
    assert (unlocked.status_code, unlocked.headers["X-WOPI-Lock"]) == (409, "")
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    unlocked = await host.call(artifact_id, "PUT", contents=True, body=body)
    assert (unlocked.status_code, unlocked.headers["X-WOPI-Lock"]) == (409, "L1")
    wrong = await host.call(artifact_id, "PUT", contents=True, body=body, X_WOPI_Lock="L2")
    assert (wrong.status_code, wrong.headers["X-WOPI-Lock"]) == (409, "L1")
    assert (await host.call(artifact_id)).json()["Version"] == "1"


async def test_put_file_over_the_limit_is_413_and_a_hostile_zip_is_refused(
    engine: AsyncEngine,
) -> None:
    data = document("Draft")
    async with in_process(await build_host(engine, max_size=len(data) + 100)) as host:
        artifact_id = await host.upload(data)
        await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
        large = data + b"\0" * 200
        declared = await host.call(artifact_id, "PUT", contents=True, body=large, X_WOPI_Lock="L1")
        assert declared.status_code == 413

        async def streamed() -> AsyncIterator[bytes]:
            yield large

        chunked = await host.http.post(
            f"/wopi/files/{artifact_id}/contents",
            params={"access_token": host.token(artifact_id)},
            headers={"X-WOPI-Override": "PUT", "X-WOPI-Lock": "L1"},
            content=streamed(),
        )
        assert chunked.status_code == 413
        hostile = await host.call(
            artifact_id, "PUT", contents=True, body=b"PK\x03\x04 cut short", X_WOPI_Lock="L1"
        )
        assert hostile.status_code == 422
        assert hostile.json()["detail"]["type"] == "unsafe_file"
        assert await head_bytes(host, artifact_id) == data
        assert (await host.call(artifact_id)).json()["Version"] == "1"


async def test_collabora_s_timestamp_keeps_a_save_after_another_s_revision_as_a_proposal(
    host: Host,
) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    loaded = (await host.call(artifact_id)).json()["LastModifiedTime"]
    # Erin checks the file in through the files router before Collabora locks it.
    files = f"/workspaces/{WORKSPACE}/files/{artifact_id}"
    checkout = (await host.http.post(f"{files}/checkouts", headers={"x-user": "erin"})).json()
    theirs = edited(data, "Erin's")
    checked_in = await host.http.post(
        f"{files}/checkouts/{checkout['id']}/check-in", content=theirs, headers={"x-user": "erin"}
    )
    assert checked_in.status_code == 200
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    mine = edited(data, "Eddie's")
    conflict = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=mine,
        X_WOPI_Lock="L1",
        X_COOL_WOPI_Timestamp=loaded,
        X_COOL_WOPI_IsAutosave="true",
    )
    assert conflict.status_code == 409
    assert conflict.json()["COOLStatusCode"] == 1010
    proposal_id = conflict.json()["proposal_id"]
    assert await head_bytes(host, artifact_id) == theirs
    ws = await host.ws(ERIN)
    proposal = await ws.proposal(proposal_id)
    assert proposal.change.summary == "saved in the editor (autosave)"
    # Reloaded, it saves on the head; the LOOL twin of the header says the same.
    fresh = (await host.call(artifact_id)).json()["LastModifiedTime"]
    await host.call(artifact_id, "UNLOCK", X_WOPI_Lock="L1")
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L2")
    saved = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=edited(data, "Both"),
        X_WOPI_Lock="L2",
        X_LOOL_WOPI_Timestamp=fresh,
        X_LOOL_WOPI_IsExitSave="true",
        X_LOOL_WOPI_IsModifiedByUser="false",
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["LastModifiedTime"] == await made_stamp(host, artifact_id, 3)
    assert loaded < fresh < saved.json()["LastModifiedTime"]  # strictly increasing, as Collabora


def test_a_version_stamp_reads_back_as_its_version_and_anything_else_as_none() -> None:
    made = datetime(2026, 12, 4, 18, 0, 5, 700_000, tzinfo=UTC)
    assert version_stamp(7, made) == "2026-12-04T18:00:05.000007Z"  # the second, then version
    assert version_stamp(7) == "2000-01-01T00:00:07.000007Z"  # no time: the old stamp's second
    assert version_stamp(7, made) < version_stamp(8, made) < version_stamp(9, made + SECOND)
    for version in (1, 7, 999_999):
        assert stamped_version(version_stamp(version, made)) == version
    for stamp in ("yesterday", "2000-01-01T00:00:07", "2000-01-01T00:00:07Z"):
        assert stamped_version(stamp) == 0


async def made_stamp(host: Host, artifact_id: str, version: int) -> str:
    """Return the stamp of when the log says the version was made."""
    made = await host.files.history.made(await host.ws(EDDIE), {artifact_id: version})
    return version_stamp(version, made[artifact_id][1])


async def test_last_modified_time_is_when_the_version_was_made(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    first = (await host.call(artifact_id)).json()["LastModifiedTime"]
    ws = await host.ws(EDDIE)
    created, _ = (await host.files.history.made(ws, {artifact_id: 1}))[artifact_id]
    assert datetime.fromisoformat(first).replace(microsecond=0) == created.replace(microsecond=0)
    assert stamped_version(first) == 1
    # Someone who may not read the workspace's log is given the version's stamp without a time.
    assert (await host.call(artifact_id, person=CAROL)).json()["LastModifiedTime"] == (
        version_stamp(1)
    )


# ─── the portal's editor ──────────────────────────────────────────────────────


async def test_the_portal_gets_no_editor_without_discovery(host: Host) -> None:
    artifact_id = await host.upload()
    ws = await host.ws()
    launch = await editor_launch(host.settings, host.files, ws, artifact_id, base_url="http://h")
    assert launch is None


async def test_the_portal_gets_the_edit_or_view_action_and_a_token_for_the_person(
    engine: AsyncEngine,
) -> None:
    async def fetch(url: str) -> bytes:
        assert url == "https://cool.test/hosting/discovery"
        return DISCOVERY

    cache = DiscoveryCache("https://cool.test/hosting/discovery", fetch=fetch)
    async with in_process(await build_host(engine, discovery=cache)) as host:
        artifact_id = await host.upload()
        ws = await host.ws()
        base = "http://127.0.0.1:8000"
        launch = await editor_launch(host.settings, host.files, ws, artifact_id, base_url=base)
        assert launch is not None
        source = wopi_src(base, artifact_id).replace(":", "%3A").replace("/", "%2F")
        assert launch.action_url == f"https://cool.test/browser/1/cool.html?WOPISrc={source}"
        assert launch.action == "edit"
        assert set(launch.fields) == {"access_token", "access_token_ttl"}
        assert int(launch.fields["access_token_ttl"]) > 0
        viewer = await editor_launch(
            host.settings, host.files, await host.ws(RITA), artifact_id, base_url=base
        )
        assert viewer is not None
        assert viewer.action == "view"
        assert viewer.action_url.startswith("https://cool.test/browser/1/cool.html?WOPISrc=")
        agent = await host.workspaces.open(TENANT, WORKSPACE, actor=AGENT)
        assert (
            await editor_launch(host.settings, host.files, agent, artifact_id, base_url=base)
            is None
        )


async def test_a_large_file_streams_whole_and_an_app_failure_is_its_status(
    engine: AsyncEngine,
) -> None:
    async with in_process(await build_host(engine, origin=None)) as host:
        data = with_noise(document("Draft"), CHUNK_SIZE + CHUNK_SIZE // 2)
        assert len(data) > CHUNK_SIZE
        artifact_id = await host.upload(data)
        assert await head_bytes(host, artifact_id) == data
        assert "PostMessageOrigin" not in (await host.call(artifact_id)).json()
        await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
        host.fake.fail_next("crashed")
        crashed = await host.call(
            artifact_id, "PUT", contents=True, body=edited(document("Draft"), "X"), X_WOPI_Lock="L1"
        )
        assert (crashed.status_code, crashed.json()["detail"]["type"]) == (502, "app_crashed")


async def test_the_portal_gets_no_editor_when_discovery_has_no_action_for_a_docx(
    engine: AsyncEngine,
) -> None:
    async def fetch(url: str) -> bytes:
        return b"<wopi-discovery><app name='Excel'><action name='edit' ext='xlsx' urlsrc='https://x/'/></app></wopi-discovery>"

    cache = DiscoveryCache("https://cool.test/hosting/discovery", fetch=fetch)
    async with in_process(await build_host(engine, discovery=cache)) as host:
        artifact_id = await host.upload()
        launch = await editor_launch(
            host.settings, host.files, await host.ws(), artifact_id, base_url="http://h"
        )
        assert launch is None


def test_a_short_secret_is_refused_and_a_token_must_name_someone() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        mint_access_token(
            b"short",
            tenant_id=TENANT,
            workspace_id=WORKSPACE,
            artifact_id="art_1",
            person=EDDIE,
        )
    claims = {
        "iss": ISSUER,
        "sub": "",
        "tid": TENANT,
        "wid": WORKSPACE,
        "aid": "art_1",
        "exp": 2**40,
    }
    token = jwt.encode(claims, SECRET.encode(), algorithm="HS256")
    with pytest.raises(AccessTokenRefused, match="not a time"):
        read_access_token(SECRET, token, artifact_id="art_1")
    token = jwt.encode({**claims, "exp": 2**33}, SECRET.encode(), algorithm="HS256")
    with pytest.raises(AccessTokenRefused, match="names no one"):
        read_access_token(SECRET, token, artifact_id="art_1")
    granted = read_access_token(
        SECRET,
        mint_access_token(
            SECRET,
            tenant_id=TENANT,
            workspace_id=WORKSPACE,
            artifact_id="art_1",
            person=UserActor(id="ann"),
        ).token,
        artifact_id="art_1",
    )
    assert (granted.person.id, granted.person.name) == ("ann", "ann")


async def test_no_log_record_carries_a_token(host: Host, caplog: pytest.LogCaptureFixture) -> None:
    artifact_id = await host.upload()
    token = host.token(artifact_id)
    with caplog.at_level(logging.DEBUG):
        await host.call(artifact_id, token=token)
        await host.call(artifact_id, "LOCK", token=token, X_WOPI_Lock="L1")
        body = edited(document("Draft"), "Logged")
        await host.call(artifact_id, "PUT", contents=True, token=token, body=body, X_WOPI_Lock="L1")
        await host.call(artifact_id, "LOCK", token=token, person=ERIN, X_WOPI_Lock="L2")
        await host.call(artifact_id, token=token[:-4] + "AAAA")
    # The test's own HTTP client logs the URLs it calls: the host's records are the rest.
    logged = "\n".join(
        record.getMessage() + repr(record.__dict__)
        for record in caplog.records
        if not record.name.startswith(("httpx", "httpcore"))
    )
    assert "locked" in logged
    assert "saved" in logged
    assert token[:-4] not in logged


# ─── who may do what to a lock (issue 38) ─────────────────────────────────────

DAV_TOKEN = "opaquelocktoken:9b1d6c3e-0000-4000-8000-000000000038"


async def test_a_viewer_who_learnt_the_lock_ends_swaps_and_saves_nothing(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")).status_code == 200
    refused = [
        await host.call(artifact_id, "GET_LOCK", person=RITA),
        await host.call(artifact_id, "UNLOCK", person=RITA, X_WOPI_Lock="L1"),
        await host.call(artifact_id, "REFRESH_LOCK", person=RITA, X_WOPI_Lock="L1"),
        await host.call(artifact_id, "LOCK", person=RITA, X_WOPI_Lock="R", X_WOPI_OldLock="L1"),
        await host.call(artifact_id, "PUT", contents=True, person=RITA, body=edited(data, "Rita")),
        await host.call(
            artifact_id,
            "PUT",
            contents=True,
            person=RITA,
            body=edited(data, "Rita"),
            X_WOPI_Lock="L1",
        ),
    ]
    assert [answer.status_code for answer in refused] == [403] * len(refused)
    assert all("L1" not in str(answer.headers) for answer in refused)
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == "L1"
    saved = await host.call(
        artifact_id, "PUT", contents=True, body=edited(data, "Eddie"), X_WOPI_Lock="L1"
    )
    assert (saved.status_code, saved.headers["X-WOPI-ItemVersion"]) == (200, "2")
    assert (await host.call(artifact_id, "REFRESH_LOCK", X_WOPI_Lock="L1")).status_code == 200


async def test_a_webdav_token_is_never_shown_or_usable_over_wopi_by_another(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    await host.files.lock(await host.ws(EDDIE), artifact_id, lock=DAV_TOKEN)
    for person in (EDDIE, ERIN):
        shown = await host.call(artifact_id, "GET_LOCK", person=person)
        assert (shown.status_code, shown.headers["X-WOPI-Lock"]) == (200, "")
    taken = await host.call(artifact_id, "LOCK", person=ERIN, X_WOPI_Lock="L2")
    assert (taken.status_code, taken.headers["X-WOPI-Lock"]) == (409, "")
    assert DAV_TOKEN not in taken.text
    for override, headers in (
        ("UNLOCK", {"X_WOPI_Lock": DAV_TOKEN}),
        ("REFRESH_LOCK", {"X_WOPI_Lock": DAV_TOKEN}),
        ("LOCK", {"X_WOPI_Lock": "L3", "X_WOPI_OldLock": DAV_TOKEN}),
    ):
        answer = await host.call(artifact_id, override, person=ERIN, **headers)
        assert (answer.status_code, answer.headers["X-WOPI-Lock"]) == (409, ""), override
    put = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        person=ERIN,
        body=edited(data, "Erin"),
        X_WOPI_Lock=DAV_TOKEN,
    )
    assert (put.status_code, put.headers["X-WOPI-Lock"]) == (409, "")
    assert await head_bytes(host, artifact_id) == data
    assert await host.files.current_lock(await host.ws(EDDIE), artifact_id) == DAV_TOKEN


async def test_co_editors_share_a_wopi_lock_and_each_save_is_their_own(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="shared")
    assert (await host.call(artifact_id, "GET_LOCK", person=ERIN)).headers["X-WOPI-Lock"] == (
        "shared"
    )
    saved = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        person=ERIN,
        body=edited(data, "Erin"),
        X_WOPI_Lock="shared",
    )
    assert saved.status_code == 200
    revisions = await (await host.ws(EDDIE)).revisions(artifact_id)
    assert revisions[-1].actor == ERIN
    assert (
        await host.call(artifact_id, "UNLOCK", person=ERIN, X_WOPI_Lock="shared")
    ).status_code == 200


@pytest.mark.parametrize("collabora", [False, True])
async def test_a_save_after_a_colleague_discarded_the_session_is_kept_and_told(
    host: Host, collabora: bool
) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    loaded = (await host.call(artifact_id)).json()["LastModifiedTime"]
    await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    (record,) = await host.files.open_checkouts(await host.ws(EDDIE), artifact_id)
    files = f"/workspaces/{WORKSPACE}/files/{artifact_id}"
    discarded = await host.http.delete(f"{files}/checkouts/{record.id}", headers={"x-user": "erin"})
    assert discarded.status_code == 204, discarded.text
    mine = edited(data, "Unsaved")
    stamp = {"X_COOL_WOPI_Timestamp": loaded} if collabora else {}
    late = await host.call(artifact_id, "PUT", contents=True, body=mine, X_WOPI_Lock="L1", **stamp)
    assert late.status_code == 409
    assert "kept as proposal" in late.headers["X-WOPI-LockFailureReason"]
    assert "Erin ended the editing session" in late.headers["X-WOPI-LockFailureReason"]
    assert late.headers["X-WOPI-Lock"] == ""
    assert late.json().get("COOLStatusCode") == (1010 if collabora else None)
    proposal = await (await host.ws(EDDIE)).proposal(late.json()["proposal_id"])
    assert proposal.artifact_id == artifact_id
    assert await head_bytes(host, artifact_id) == data
