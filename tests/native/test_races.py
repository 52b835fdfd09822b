"""Races on PostgreSQL, two engines as two processes: retries, races and late check-ins.

What browsers and people do every day: retry a check-in while the first is in flight, retry one
that became a proposal, check in late while someone edits, extend while checking in, and check
in a check-out someone else discarded. Each race runs :data:`TRIES` times (fewer past
:data:`BUDGET` seconds on a loaded machine), each on a fresh file with its sides at once through
two engines, and asserts the set of outcomes it may end in. Afterwards every revision and blob
is audited: each revision's patch tests the digest of the revision before it, and every blob's
bytes match their digest. Each race logs its outcomes and timings (``--log-cli-level=INFO``
shows them).
"""

import asyncio
import hashlib
import itertools
import logging
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from artifactr.core import InvalidState, VersionConflict
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import Workspace
from pydantic import JsonValue

from artifactr.files import AppCommand, ArtifactBusy, WordDocument
from artifactr.files.core.integrations import InMemoryIntegrations
from artifactr.files.native import CheckedIn
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from tests.clock import Clock
from tests.databases import another_engine, postgres_schema
from tests.documents import build_docx
from tests.native.conftest import ALICE, BOB, World, chunks
from tests.world import DEADLINE, assemble

pytestmark = pytest.mark.postgres

TRIES = 30
"""How many times each race runs: each on a fresh file."""

BUDGET = 12.0
"""Seconds after which a race stops trying, so a loaded machine stays under the test timeout."""

MIN_TRIES = 5
"""The fewest tries a race makes, whatever the time."""

STAGGER = 0.03
"""How much later, in seconds, one side of a race starts with each try (up to ten steps)."""

LOG = logging.getLogger(__name__)


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[World, World]]:
    """Two services on one PostgreSQL schema through two engines, as two processes."""
    async with postgres_schema() as engine:
        other = await another_engine(engine)
        try:
            await migrate(engine)
            await migrate_files(engine)
            clock = Clock()
            switch = InMemoryIntegrations()
            yield _env(engine, clock, switch), _env(other, clock, switch)
        finally:
            await other.dispose()


def _env(engine: Any, clock: Clock, switch: InMemoryIntegrations) -> World:
    return assemble(
        "postgres",
        SqlStorage(engine),
        SqlBlobs(engine, clock=clock),
        SqlLeases(engine, clock=clock),
        SqlCheckouts(engine),
        SqlRenders(engine),
        switch=switch,
        clock=clock,
        deadline=DEADLINE,
        render_deadline=DEADLINE,
    )


async def attempt(call: Awaitable[Any]) -> tuple[Any, float]:
    """Return what a call returns, or the exception it raises, and how long it took."""
    start = time.perf_counter()
    try:
        result = await call
    except Exception as error:
        result = error
    return result, time.perf_counter() - start


def label(result: Any) -> str:
    """Name an outcome: a check-in's status, a type's name, or an exception's."""
    if isinstance(result, CheckedIn):
        return result.status + (" after a discard" if result.ended_by is not None else "")
    if isinstance(result, Exception):
        return type(result).__name__
    return type(result).__name__


def tries() -> Iterator[int]:
    """Yield the tries' numbers: :data:`TRIES` of them, unless the machine is too slow."""
    start = time.monotonic()
    for n in range(TRIES):
        if n >= MIN_TRIES and time.monotonic() - start > BUDGET:
            return
        yield n


def report(
    race: str, made: Sequence[str], outcomes: Counter[str], timings: Sequence[float]
) -> None:
    quantiles = statistics.quantiles(timings, n=10)
    LOG.info(
        "%s: %d tries, outcomes %s, per side ms p50 %.1f p90 %.1f max %.1f",
        race,
        len(made),
        dict(sorted(outcomes.items())),
        statistics.median(timings) * 1000,
        quantiles[-1] * 1000,
        max(timings) * 1000,
    )


def document(n: int, words: str = "") -> bytes:
    return build_docx([f"Try {n}: the parties agree.{words}"])


