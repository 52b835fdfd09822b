"""The benches' harness: their arguments, a clean interruption, PostgreSQL schemas, the load.

Every bench in this folder is run the same way, ``python -m scripts.bench.<name>``, and takes
``--help`` and ``--quick`` (a run of seconds that prints every figure, its targets not judged:
what the gate runs, ``tests/test_benches.py``). A bench cleans up what it creates, interrupted
or not: :func:`run` and :func:`interruptible` make SIGTERM interrupt as Ctrl-C does, so every
``finally`` runs, and :func:`postgres_schema` drops its schema whichever way the bench ends.
Modules whose name starts with ``_`` are not benches.
"""

import argparse
import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any, Final

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

POSTGRES: Final = os.environ.get(
    "ARTIFACTR_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
"""The PostgreSQL server the benches use, in schemas of their own."""

INTERRUPTED: Final = 130
"""The exit status of a bench interrupted (and cleaned up), as a shell gives Ctrl-C's."""

QUICK_HELP: Final = (
    "a run of seconds that prints every figure on small inputs; its targets are not judged "
    "(what the gate runs)"
)


def parser(doc: str | None, *, quick: str = "") -> argparse.ArgumentParser:
    """Return an argument parser described by the module's docstring, with ``--quick``.

    Args:
        doc: The bench's module docstring; its first line describes it, the rest is the epilog.
        quick: What ``--quick`` makes smaller, added to its help.
    """
    lines = (doc or "").strip().splitlines()
    made = argparse.ArgumentParser(
        description=lines[0] if lines else None,
        epilog="\n".join(lines[1:]).strip() or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    made.add_argument(
        "--quick", action="store_true", help=QUICK_HELP + (f": {quick}" if quick else "")
    )
    return made


def _interrupt(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise KeyboardInterrupt


def interruptible() -> None:
    """Make Ctrl-C and SIGTERM raise ``KeyboardInterrupt``, so ``finally`` blocks clean up.

    Set for SIGINT too: a shell starts a background job with SIGINT ignored.
    """
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)


def run(main: Callable[[], Coroutine[Any, Any, int | None]]) -> int:
    """Run an async bench; return its exit status (:data:`INTERRUPTED` when interrupted).

    Ctrl-C or SIGTERM cancels the bench's task, whose ``finally`` blocks then run to the end.
    """

    async def supervised() -> int | None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, task.cancel)
        return await main()

    try:
        return asyncio.run(supervised()) or 0
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: cleaned up", file=sys.stderr)
        return INTERRUPTED


def guarded(main: Callable[[], int]) -> int:
    """Run a bench that is not async; return its exit status, as :func:`run` does."""
    interruptible()
    try:
        return main()
    except KeyboardInterrupt:
        print("interrupted: cleaned up", file=sys.stderr)
        return INTERRUPTED


def machine_load() -> str:
    """Return the machine's load averages and cores, to print beside a bench's figures."""
    one, five, fifteen = os.getloadavg()
    cores = len(os.sched_getaffinity(0))
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {cores} cores"


def verdict(missed: bool, quick: bool) -> int:
    """Return a bench's exit status: 1 for a missed target, never in a quick run."""
    if quick:
        print("quick run: the figures above are from small inputs; targets not judged")
        return 0
    return 1 if missed else 0


async def judged(work: Awaitable[bool], quick: bool) -> int:
    """Await a bench that returns whether it missed a target; return its exit status."""
    return verdict(await work, quick)


async def postgres_answers(url: str = POSTGRES) -> bool:
    """Return whether the PostgreSQL server answers."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except (OSError, Exception):
        return False
    finally:
        await engine.dispose()
    return True


@asynccontextmanager
async def postgres_schema(url: str = POSTGRES) -> AsyncGenerator[str]:
    """Yield the name of a new, empty schema of its own; drop it however the block ends."""
    schema = f"bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(url)
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield schema
    finally:
        await _drop(admin, schema)


async def _drop(admin: AsyncEngine, schema: str) -> None:
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        await admin.dispose()


def schema_engine(url: str, schema: str) -> AsyncEngine:
    """Return an engine on ``url`` whose connections work in ``schema``."""
    return create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
