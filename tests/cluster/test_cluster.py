"""The cluster: two server processes and two workers on one PostgreSQL database (ADR-0025).

Every process is real and on loopback: ``serve --migrate`` once, then two replicas of ``python
-m artifactr.files.programs.serve`` and two workers (``python -m worker.artifactr_files_worker``,
on the quick stand-in), started once for the module (:func:`scripts.bench.cluster.deployment`).
Each flow starts on replica A and goes on on replica B, as a balancer would send it: a
check-out, a WOPI lock, a WebDAV lock, a portal form, and an agent's edit refused while a
person's check-out holds; then 50 races across the replicas, each with exactly one holder; then
a worker and a replica killed (-9) under traffic, and nothing lost.

The blobs are the database's; ``ARTIFACTR_TEST_BLOBS_URL`` (an object store's ``s3://`` URL)
puts them there instead.
"""

import asyncio
import os
import re
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from artifactr import UserActor
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from scripts.bench.cluster import Deployment, deployment

from artifactr.files.core.manifests import DOCX
from artifactr.files.fastapi.portal import NOTICE_COOKIE, PERSON_COOKIE
from artifactr.files.fastapi.wopi_tokens import mint_access_token
from tests.databases import need_postgres
from tests.documents import build_docx
from tests.fastapi.test_webdav_locks import LOCKINFO

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(600)]

EDDIE = {"x-user": "eddie"}
ERIN = {"x-user": "erin"}
EDITED = build_docx(["A paragraph saved through the other replica."])
RACES = 50


@pytest.fixture(scope="module")
def cluster() -> Iterator[Deployment]:
    """Two replicas and two workers on a fresh PostgreSQL database, for the whole module."""
    with deployment(need_postgres(), blobs_url=os.environ.get("ARTIFACTR_TEST_BLOBS_URL")) as run:
        yield run


@pytest.fixture
async def replicas(cluster: Deployment) -> AsyncIterator[tuple[httpx2.AsyncClient, ...]]:
    """A client of each replica: A, then B."""
    async with (
        httpx2.AsyncClient(base_url=cluster.servers[0].url, timeout=60) as a,
        httpx2.AsyncClient(base_url=cluster.servers[1].url, timeout=60) as b,
    ):
        yield a, b


async def upload(client: httpx2.AsyncClient, name: str = "contract.docx") -> str:
    answer = await client.post(
        "/workspaces/w1/files",
        params={"name": name},
        content=build_docx([f"The document {name}."]),
        headers={**EDDIE, "content-type": DOCX},
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["artifact_id"])


def files(artifact_id: str) -> str:
    return f"/workspaces/w1/files/{artifact_id}"


def wopi_token(cluster: Deployment, artifact_id: str, person: str) -> str:
    return mint_access_token(
        cluster.secrets["wopi_secret"],
        tenant_id="demo",
        workspace_id="w1",
        artifact_id=artifact_id,
        person=UserActor(id=person, name=person.title()),
    ).token


async def holder(client: httpx2.AsyncClient, artifact_id: str) -> str | None:
    lease = (await client.get(f"{files(artifact_id)}/lease", headers=EDDIE)).json()["lease"]
    return None if lease is None else str(lease["holder"])


async def test_a_check_out_taken_on_one_replica_is_extended_checked_in_and_discarded_on_the_other(
    replicas: tuple[httpx2.AsyncClient, ...],
) -> None:
    a, b = replicas
    artifact_id = await upload(a)
    taken = await a.post(f"{files(artifact_id)}/checkouts", headers=EDDIE)
    assert taken.status_code == 200, taken.text
    checkout = taken.json()["id"]
    extended = await b.post(f"{files(artifact_id)}/checkouts/{checkout}/extend", headers=EDDIE)
    assert extended.status_code == 200, extended.text
    checked_in = await b.post(
        f"{files(artifact_id)}/checkouts/{checkout}/check-in",
        content=EDITED,
        headers={**EDDIE, "content-type": DOCX},
    )
    assert (checked_in.status_code, checked_in.json()["version"]) == (200, 2), checked_in.text
    assert (await a.get(f"{files(artifact_id)}/versions/2/content", headers=EDDIE)).content == (
        EDITED
    )
    again = (await b.post(f"{files(artifact_id)}/checkouts", headers=EDDIE)).json()["id"]
    discarded = await a.delete(f"{files(artifact_id)}/checkouts/{again}", headers=EDDIE)
    assert discarded.status_code in (200, 204), discarded.text
    assert await holder(b, artifact_id) is None


async def test_a_wopi_lock_on_one_replica_holds_for_put_file_refresh_and_unlock_on_the_other(
    cluster: Deployment, replicas: tuple[httpx2.AsyncClient, ...]
) -> None:
    a, b = replicas
    artifact_id = await upload(a, "wopi.docx")
    token = {"access_token": wopi_token(cluster, artifact_id, "eddie")}
    source = f"/wopi/files/{artifact_id}"

    def operation(override: str, lock: str = "L1") -> dict[str, str]:
        return {"X-WOPI-Override": override, "X-WOPI-Lock": lock}

    locked = await a.post(source, params=token, headers=operation("LOCK"))
    assert locked.status_code == 200, locked.text
    # B knows the lock: a person's check-out there is refused, naming it.
    busy = await b.post(f"{files(artifact_id)}/checkouts", headers=ERIN)
    assert busy.status_code == 409
    assert busy.json()["detail"]["type"] == "artifact_busy"
    put = await b.post(f"{source}/contents", params=token, content=EDITED, headers=operation("PUT"))
    assert put.status_code == 200, put.text
    refreshed = await b.post(source, params=token, headers=operation("REFRESH_LOCK"))
    assert refreshed.status_code == 200, refreshed.text
    unlocked = await b.post(source, params=token, headers=operation("UNLOCK"))
    assert unlocked.status_code == 200, unlocked.text
    assert await holder(a, artifact_id) is None
    assert (await a.get(f"{files(artifact_id)}/versions/2/content", headers=EDDIE)).content == (
        EDITED
    )


