"""The cluster: two server processes and two workers on one PostgreSQL database (ADR-0025).

Every process is real and on loopback: ``serve --migrate`` once, then two replicas of ``python
-m artifactr.files.programs.serve`` and two LibreOffice workers (``python -m
worker.artifactr_files_worker``, ``WORKER_APP=libreoffice``, each with an office started ahead),
started once (:func:`scripts.bench.cluster.deployment`). Each flow starts on replica A and goes
on on replica B, as a balancer would send it: a check-out, a WOPI lock, a WebDAV lock, a portal
form, an agent's edit refused while a person's check-out holds, and an agent's edit run by a
worker's LibreOffice and accepted on the other replica; beside them, 50 races across the
replicas, each with exactly one holder. Then a worker, a replica and the object store are
killed (-9) under traffic, and nothing is lost.

Every upload and every check-in of new bytes is a LibreOffice job (the file's inspection), so
the test keeps them few: the races' files are uploaded first, a few at a time as the workers
take them, and each is raced again once its holder lets go; and the fault run waits for one
cycle of each client per step. Nothing waits on a sleep: each step waits for an answer, a
process's readiness or the clients' progress.

The blobs are in a SeaweedFS of the test's own (``ARTIFACTR_FILES_BLOBS_URL=s3://...``, the
credentials in the replicas' environment), started once for the module: the fault run kills it.
"""

import asyncio
import io
import re
import zipfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx2
import obstore
import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import SystemActor
from artifactr.sql import SqlStorage
from artifactr.workspace import Scope, Workspace
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from pydantic import JsonValue
from scripts.bench.cluster import Deployment, deployment
from sqlalchemy.ext.asyncio import create_async_engine

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.clock import utc_now
from artifactr.files.core.manifests import DOCX, NativeFile
from artifactr.files.fastapi.portal import NOTICE_COOKIE, PERSON_COOKIE
from artifactr.files.fastapi.wopi_tokens import mint_access_token
from artifactr.files.native import NativeFiles
from artifactr.files.programs.serve import KINDS
from artifactr.files.s3 import S3Blobs
from artifactr.files.sql import SqlCheckouts, SqlLeases
from tests.databases import need_postgres
from tests.documents import build_docx
from tests.fastapi.test_webdav_locks import LOCKINFO
from tests.office import need_office
from tests.s3.test_s3_blobs import bare
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(600)]

EDDIE = {"x-user": "eddie"}
ERIN = {"x-user": "erin"}
EDITED = build_docx(["A paragraph saved through the other replica."])
RACES = 50
RACED_FILES = 10
"""The files the races run on, side by side: each is raced ``RACES // RACED_FILES`` times."""
UPLOADING = 4
"""Uploads sent at once: the workers' queues hold them, each an inspection by LibreOffice."""
WORKERS = {
    # An office started ahead and warmed, so a job doesn't wait for one to start.
    "WORKER_POOL": "1",
    # Room in the queue for every replica's jobs at once, waiting as long as a job may.
    "WORKER_QUEUE": "16",
    "WORKER_QUEUE_WAIT": "30",
}
"""The workers' settings over their defaults."""
PREFIX = "cluster"
"""Where the replicas' blobs are in the store's bucket."""


@pytest.fixture
def store() -> Iterator[SeaweedFS]:
    """The cluster's object store: a SeaweedFS of its own, since the fault run kills it."""
    with seaweedfs() as store:
        store.bucket("blobs")
        yield store


def blobs_url(store: SeaweedFS) -> str:
    return f"s3://blobs/{PREFIX}?endpoint_url={store.endpoint}&region=us-east-1"


@pytest.fixture
def cluster(store: SeaweedFS, monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    """Two replicas and two LibreOffice workers on a fresh PostgreSQL database, their blobs in
    ``store``."""
    need_office()
    # The replicas take the store's credentials from their environment, as in a deployment.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    with deployment(
        need_postgres(),
        blobs_url=blobs_url(store),
        worker_app="libreoffice",
        worker_settings=WORKERS,
    ) as run:
        yield run


