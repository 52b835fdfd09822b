"""Every page and route costs what it shows (issue 41): statements counted at two sizes.

Each test grows the workspace from 10 to 300 of what the request does not show (files, a file's
revisions, other files' proposals) and counts the statements one request sends at each size, on
SQLite and PostgreSQL: the count is the same. The pages' own paging is checked as a person
follows it: the file list's next and previous files, a file's older versions.
"""

import re
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.portal import FILES_PAGE, HISTORY_PAGE
from artifactr.files.sql import SqlHistory
from tests.fastapi.conftest import ALICE, Api, Dav
from tests.fastapi.test_portal import Portal, portal_over, words
from tests.scale import LARGE, SMALL, longer_history, more_files, proposals
from tests.statements import Statements, whole_lists, whole_reads
from tests.wopi import build_host, in_process

Grow = Callable[[int], Awaitable[None]]
Ask = Callable[[], Awaitable[httpx2.Response]]

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
async def portal(api: Api) -> AsyncIterator[Portal]:
    async with portal_over(api) as opened:
        yield opened


async def counts(statements: Statements, grow: Grow, ask: Ask) -> list[int]:
    """Return the statements ``ask`` sends after growing to each size; assert it is answered."""
    found: list[int] = []
    for size in (SMALL, LARGE):
        await grow(size)
        assert (await ask()).status_code == 200  # warm: the first request loads what it needs
        with statements.counting() as seen:
            response = await ask()
        assert response.status_code == 200, response.text
        assert whole_reads(seen, "artifactr_revisions") == []
        found.append(len(seen))
    return found


