"""Jobs: how many files the service has the app read at once (ADR-0015).

Having the app read a file (FakeApp parses it in the service's process, or a child of it) takes
seconds of CPU and a hundred mebibytes or more for a file near the limits; the limits bound one
file, and :class:`Jobs` bounds how many run at once: an upload's and a check-in's inspect, an
edit's apply. The package's own screen streams, in a tenth of a second for such a file, and
runs outside the bound, so the retries of one check-in, which wait for its claim, never queue.

At most ``jobs`` run (the CPU count by default); up to ``queue`` more wait their turn, in order,
each for at most ``wait`` seconds. Any more, or one that waited too long, is refused with
:class:`~artifactr.files.core.errors.ServiceBusy` (the router answers 503 with ``Retry-After``),
as the worker refuses a call when its queue is full. A refused call has stored nothing; an
upload or a check-in is refused before its body is read when the queue is full already.

:func:`memory_budget` is what the service's process needs for ``jobs`` jobs at the limits, as
measured by ``scripts/bench/uploads.py``: size a deployment's memory by it.
"""

import asyncio
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Final

from artifactr.files.core.errors import ServiceBusy

JOBS: Final = max(1, os.cpu_count() or 1)
"""How many jobs run at once by default: one a CPU."""

QUEUE: Final = 2 * JOBS
"""How many jobs wait their turn by default."""

WAIT: Final = 60.0
"""How many seconds a job waits for its turn by default."""

RETRY_AFTER: Final = 2
"""The seconds a refusal asks the caller to wait (``Retry-After``)."""

MIB: Final = 1024 * 1024

BASE_MEMORY: Final = 256 * MIB
"""What the service's process holds with no job running (measured: about 130 MiB)."""

JOB_MEMORY: Final = 320 * MIB
"""What one job takes at most, for a file at FakeApp's 500,000 elements (measured: under 300)."""


def memory_budget(jobs: int = JOBS) -> int:
    """Return the bytes the service's process may reach with ``jobs`` jobs at the limits."""
    return BASE_MEMORY + jobs * JOB_MEMORY


class Jobs:
    """At most ``jobs`` at once; up to ``queue`` more wait, in order, each up to ``wait`` s.

    Args:
        jobs: How many run at once (at least 1).
        queue: How many may wait (0: none waits).
        wait: Seconds a job waits for its turn.
    """

    def __init__(self, jobs: int = JOBS, queue: int = QUEUE, wait: float = WAIT) -> None:
        if jobs < 1 or queue < 0 or wait < 0:
            raise ValueError("jobs must be at least 1, and queue and wait at least 0")
        self.jobs = jobs
        """How many run at once."""
        self.queue = queue
        """How many may wait."""
        self.wait = wait
        """Seconds a job waits for its turn."""
        self._slots = asyncio.Semaphore(jobs)
        self._waiting = 0

    @property
    def full(self) -> bool:
        """Whether a job asking now would be refused: every slot taken, the queue full."""
        return self._slots.locked() and self._waiting >= self.queue

    def admit(self) -> None:
        """Refuse at once if the queue is full, before any work is done for the job.

        Raises:
            ServiceBusy: If every slot is taken and ``queue`` jobs wait already.
        """
        if self.full:
            reason = f"{self.jobs} files are being read and {self._waiting} wait"
            raise ServiceBusy(reason, RETRY_AFTER)

    @asynccontextmanager
    async def turn(self) -> AsyncGenerator[None]:
        """Hold a slot for one job; wait for it first, in order, if every slot is taken.

        Raises:
            ServiceBusy: If the queue is full, or the wait passes ``wait`` seconds.
        """
        self.admit()
        self._waiting += 1
        try:
            async with asyncio.timeout(self.wait):
                await self._slots.acquire()
        except TimeoutError:
            reason = f"the file waited {self.wait:g} s for its turn"
            raise ServiceBusy(reason, RETRY_AFTER) from None
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._slots.release()