FRESH = httpx2.Limits(max_keepalive_connections=0)
"""A connection a request: a busy machine may hold a client idle past a replica's keep-alive,
and a request sent as the replica closes the connection would fail (``ReadError``)."""


@asynccontextmanager
async def clients(cluster: Deployment) -> AsyncIterator[tuple[httpx2.AsyncClient, ...]]:
    """Yield a client of each replica: A, then B."""
    async with (
        httpx2.AsyncClient(base_url=cluster.servers[0].url, timeout=120, limits=FRESH) as a,
        httpx2.AsyncClient(base_url=cluster.servers[1].url, timeout=120, limits=FRESH) as b,
    ):
        yield a, b


async def test_any_replica_answers_any_request_and_races_across_them_have_one_holder(
    cluster: Deployment, store: SeaweedFS
) -> None:
    # One test, so that the cluster starts once even when tests are spread over processes.
    # The flows and the races run side by side, each with clients of its own, on files uploaded
    # first; the fault run, which kills a replica, after them.
    async with clients(cluster) as (a, _):
        uploading = asyncio.Semaphore(UPLOADING)
        fox, raced = await asyncio.gather(
            upload(a, "fox.docx", FOX, uploading),
            asyncio.gather(
                *(upload(a, f"race-{n}.docx", gate=uploading) for n in range(RACED_FILES))
            ),
        )
    await asyncio.gather(
        a_check_out_taken_on_one_replica_is_extended_checked_in_and_discarded_on_the_other(cluster),
        a_wopi_lock_on_one_replica_holds_for_put_file_refresh_and_unlock_on_the_other(cluster),
        a_webdav_lock_on_one_replica_holds_for_put_and_unlock_on_the_other(cluster),
        a_portal_form_posted_to_one_replica_says_its_outcome_on_the_other(cluster),
        an_agent_s_edit_on_one_replica_is_refused_while_a_check_out_on_the_other_holds(cluster),
        an_agent_s_edit_runs_in_a_worker_s_libreoffice_and_is_accepted_on_the_other_replica(
            cluster, fox
        ),
        fifty_races_across_replicas_leave_exactly_one_holder_and_name_it_to_the_rest(
            cluster, raced
        ),
    )
    await a_server_a_worker_and_the_store_killed_under_traffic_lose_nothing(cluster, store)


FOX = ["The quick brown fox jumps over the lazy dog."]


async def upload(
    client: httpx2.AsyncClient,
    name: str = "contract.docx",
    paragraphs: list[str] | None = None,
    gate: asyncio.Semaphore | None = None,
) -> str:
    """Upload a document as eddie, asking again while the replica says it is busy (503)."""
    async with gate or asyncio.Semaphore():
        return await _upload(client, name, paragraphs or [f"The document {name}."])


async def _upload(client: httpx2.AsyncClient, name: str, paragraphs: list[str]) -> str:
    while True:
        answer = await client.post(
            "/workspaces/w1/files",
            params={"name": name},
            content=build_docx(paragraphs),
            headers={**EDDIE, "content-type": DOCX},
        )
        if answer.status_code != 503:
            break
        assert answer.json()["detail"]["type"] == "service_busy", answer.text
        await asyncio.sleep(float(answer.headers.get("retry-after", "1")))
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


async def a_check_out_taken_on_one_replica_is_extended_checked_in_and_discarded_on_the_other(
    cluster: Deployment,
) -> None:
    async with clients(cluster) as (a, b):
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


async def a_wopi_lock_on_one_replica_holds_for_put_file_refresh_and_unlock_on_the_other(
    cluster: Deployment,
) -> None:
    async with clients(cluster) as (a, b):
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
        put = await b.post(
            f"{source}/contents", params=token, content=EDITED, headers=operation("PUT")
        )
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


async def a_webdav_lock_on_one_replica_holds_for_put_and_unlock_on_the_other(
    cluster: Deployment,
) -> None:
    async with clients(cluster) as (a, b):
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


async def a_portal_form_posted_to_one_replica_says_its_outcome_on_the_other(
    cluster: Deployment,
) -> None:
    async with clients(cluster) as (a, b):
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