async def audit(env: World, artifact_ids: Sequence[str]) -> None:
    """Every revision's patch tests the previous head's digest; every blob matches its digest."""
    ws = await env.ws()
    proposals = await ws.proposals()
    for artifact_id in artifact_ids:
        revisions = await ws.revisions(artifact_id)
        for before, after in itertools.pairwise(revisions):
            assert after.patch is not None
            first = after.patch.model_dump(mode="json")["ops"][0]
            assert first == {
                "op": "test",
                "path": "/content/sha256",
                "value": before.data["content"]["sha256"],
            }
        named = [revision.data for revision in revisions]
        named += [
            proposal.change.model_dump(mode="json")
            for proposal in proposals
            if proposal.artifact_id == artifact_id
        ]
        for sha in {sha for data in named for sha in _digests(data)}:
            data = b"".join([chunk async for chunk in env.blobs.read(env.scope, artifact_id, sha)])
            assert hashlib.sha256(data).hexdigest() == sha


def _digests(data: JsonValue) -> set[str]:
    found: set[str] = set()
    if isinstance(data, dict):
        sha = data.get("sha256")
        if isinstance(sha, str) and "size" in data:
            found.add(sha)
        for value in data.values():
            found |= _digests(value)
    elif isinstance(data, list):
        for value in data:
            found |= _digests(value)
    return found


async def later(n: int, call: Awaitable[Any]) -> Any:
    """Start a call a little later each try, so the races meet at every point of each other."""
    await asyncio.sleep((n % 10) * STAGGER)
    return await call


async def lease_of(env: World, artifact_id: str) -> str | None:
    lease = await env.leases.current(env.scope, artifact_id)
    return None if lease is None else lease.holder


# ─── 1. two check-ins of one check-out at once ────────────────────────────────


@pytest.mark.parametrize("edited", [True, False], ids=["edited", "as downloaded"])
async def test_two_check_ins_of_one_check_out_at_once_answer_alike(
    pair: tuple[World, World], edited: bool
) -> None:
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        original = document(n)
        artifact_id = await first.upload(original)
        made.append(artifact_id)
        checkout = await first.files.check_out(await first.ws(BOB), artifact_id)
        upload = document(n, " Signed.") if edited else original
        sides = [(env, await env.ws(BOB)) for env in pair]
        results = await asyncio.gather(
            *(attempt(env.files.check_in(ws, checkout.id, chunks(upload))) for env, ws in sides)
        )
        answers = [result for result, _ in results]
        outcomes.update(label(answer) for answer in answers)
        timings += [took for _, took in results]
        expected = CheckedIn(
            status="applied" if edited else "unchanged",
            artifact_id=artifact_id,
            version=2 if edited else 1,
        )
        assert answers == [expected, expected], answers
        assert await lease_of(second, artifact_id) is None
        retried = await second.files.check_in(await second.ws(BOB), checkout.id, chunks(upload))
        assert retried == expected
    report(
        f"two check-ins at once ({'edited' if edited else 'as downloaded'})",
        made,
        outcomes,
        timings,
    )
    await audit(first, made)


# ─── 2. a retried check-in that became a proposal ─────────────────────────────


async def test_retries_of_a_check_in_kept_as_a_proposal_answer_the_same_proposal(
    pair: tuple[World, World],
) -> None:
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        artifact_id = await first.upload(document(n))
        made.append(artifact_id)
        checkout = await first.files.check_out(await first.ws(BOB), artifact_id)
        first.clock.advance(timedelta(hours=9))  # the lease lapses
        alices = await first.files.check_out(await first.ws(), artifact_id)
        alice = await first.ws()
        await first.files.check_in(alice, alices.id, chunks(document(n, " Alice's.")))
        upload = document(n, " Bob's.")
        sides = [(env, await env.ws(BOB)) for env in (*pair, first)]
        results = await asyncio.gather(
            *(attempt(env.files.check_in(ws, checkout.id, chunks(upload))) for env, ws in sides)
        )
        answers = [result for result, _ in results]
        outcomes.update(label(answer) for answer in answers)
        timings += [took for _, took in results]
        assert all(isinstance(answer, CheckedIn) for answer in answers), answers
        assert len(set(answers)) == 1, answers
        assert answers[0].status == "proposed"
        assert answers[0].version == 2
        retried = await second.files.check_in(await second.ws(BOB), checkout.id, chunks(upload))
        assert retried == answers[0]
        pending = [p for p in await alice.proposals() if p.artifact_id == artifact_id]
        assert [p.id for p in pending] == [answers[0].proposal_id]
    report("retries of a check-in kept as a proposal", made, outcomes, timings)
    await audit(first, made)