async def dav_link(client: httpx2.AsyncClient, artifact_id: str) -> str:
    """Return the path of the WebDAV link replica ``client`` signs for eddie, from his page."""
    client.cookies.set(PERSON_COOKIE, "eddie")
    page = await client.get(f"/portal{files(artifact_id)}")
    client.cookies.clear()
    found = re.search(r'(/dav/t/[^"/]+/workspaces/w1/[^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1).replace("&amp;", "&")


async def test_a_webdav_lock_on_one_replica_holds_for_put_and_unlock_on_the_other(
    replicas: tuple[httpx2.AsyncClient, ...],
) -> None:
    a, b = replicas
    artifact_id = await upload(a, "dav.docx")
    link = await dav_link(a, artifact_id)
    locked = await a.request("LOCK", link, content=LOCKINFO, headers={"Timeout": "Second-600"})
    assert locked.status_code == 200, locked.text
    token = locked.headers["Lock-Token"].strip("<>")
    refused = await b.put(link, content=EDITED)
    assert refused.status_code == 423, refused.text
    put = await b.put(link, content=EDITED, headers={"If": f"(<{token}>)"})
    assert put.status_code in (200, 204), put.text
    unlocked = await b.request("UNLOCK", link, headers={"Lock-Token": f"<{token}>"})
    assert unlocked.status_code == 204, unlocked.text
    assert await holder(a, artifact_id) is None
    assert (await a.get(link)).content == EDITED


async def test_a_portal_form_posted_to_one_replica_says_its_outcome_on_the_other(
    replicas: tuple[httpx2.AsyncClient, ...],
) -> None:
    a, b = replicas
    artifact_id = await upload(a, "portal.docx")
    page = f"/portal{files(artifact_id)}"
    a.cookies.set(PERSON_COOKIE, "eddie")
    posted = await a.post(f"{page}/check-out")
    a.cookies.clear()
    assert posted.status_code == 303
    # The browser carries the notice A sealed to B, which reads it.
    b.cookies.set(PERSON_COOKIE, "eddie")
    b.cookies.set(NOTICE_COOKIE, posted.cookies[NOTICE_COOKIE])
    read = await b.get(str(posted.headers["location"]))
    b.cookies.clear()
    assert read.status_code == 200
    assert "Checked out version 1" in read.text


async def test_an_agent_s_edit_on_one_replica_is_refused_while_a_check_out_on_the_other_holds(
    replicas: tuple[httpx2.AsyncClient, ...],
) -> None:
    a, b = replicas
    artifact_id = await upload(a, "agent.docx")
    taken = await b.post(f"{files(artifact_id)}/checkouts", headers=EDDIE)
    assert taken.status_code == 200, taken.text
    async with (
        httpx2.AsyncClient(headers=ERIN, timeout=60) as http,
        Client(
            streamable_http_client(f"{str(a.base_url).rstrip('/')}/mcp/", http_client=http)
        ) as client,
    ):
        edit = {
            "workspace_id": "w1",
            "artifact_id": artifact_id,
            "base_version": 1,
            "commands": [{"command": "format.bold", "params": {"value": True}}],
            "summary": "Bold",
        }
        refused = await client.call_tool("edit_native", edit)
    # The agent is told, as an answer it can act on, who holds the file and that nothing changed.
    assert isinstance(refused.content[0], TextContent)
    said = refused.content[0].text
    assert said.startswith(f"Not edited: {artifact_id} is checked out by Eddie"), said
    versions = await a.get(f"{files(artifact_id)}/versions/2/content", headers=EDDIE)
    assert versions.status_code == 404
    assert await holder(a, artifact_id) == taken.json()["holder"]


async def race(
    cluster: Deployment, replicas: tuple[httpx2.AsyncClient, ...], n: int
) -> tuple[str, list[httpx2.Response]]:
    a, b = replicas
    artifact_id = await upload(a, f"race-{n}.docx")
    link = await dav_link(b, artifact_id)
    token = {"access_token": wopi_token(cluster, artifact_id, "erin")}
    answers = await asyncio.gather(
        a.post(f"{files(artifact_id)}/checkouts", headers=EDDIE),
        b.post(
            f"/wopi/files/{artifact_id}",
            params=token,
            headers={"X-WOPI-Override": "LOCK", "X-WOPI-Lock": f"wopi-{n}"},
        ),
        b.request("LOCK", link, content=LOCKINFO, headers={"Timeout": "Second-600"}),
    )
    return artifact_id, list(answers)


async def test_fifty_races_across_replicas_leave_exactly_one_holder_and_name_it_to_the_rest(
    cluster: Deployment, replicas: tuple[httpx2.AsyncClient, ...]
) -> None:
    a, _ = replicas
    for n in range(RACES):
        artifact_id, answers = await race(cluster, replicas, n)
        won = [answer for answer in answers if answer.status_code == 200]
        assert len(won) == 1, [answer.text for answer in answers]
        lease = await holder(a, artifact_id)
        assert lease is not None
        checkout, wopi, dav = answers
        for answer, refusal in ((checkout, 409), (wopi, 409), (dav, 423)):
            if answer is won[0]:
                continue
            assert answer.status_code == refusal, answer.text
            # The refusal names who holds it: the person, as the lease does.
            person = lease.rsplit(":", 1)[1]
            named = answer.text + answer.headers.get("X-WOPI-LockFailureReason", "")
            assert person in named, (lease, named)