async def an_agent_s_edit_on_one_replica_is_refused_while_a_check_out_on_the_other_holds(
    cluster: Deployment,
) -> None:
    async with clients(cluster) as (a, b):
        artifact_id = await upload(a, "agent.docx")
        taken = await b.post(f"{files(artifact_id)}/checkouts", headers=EDDIE)
        assert taken.status_code == 200, taken.text
        async with (
            httpx2.AsyncClient(headers=ERIN, timeout=120, limits=FRESH) as http,
            Client(
                streamable_http_client(f"{str(a.base_url).rstrip('/')}/mcp/", http_client=http)
            ) as client,
        ):
            edit = {
                "workspace_id": "w1",
                "artifact_id": artifact_id,
                "base_version": 1,
                "commands": [
                    {"command": "text.replaceAll", "params": {"find": "A", "replace": "B"}}
                ],
                "summary": "Bold",
            }
            refused = await client.call_tool("edit_native", edit)
        # The agent is told, as an answer it can act on, who holds it and that nothing changed.
        assert isinstance(refused.content[0], TextContent)
        said = refused.content[0].text
        assert said.startswith(f"Not edited: {artifact_id} is checked out by Eddie"), said
        versions = await a.get(f"{files(artifact_id)}/versions/2/content", headers=EDDIE)
        assert versions.status_code == 404
        assert await holder(a, artifact_id) == taken.json()["holder"]


def text_of(docx: bytes) -> str:
    """Return a .docx's words, from its document part, without its markup."""
    with zipfile.ZipFile(io.BytesIO(docx)) as package:
        return re.sub(r"<[^>]+>", "", package.read("word/document.xml").decode())


async def an_agent_s_edit_runs_in_a_worker_s_libreoffice_and_is_accepted_on_the_other_replica(
    cluster: Deployment, artifact_id: str
) -> None:
    async with clients(cluster) as (a, b):
        async with (
            httpx2.AsyncClient(headers=ERIN, timeout=120, limits=FRESH) as http,
            Client(
                streamable_http_client(f"{str(a.base_url).rstrip('/')}/mcp/", http_client=http)
            ) as client,
        ):
            edit = {
                "workspace_id": "w1",
                "artifact_id": artifact_id,
                "base_version": 1,
                "commands": [
                    {"command": "text.replaceAll", "params": {"find": "fox", "replace": "cat"}}
                ],
                "summary": "A cat now.",
            }
            edited = await client.call_tool("edit_native", edit)
        assert isinstance(edited.content[0], TextContent)
        said = edited.content[0].text
        # Erin's agent proposes; eddie accepts it through the other replica's portal.
        proposed = re.match(r"Proposed as (prp_\w+)\.", said)
        assert proposed is not None, said
        b.cookies.set(PERSON_COOKIE, "eddie")
        accepted = await b.post(f"/portal{files(artifact_id)}/proposals/{proposed.group(1)}/accept")
        b.cookies.clear()
        assert accepted.status_code == 303, accepted.text
        first = await a.get(f"{files(artifact_id)}/versions/1/content", headers=EDDIE)
        second = await a.get(f"{files(artifact_id)}/versions/2/content", headers=EDDIE)
        assert second.status_code == 200, second.text
        # LibreOffice saved the file anew, with the words the command said.
        assert second.content != first.content
        assert "The quick brown cat jumps over the lazy dog." in text_of(second.content)
        assert "fox" not in text_of(second.content)
        read = await a.get(f"/workspaces/w1/artifacts/{artifact_id}", headers=EDDIE)
        assert read.json()["data"]["provenance"]["app"] == "libreoffice", read.text