# ─── 3. a stale check-in racing an edit ───────────────────────────────────────


async def test_a_stale_check_in_racing_an_edit_is_always_kept(pair: tuple[World, World]) -> None:
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        artifact_id = await first.upload(document(n, " Draft."))
        made.append(artifact_id)
        checkout = await first.files.check_out(await first.ws(BOB), artifact_id)
        first.clock.advance(timedelta(hours=9))  # the lease lapses
        command = AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": "Final"})
        upload = document(n, " Bob's.")
        (checked, took), (edited, edit_took) = await asyncio.gather(
            attempt(second.files.check_in(await second.ws(BOB), checkout.id, chunks(upload))),
            attempt(
                later(
                    n,
                    first.files.edit(
                        await first.ws(), artifact_id, base_version=1, commands=[command]
                    ),
                )
            ),
        )
        outcomes.update([f"check-in {label(checked)}", f"edit {label(edited)}"])
        timings += [took, edit_took]
        assert isinstance(checked, CheckedIn), checked
        assert isinstance(edited, ArtifactBusy | VersionConflict) or edited.type == "applied"
        ws = await first.ws()
        if checked.status == "proposed":
            pending = [p.id for p in await ws.proposals() if p.artifact_id == artifact_id]
            assert pending == [checked.proposal_id]
        else:
            assert checked.status == "applied"
            assert checked.version == 2
            assert not isinstance(edited, Exception) or "Bob's" in await first.files.text(
                ws, artifact_id, 2
            )
        assert await lease_of(first, artifact_id) is None
    report("a stale check-in racing an edit", made, outcomes, timings)
    await audit(first, made)


# ─── 4. extend racing a check-in ──────────────────────────────────────────────


async def test_extend_racing_a_check_in_never_leaves_the_file_held(
    pair: tuple[World, World],
) -> None:
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        artifact_id = await first.upload(document(n))
        made.append(artifact_id)
        checkout = await first.files.check_out(await first.ws(BOB), artifact_id)
        upload = document(n, " Signed.")
        bob = await first.ws(BOB)

        async def keep_extending(bob: Workspace, checkout_id: str) -> Exception:
            # A browser keeping its check-out alive while the person checks in, until refused.
            for _ in range(1000):
                try:
                    await first.files.extend(bob, checkout_id)
                except Exception as error:
                    return error
            raise AssertionError("extend was never refused")

        (checked, took), (extended, extend_took) = await asyncio.gather(
            attempt(second.files.check_in(await second.ws(BOB), checkout.id, chunks(upload))),
            attempt(later(n, keep_extending(bob, checkout.id))),
        )
        outcomes.update([f"check-in {label(checked)}", f"extend {label(extended)}"])
        timings += [took, extend_took]
        assert checked == CheckedIn(status="applied", artifact_id=artifact_id, version=2)
        assert isinstance(extended, InvalidState), extended
        assert await lease_of(first, artifact_id) is None
        record = await first.files.checkout(await first.ws(BOB), checkout.id)
        assert record.state == "checked_in"
        # The file is free at once: nobody waits eight hours for a check-out that ended.
        assert (await first.files.check_out(await first.ws(), artifact_id)).base_version == 2
    report("extend racing a check-in", made, outcomes, timings)
    await audit(first, made)


# ─── 5. a check-in racing someone discarding its check-out ────────────────────