async def test_the_file_list_costs_the_same_at_10_and_300_files(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    first = await portal.api.upload()
    await portal.api.check_out(first)
    made = 1

    async def grow(size: int) -> None:
        nonlocal made
        await more_files(ws, first, size - made, prefix=f"g{size}")
        made = size

    found = await counts(statements, grow, lambda: portal.get())
    assert found[0] == found[1], found
    with statements.counting() as seen:
        await portal.get()
    assert whole_lists(seen) == []  # a page of rows, not every file's


async def test_the_file_list_is_paged_with_next_and_previous_links(portal: Portal) -> None:
    ws = await portal.api.ws()
    first = await portal.api.upload()
    await portal.api.check_out(first)
    await more_files(ws, first, FILES_PAGE + 9)

    page = await portal.get()
    assert f"files 1-{FILES_PAGE} of {FILES_PAGE + 10}" in words(page)
    assert "held by Alice" in words(page)
    assert "previous files" not in words(page)
    later = re.findall(r'href="([^"]+)" rel="next"', page.text)
    assert len(later) == 1

    second = await portal.client.get(later[0], headers=ALICE)
    assert f"files {FILES_PAGE + 1}-{FILES_PAGE + 10} of {FILES_PAGE + 10}" in words(second)
    assert "copy-00058.docx" in words(second)
    assert "next files" not in words(second)
    earlier = re.findall(r'href="([^"]+)" rel="prev"', second.text)
    assert (await portal.client.get(earlier[0], headers=ALICE)).text == page.text

    beyond = await portal.get("?start=500")
    assert f"past the last of the {FILES_PAGE + 10} files" in words(beyond)


async def test_a_file_page_costs_the_same_at_10_and_300_revisions(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()

    async def grow(size: int) -> None:
        await longer_history(ws, artifact_id, size)

    found = await counts(statements, grow, lambda: portal.get(f"/{artifact_id}"))
    assert found[0] == found[1], found


async def test_a_file_page_costs_the_same_beside_10_and_300_other_files_proposals(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()
    [other] = await more_files(ws, artifact_id, 1)
    await proposals(ws, artifact_id, 2)
    made = 0

    async def grow(size: int) -> None:
        nonlocal made
        await proposals(ws, other, size - made)
        made = size

    found = await counts(statements, grow, lambda: portal.get(f"/{artifact_id}"))
    assert found[0] == found[1], found


async def test_a_file_page_shows_its_history_newest_first_with_older_links(
    portal: Portal,
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()
    await longer_history(ws, artifact_id, HISTORY_PAGE + 5)
    [mine] = await proposals(ws, artifact_id, 1)

    page = await portal.get(f"/{artifact_id}")
    versions = re.findall(r"<tr><td>(\d+)</td>", page.text)
    assert versions[0] == str(HISTORY_PAGE + 5)
    assert len(versions) == HISTORY_PAGE
    assert mine in page.text
    older = re.findall(r'href="([^"]+)" rel="next">older versions', page.text)

    rest = await portal.client.get(older[0], headers=ALICE)
    assert re.findall(r"<tr><td>(\d+)</td>", rest.text) == ["5", "4", "3", "2", "1"]
    assert "uploaded" in words(rest)
    assert "older versions" not in words(rest)
    assert "newest versions" in words(rest)


async def test_a_diff_page_costs_the_same_at_10_and_300_revisions(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()

    async def grow(size: int) -> None:
        await longer_history(ws, artifact_id, size)

    found = await counts(statements, grow, lambda: portal.get(f"/{artifact_id}/diff?from=1&to=2"))
    assert found[0] == found[1], found


async def test_a_proposal_page_costs_the_same_at_10_and_300_revisions(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()
    made: list[str] = []

    async def grow(size: int) -> None:
        await longer_history(ws, artifact_id, size)
        made[:] = await proposals(ws, artifact_id, 1)

    found = await counts(
        statements, grow, lambda: portal.get(f"/{artifact_id}/proposals/{made[0]}")
    )
    assert found[0] == found[1], found


@pytest.mark.parametrize("route", ["content", "pages/1"])
async def test_an_old_versions_download_and_page_cost_the_same_at_10_and_300_revisions(
    api: Api, statements: Statements, route: str
) -> None:
    ws = await api.ws()
    artifact_id = await api.upload()

    async def grow(size: int) -> None:
        await longer_history(ws, artifact_id, size)

    async def ask() -> httpx2.Response:
        return await api.client.get(api.url(f"/{artifact_id}/versions/1/{route}"), headers=ALICE)

    found = await counts(statements, grow, ask)
    assert found[0] == found[1], found


@pytest.mark.parametrize("asked", ["PROPFIND 0", "PROPFIND 1", "PROPFIND file", "GET"])
async def test_webdav_costs_the_same_at_10_and_300_files(
    dav: Dav, statements: Statements, asked: str
) -> None:
    api = dav.api
    ws = await api.ws()
    first = await api.upload()
    await api.check_out(first)  # a lock to discover
    made = 1

    async def grow(size: int) -> None:
        nonlocal made
        await more_files(ws, first, size - made, prefix=f"g{size}", blobs=api.blobs)
        made = size

    async def ask() -> httpx2.Response:
        method, _, what = asked.partition(" ")
        name = "" if what in ("0", "1") else "contract.docx"
        headers = {**ALICE, "depth": what if what in ("0", "1") else "0"}
        answer = await dav.client.request(method, dav.url(name), headers=headers)
        assert answer.status_code in (200, 207), answer.text
        return httpx2.Response(200)

    found = await counts(statements, grow, ask)
    assert found[0] == found[1], found
    with statements.counting() as seen:
        await ask()
    if asked != "PROPFIND 1":  # a file is found by its name's row, not the workspace's list
        assert whole_lists(seen) == []


async def test_wopi_check_file_info_costs_the_same_at_10_and_300_revisions_and_files(
    engine: AsyncEngine, statements: Statements
) -> None:
    async with in_process(await build_host(engine, history=SqlHistory(engine))) as host:
        ws = await host.ws()
        artifact_id = await host.upload()
        made = 1

        async def grow(size: int) -> None:
            nonlocal made
            await longer_history(ws, artifact_id, size)
            await more_files(ws, artifact_id, size - made, prefix=f"g{size}")
            made = size

        async def ask() -> httpx2.Response:
            answer = await host.call(artifact_id)
            assert answer.json()["Version"] == str((await ws.get(NativeFile, artifact_id)).version)
            return answer

        found = await counts(statements, grow, lambda: host.call(artifact_id))
        assert found[0] == found[1], found
        assert (await ask()).json()["BaseFileName"] == "contract.docx"


async def test_a_proposal_page_costs_the_same_beside_10_and_300_pending_proposals(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()
    [other] = await more_files(ws, artifact_id, 1)
    [mine] = await proposals(ws, artifact_id, 1)
    made = 0

    async def grow(size: int) -> None:
        nonlocal made
        await proposals(ws, other, size - made)
        await proposals(ws, artifact_id, size - made)
        made = size

    found = await counts(statements, grow, lambda: portal.get(f"/{artifact_id}/proposals/{mine}"))
    assert found[0] == found[1], found


async def test_an_outdated_proposals_page_costs_the_same_at_10_and_300_revisions_since(
    portal: Portal, statements: Statements
) -> None:
    ws = await portal.api.ws()
    artifact_id = await portal.api.upload()
    [mine] = await proposals(ws, artifact_id, 1)  # on version 1, the file then moves on

    async def grow(size: int) -> None:
        await longer_history(ws, artifact_id, size)

    found = await counts(statements, grow, lambda: portal.get(f"/{artifact_id}/proposals/{mine}"))
    assert found[0] == found[1], found