async def race(
    cluster: Deployment,
    replicas: tuple[httpx2.AsyncClient, httpx2.AsyncClient],
    artifact_id: str,
    link: str,
    n: int,
) -> None:
    """Race a check-out on A against a WOPI Lock and a WebDAV LOCK on B; check one holds and
    the others are told who; then let the holder go, so the file can be raced again."""
    a, b = replicas
    token = {"access_token": wopi_token(cluster, artifact_id, "erin")}
    wopi = f"/wopi/files/{artifact_id}"
    answers = await asyncio.gather(
        a.post(f"{files(artifact_id)}/checkouts", headers=EDDIE),
        b.post(wopi, params=token, headers={"X-WOPI-Override": "LOCK", "X-WOPI-Lock": f"w{n}"}),
        b.request("LOCK", link, content=LOCKINFO, headers={"Timeout": "Second-600"}),
    )
    won = [answer for answer in answers if answer.status_code == 200]
    assert len(won) == 1, [answer.text for answer in answers]
    lease = await holder(a, artifact_id)
    assert lease is not None
    checkout, locked, dav = answers
    for answer, refusal in ((checkout, 409), (locked, 409), (dav, 423)):
        if answer is won[0]:
            continue
        assert answer.status_code == refusal, answer.text
        # The refusal names who holds it: the person, as the lease does.
        person = lease.rsplit(":", 1)[1]
        named = answer.text + answer.headers.get("X-WOPI-LockFailureReason", "")
        assert person in named, (lease, named)
    if won[0] is checkout:
        let_go = await b.delete(
            f"{files(artifact_id)}/checkouts/{checkout.json()['id']}", headers=EDDIE
        )
    elif won[0] is locked:
        let_go = await a.post(
            wopi, params=token, headers={"X-WOPI-Override": "UNLOCK", "X-WOPI-Lock": f"w{n}"}
        )
    else:
        let_go = await a.request("UNLOCK", link, headers={"Lock-Token": dav.headers["Lock-Token"]})
    assert let_go.status_code in (200, 204), let_go.text
    assert await holder(b, artifact_id) is None


async def fifty_races_across_replicas_leave_exactly_one_holder_and_name_it_to_the_rest(
    cluster: Deployment, raced: list[str]
) -> None:
    async def races_on(artifact_id: str, first: int) -> None:
        async with clients(cluster) as (a, b):
            link = await dav_link(b, artifact_id)
            for n in range(first, RACES, len(raced)):
                await race(cluster, (a, b), artifact_id, link, n)

    # Each file raced over and over, the files side by side: RACES races in all.
    await asyncio.gather(*(races_on(artifact_id, n) for n, artifact_id in enumerate(raced)))


# ─── the fault run ────────────────────────────────────────────────────────────

CLIENTS = 4
GONE = (httpx2.TransportError,)
RETRYABLE = ("service_busy", "store_failed")
"""The types of a 503 a client may retry: a busy replica, and a store that failed a call."""


@dataclass
class Traffic:
    """What the clients saw: each file's applied versions and their bytes, and any bad answer."""

    applied: dict[str, dict[int, bytes]] = field(default_factory=dict[str, dict[int, bytes]])
    cycles: list[int] = field(default_factory=lambda: [0] * CLIENTS)
    bad: list[str] = field(default_factory=list[str])
    busy: list[str] = field(default_factory=list[str])
    moved: asyncio.Event = field(default_factory=asyncio.Event)


async def send(
    traffic: Traffic, urls: list[str], turn: int, method: str, path: str, **options: Any
) -> httpx2.Response:
    """Send a request to one replica, and again to the next while one is gone or says a typed,
    retryable 503; any other 503 is a bad answer."""
    async with httpx2.AsyncClient(timeout=120) as client:
        for attempt in range(400):
            url = urls[(turn + attempt) % len(urls)]
            try:
                answer = await client.request(method, url + path, **options)
            except GONE:
                await asyncio.sleep(0.05)
                continue
            if answer.status_code != 503:
                return answer
            kind = answer.json().get("detail", {}).get("type")
            if kind not in RETRYABLE or "retry-after" not in answer.headers:
                traffic.bad.append(f"{method} {path}: 503 {answer.text}")
                return answer
            traffic.busy.append(kind)
            await asyncio.sleep(min(float(answer.headers["retry-after"]), 2.0))
    pytest.fail(f"{method} {path}: no replica answered")


async def steady(urls: list[str], n: int, traffic: Traffic, stop: asyncio.Event) -> None:
    """One client's traffic, until ``stop``; whatever ends it is said, so no one waits on it."""
    try:
        await cycle_on(urls, n, traffic, stop)
    except BaseException as error:
        traffic.bad.append(repr(error))
        raise
    finally:
        traffic.moved.set()