async def test_a_check_in_racing_a_discard_keeps_the_work_and_says_who_ended_it(
    pair: tuple[World, World],
) -> None:
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        artifact_id = await first.upload(document(n))
        made.append(artifact_id)
        checkout = await first.files.check_out(await first.ws(BOB), artifact_id)
        upload = document(n, " Bob's.")
        (checked, took), (discarded, discard_took) = await asyncio.gather(
            attempt(second.files.check_in(await second.ws(BOB), checkout.id, chunks(upload))),
            attempt(later(n, first.files.discard(await first.ws(ALICE), checkout.id))),
        )
        outcomes.update([f"check-in {label(checked)}", f"discard {label(discarded)}"])
        timings += [took, discard_took]
        assert discarded is None
        assert isinstance(checked, CheckedIn), checked
        ws = await first.ws()
        if checked.ended_by is None:
            assert checked.status == "applied"
            assert "Bob's" in await first.files.text(ws, artifact_id)
        else:
            assert checked.ended_by == ALICE
            assert checked.ended_at == first.clock.now
            assert checked.status in {"applied", "proposed"}
            if checked.status == "proposed":
                pending = [p.id for p in await ws.proposals() if p.artifact_id == artifact_id]
                assert pending == [checked.proposal_id]
        retried = await first.files.check_in(await first.ws(BOB), checkout.id, chunks(upload))
        assert retried == checked
        assert await lease_of(first, artifact_id) is None
    report("a check-in racing a discard", made, outcomes, timings)
    await audit(first, made)


# ─── 6. a check-out racing an edit or a check-in ──────────────────────────────


async def ask_until_granted(
    env: World, ws: Workspace, artifact_id: str, writer: asyncio.Future[Any]
) -> tuple[Any, float]:
    """Press "check out" while the file is busy, until it is granted or the writer is done."""
    while True:
        done = writer.done()
        granted = await attempt(env.files.check_out(ws, artifact_id))
        if not isinstance(granted[0], ArtifactBusy) or done:
            return granted


@pytest.mark.parametrize("writer", ["edit", "check-in"])
async def test_a_check_out_granted_during_a_commit_is_based_on_the_head_it_holds(
    pair: tuple[World, World], writer: str
) -> None:
    """Someone commits and lets go while a person keeps asking to check the file out (ADR-0015).

    The check-out that is granted holds the file from then on, so the head when the race is
    over is the head at grant time: its base must be that head, never the version before.
    """
    first, second = pair
    outcomes: Counter[str] = Counter()
    timings: list[float] = []
    made: list[str] = []
    for n in tries():
        artifact_id = await first.upload(document(n, " Draft."))
        made.append(artifact_id)
        if writer == "edit":
            command = AppCommand(
                command="edit.replaceAll", params={"text": "Draft", "with": "Final"}
            )
            writing = first.files.edit(
                await first.ws(ALICE), artifact_id, base_version=1, commands=[command]
            )
            asker = await second.ws(BOB)
        else:
            bob = await first.ws(BOB)
            bobs = await first.files.check_out(bob, artifact_id)
            writing = first.files.check_in(bob, bobs.id, chunks(document(n, " Bob's.")))
            asker = await second.ws(ALICE)
        task = asyncio.ensure_future(attempt(writing))
        (wrote, took), (granted, ask_took) = await asyncio.gather(
            task, later(n % 4, ask_until_granted(second, asker, artifact_id, task))
        )
        outcomes.update([f"{writer} {label(wrote)}", f"check-out {label(granted)}"])
        timings += [took, ask_took]
        head = await (await first.ws()).get(WordDocument, artifact_id)
        assert not isinstance(granted, Exception), granted
        # Nobody else writes while it is held: the head now is the head at grant time.
        assert (granted.base_version, granted.base_sha256) == (
            head.version,
            head.data.content.sha256,
        ), f"try {n}: granted on version {granted.base_version}, the head is {head.version}"
        await first.files.discard(await first.ws(granted.actor), granted.id)
    report(
        f"a check-out racing {'an edit' if writer == 'edit' else 'a check-in'}",
        made,
        outcomes,
        timings,
    )
    await audit(first, made)
