"""What a WOPI lock operation costs the database, on SQLite and PostgreSQL (issue 42).

An editor sends ``Lock`` again and again while a document is open (Collabora re-sends it to keep
the lock), so each lock operation is held to a budget: two connections, the head's read through
the workspace and one transaction for the session's record and lease (ADR-0034), and a few
statements. The budgets are counts, never times: a change that reads the manifest again, asks
the edit right twice or opens a connection per call fails here before it shows in the bench.
"""

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.statements import Statements
from tests.wopi import WORKSPACE, Host, build_host, in_process

BUDGETS: dict[str, dict[str, int]] = {
    # Before issue 42: 14, 16, 8 and 15 statements on SQLite, in 7, 8, 4 and 7 connections.
    "LOCK": {"sqlite": 6, "postgresql": 5},
    "REFRESH_LOCK": {"sqlite": 7, "postgresql": 6},
    "GET_LOCK": {"sqlite": 5, "postgresql": 4},
    "UNLOCK": {"sqlite": 8, "postgresql": 7},
}
"""The most statements each operation may send, on an open session, per backend."""


@pytest.fixture
async def host(engine: AsyncEngine) -> AsyncIterator[Host]:
    async with in_process(await build_host(engine)) as made:
        yield made


@contextmanager
def connections(engine: AsyncEngine) -> Iterator[list[int]]:
    """Count the connections the block takes from the engine's pool."""
    taken = [0]

    def count(*args: Any) -> None:
        del args
        taken[0] += 1

    pool = engine.sync_engine.pool
    event.listen(pool, "checkout", count)
    try:
        yield taken
    finally:
        event.remove(pool, "checkout", count)


async def cost(
    engine: AsyncEngine, statements: Statements, ask: Callable[[], Awaitable[httpx2.Response]]
) -> tuple[int, list[str]]:
    """Return the connections and statements one request takes; assert it is answered."""
    with connections(engine) as taken, statements.counting() as seen:
        response = await ask()
    assert response.status_code == 200, response.text
    return taken[0], list(seen)


def writes(seen: list[str]) -> list[str]:
    """Return the statements that write, as their verb and table."""
    found = (
        re.match(r"(INSERT) INTO (\w+)|(UPDATE) (\w+)|(DELETE) FROM (\w+)", sql) for sql in seen
    )
    return [" ".join(part for part in match.groups() if part) for match in found if match]


async def test_each_lock_operation_keeps_to_two_connections_and_its_statements(
    host: Host, engine: AsyncEngine, statements: Statements
) -> None:
    artifact_id = await host.upload()
    dialect = engine.dialect.name
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")).status_code == 200

    def op(override: str) -> Callable[[], Awaitable[httpx2.Response]]:
        return lambda: host.call(artifact_id, override, X_WOPI_Lock="L1")

    async def lease() -> httpx2.Response:
        path = f"/workspaces/{WORKSPACE}/files/{artifact_id}/lease"
        return await host.http.get(path, headers={"x-user": "eddie"})

    baseline, _ = await cost(engine, statements, lease)
    found: dict[str, tuple[int, list[str]]] = {}
    for override in ("LOCK", "REFRESH_LOCK", "GET_LOCK", "UNLOCK"):
        found[override] = await cost(engine, statements, op(override))
    for override, (taken, seen) in found.items():
        assert taken <= baseline == 2, (override, taken, seen)
        assert len(seen) <= BUDGETS[override][dialect], (override, seen)
        # The manifest is read once, through the workspace; the gate keeps the file's kind.
        assert sum("FROM artifactr_artifacts" in sql for sql in seen) == 1, (override, seen)
    lease_writes = ["INSERT artifactr_files_leases", "UPDATE artifactr_files_checkouts"]
    assert writes(found["LOCK"][1]) == lease_writes
    assert writes(found["REFRESH_LOCK"][1]) == lease_writes
    assert writes(found["GET_LOCK"][1]) == []
    assert writes(found["UNLOCK"][1]) == [
        "UPDATE artifactr_files_checkouts",
        "DELETE artifactr_files_leases",
    ]


async def test_a_lock_refused_writes_nothing_and_the_holder_keeps_the_file(host: Host) -> None:
    artifact_id = await host.upload()
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock="L1")).status_code == 200
    refused = await host.call(artifact_id, "REFRESH_LOCK", X_WOPI_Lock="L2")
    assert (refused.status_code, refused.headers["X-WOPI-Lock"]) == (409, "L1")
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == "L1"
    assert (await host.call(artifact_id, "UNLOCK", X_WOPI_Lock="L1")).status_code == 200
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == ""