async def cycle_on(urls: list[str], n: int, traffic: Traffic, stop: asyncio.Event) -> None:
    """A file of its own, checked out and in with new bytes, over and over."""
    first = build_docx([f"Client {n}'s file."])
    uploaded = await send(
        traffic,
        urls,
        n,
        "POST",
        "/workspaces/w1/files",
        params={"name": f"fault-{n}.docx"},
        content=first,
        headers={**EDDIE, "content-type": DOCX},
    )
    assert uploaded.status_code == 201, uploaded.text
    artifact_id = str(uploaded.json()["artifact_id"])
    traffic.applied[artifact_id] = {1: first}
    cycle = 0
    while not stop.is_set():
        cycle += 1
        taken = await send(
            traffic, urls, n + cycle, "POST", f"{files(artifact_id)}/checkouts", headers=EDDIE
        )
        checkout = mine(taken)
        if checkout is None:
            traffic.bad.append(f"check-out {taken.status_code} {taken.text}")
            return
        data = build_docx([f"Client {n}, cycle {cycle}."])
        checked_in = await send(
            traffic,
            urls,
            n + cycle + 1,
            "POST",
            f"{files(artifact_id)}/checkouts/{checkout}/check-in",
            content=data,
            headers={**EDDIE, "content-type": DOCX},
        )
        if checked_in.status_code != 200 or checked_in.json()["status"] != "applied":
            traffic.bad.append(f"check-in {checked_in.status_code} {checked_in.text}")
            return
        # A check-in retried after its replica died is answered once: with the next version.
        version = int(checked_in.json()["version"])
        if version != max(traffic.applied[artifact_id]) + 1:
            traffic.bad.append(f"check-in answered v{version} after {traffic.applied}")
            return
        traffic.applied[artifact_id][version] = data
        traffic.cycles[n] += 1
        traffic.moved.set()


def mine(taken: httpx2.Response) -> str | None:
    """Return the check-out a check-out's answer gives eddie: its own, or, when a retry after a
    replica died finds his first try took it, the one the busy answer names."""
    if taken.status_code == 200:
        return str(taken.json()["id"])
    if taken.status_code == 409:
        holder = str(taken.json()["detail"]["lease"]["holder"])
        kind, checkout, who = holder.split(":", 2)
        if (kind, who) == ("checkout", "user:eddie"):
            return checkout
    return None


async def progress(traffic: Traffic, cycles: int) -> None:
    """Wait until every client has done ``cycles`` more cycles, or one stopped on a bad answer."""
    wanted = [done + cycles for done in traffic.cycles]
    while not traffic.bad and any(
        done < want for done, want in zip(traffic.cycles, wanted, strict=True)
    ):
        traffic.moved.clear()
        await traffic.moved.wait()


async def a_server_a_worker_and_the_store_killed_under_traffic_lose_nothing(
    cluster: Deployment, store: SeaweedFS
) -> None:
    urls = [server.url for server in cluster.servers]
    traffic = Traffic()
    stop = asyncio.Event()
    running = [asyncio.ensure_future(steady(urls, n, traffic, stop)) for n in range(CLIENTS)]
    # A cycle of each client at each step: each check-in is a LibreOffice job.
    await progress(traffic, 1)
    server, worker = cluster.servers[0], cluster.workers[0]
    # The worker dies with its offices, as its container would.
    server.kill()
    worker.kill()
    await progress(traffic, 1)
    await asyncio.gather(asyncio.to_thread(server.start), asyncio.to_thread(worker.start))
    await progress(traffic, 1)
    # The store dies under the clients' puts and reads, and comes back on its ports and data.
    store.kill()
    await asyncio.to_thread(store.start)
    await progress(traffic, 1)
    stop.set()
    await asyncio.gather(*running)
    assert traffic.bad == []
    # Every applied version is there, with the bytes sent, on both replicas; none was lost.
    async with httpx2.AsyncClient(timeout=120, headers=EDDIE, limits=FRESH) as client:
        for artifact_id, versions in traffic.applied.items():
            assert sorted(versions) == list(range(1, len(versions) + 1))
            for url in urls:
                for version, data in versions.items():
                    got = await client.get(f"{url}{files(artifact_id)}/versions/{version}/content")
                    assert (got.status_code, got.content) == (200, data), (artifact_id, version)
                after = await client.get(
                    f"{url}{files(artifact_id)}/versions/{len(versions) + 1}/content"
                )
                assert after.status_code == 404
    await orphans_go_after_the_grace_and_every_named_object_stays(
        cluster, store, next(iter(traffic.applied))
    )


