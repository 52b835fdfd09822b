"""Access through grantr over REST: the files router answers as NativeFiles decides.

On SQLite and PostgreSQL, the router is mounted over the same grantr-backed ``Workspaces`` as
the other access tests, each request's person named by ``x-user``. It checks that a viewer
downloads, views pages and reads the lease, and is refused (403) every write; that a restricted
file is answered, status and body, as a missing one on every route; that a contributor may not
break another person's check-out, and that an admin may; and
that the switch refuses writes while reads go on.
"""

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from artifactr import UserActor
from artifactr.core import Actor
from artifactr.fastapi import Unauthorized
from fastapi import FastAPI
from starlette.requests import HTTPConnection

from artifactr.files import DOCX
from artifactr.files.fastapi.router import files_router
from tests.access.conftest import ADA, CARL, EDDIE, RITA, TENANT, World
from tests.documents import build_docx

EDITED = build_docx(("Final agreement", "The quick brown cat pays a fee."))
MISSING = "art_0123456789abcdef0123456789abcdef"


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the tenant and the person the ``x-user`` header names."""
    if user := connection.headers.get("x-user"):
        return TENANT, UserActor(id=user, name=user.title())
    raise Unauthorized("who?")


def who(person: UserActor) -> dict[str, str]:
    return {"x-user": person.id}


@pytest.fixture
async def client(world: World) -> AsyncIterator[httpx2.AsyncClient]:
    app = FastAPI(title="artifactr.files", version="1")
    app.include_router(files_router(world.files, world.workspaces, resolve_actor=resolve_actor))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://files.test") as made:
        yield made


def url(path: str = "") -> str:
    return f"/workspaces/w1/files{path}"


async def check_out(client: httpx2.AsyncClient, doc: str, person: UserActor) -> dict[str, Any]:
    response = await client.post(url(f"/{doc}/checkouts"), headers=who(person))
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_viewer_downloads_views_pages_and_reads_the_lease_and_is_refused_writes(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await check_out(client, doc, EDDIE)
    rita = who(RITA)

    content = await client.get(url(f"/{doc}/versions/1/content"), headers=rita)
    page = await client.get(url(f"/{doc}/versions/1/pages/1"), headers=rita)
    lease = await client.get(url(f"/{doc}/lease"), headers=rita)
    writes = [
        await client.post(url(f"/{doc}/checkouts"), headers=rita),
        await client.post(
            url(),
            params={"name": "new.docx"},
            content=EDITED,
            headers={**rita, "content-type": DOCX},
        ),
        await client.delete(url(f"/{doc}/checkouts/{checkout['id']}"), headers=rita),
    ]

    assert content.status_code == 200
    assert content.content.startswith(b"PK")
    assert page.status_code == 200
    assert page.content.startswith(b"\x89PNG")
    assert lease.json()["lease"]["holder"] == checkout["holder"]
    assert [response.status_code for response in writes] == [403, 403, 403]


async def test_an_editor_checks_out_and_checks_in_over_rest(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await check_out(client, doc, EDDIE)

    checked_in = await client.post(
        url(f"/{doc}/checkouts/{checkout['id']}/check-in"), content=EDITED, headers=who(EDDIE)
    )

    assert checked_in.status_code == 200, checked_in.text
    assert checked_in.json()["status"] == "applied"


async def test_a_contributor_may_not_break_another_persons_check_out_over_rest(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await check_out(client, doc, EDDIE)

    refused = await client.delete(url(f"/{doc}/checkouts/{checkout['id']}"), headers=who(CARL))

    assert refused.status_code == 403
    assert (await world.files.lease(await world.ws(EDDIE), doc)) is not None


async def test_an_admin_breaks_another_persons_check_out_over_rest(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    checkout = await check_out(client, doc, EDDIE)

    broken = await client.delete(url(f"/{doc}/checkouts/{checkout['id']}"), headers=who(ADA))

    assert broken.status_code == 204, broken.text


async def test_every_route_answers_a_restricted_file_as_a_missing_one(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    checkout = (await check_out(client, doc, EDDIE))["id"]
    await world.restrict(doc)
    eddie = who(EDDIE)

    async def ask(target: str) -> list[tuple[int, str]]:
        responses = [
            await client.get(url(f"/{target}/versions/1/content"), headers=eddie),
            await client.head(url(f"/{target}/versions/1/content"), headers=eddie),
            await client.get(url(f"/{target}/versions/1/pages/1"), headers=eddie),
            await client.get(url(f"/{target}/lease"), headers=eddie),
            await client.post(url(f"/{target}/checkouts"), headers=eddie),
            await client.get(url(f"/{target}/checkouts/{checkout}"), headers=eddie),
            await client.post(url(f"/{target}/checkouts/{checkout}/extend"), headers=eddie),
            await client.post(
                url(f"/{target}/checkouts/{checkout}/check-in"), content=EDITED, headers=eddie
            ),
            await client.delete(url(f"/{target}/checkouts/{checkout}"), headers=eddie),
        ]
        return [(r.status_code, r.text.replace(target, "<id>")) for r in responses]

    hidden = await ask(doc)
    absent = await ask(MISSING)

    assert hidden == absent
    assert {status for status, _ in hidden} == {404}


async def test_with_the_app_off_rest_refuses_writes_for_an_admin_and_reads_go_on(
    world: World, client: httpx2.AsyncClient
) -> None:
    doc = await world.upload(EDDIE)
    world.off()
    ada = who(ADA)

    refused = await client.post(url(f"/{doc}/checkouts"), headers=ada)
    content = await client.get(url(f"/{doc}/versions/1/content"), headers=ada)

    assert refused.status_code == 403
    assert refused.json()["detail"] == {
        "type": "forbidden",
        "message": "files:fake is not enabled in this workspace",
        "integration": "files:fake",
    }
    assert content.status_code == 200