async def once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def digests(data: JsonValue) -> set[str]:
    """Every blob digest a manifest's or a patch's JSON names."""
    found: set[str] = set()
    if isinstance(data, dict):
        sha = data.get("sha256")
        if isinstance(sha, str) and "size" in data:
            found.add(sha)
        for value in data.values():
            found |= digests(value)
    elif isinstance(data, list):
        for value in data:
            found |= digests(value)
    return found


async def referenced(ws: Workspace) -> set[tuple[str, str]]:
    """Every (artifact, digest) a revision or a proposal of the workspace names."""
    named: set[tuple[str, str]] = set()
    for artifact in await ws.artifacts(NativeFile, include_archived=True):
        for revision in await ws.revisions(artifact.id):
            named |= {(artifact.id, sha) for sha in digests(revision.data)}
    for proposal in await ws.proposals():
        change = proposal.change.model_dump(mode="json")
        named |= {(proposal.artifact_id, sha) for sha in digests(change)}
    return named


async def stored(store: SeaweedFS) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (artifact, digest) of each object in the workspace's part of the bucket, and of
    anything else there (a put's marker, a staged put)."""
    scope = f"{PREFIX}/demo/w1/"
    listed = await obstore.list(bare(store), prefix=scope).collect_async()
    objects: set[tuple[str, str]] = set()
    others: set[tuple[str, str]] = set()
    for meta in listed:
        parts = meta["path"][len(scope) :].split("/")
        if len(parts) == 2:
            objects.add((parts[0], parts[1]))
        else:
            others.add((parts[0], parts[1].removesuffix(".at") if len(parts) > 1 else ""))
    return objects, others


async def orphans_go_after_the_grace_and_every_named_object_stays(
    cluster: Deployment, store: SeaweedFS, artifact_id: str
) -> None:
    engine = create_async_engine(cluster.env["ARTIFACTR_FILES_DATABASE_URL"])
    try:

        async def collect(ahead: timedelta) -> tuple[int, set[tuple[str, str]]]:
            # The service's collection, run as the system, at a clock ``ahead`` of now.
            def clock() -> datetime:
                return utc_now() + ahead

            collector = NativeFiles(
                blobs=S3Blobs.from_url(blobs_url(store), clock=clock),
                app=FakeApp(),
                leases=SqlLeases(engine, clock=clock),
                checkouts=SqlCheckouts(engine),
                types=KINDS,
                clock=clock,
            )
            workspaces = Workspaces(SqlStorage(engine, clock=clock), types=list(KINDS))
            ws = await workspaces.open("demo", "w1", actor=SystemActor())
            return await collector.collect(ws, grace=timedelta(hours=1)), await referenced(ws)

        # Whatever the kills left, one orphan for sure: bytes a replica put for a check-in and
        # died before committing.
        dying = S3Blobs.from_url(blobs_url(store))
        died = build_docx(["A check-in whose replica died before it committed."])
        await dying.put(Scope(tenant_id="demo", workspace_id="w1"), artifact_id, once(died), DOCX)
        # Within the grace nothing goes: a put racing its commit may be any young object.
        before, _ = await stored(store)
        assert (await collect(timedelta(0)))[0] == 0
        assert (await stored(store))[0] == before
        # After it, what no revision names is gone, with its markers, and all the rest stays.
        removed, named = await collect(timedelta(hours=2))
        assert removed >= 1
        objects, others = await stored(store)
        assert objects == named
        assert others <= named
    finally:
        await engine.dispose()
