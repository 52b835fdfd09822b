"""A pool of offices started ahead, each used for exactly one job and then killed (ADR-0019).

:class:`Pool` keeps up to ``size`` jobs' offices started (their driver, their office on a fresh
copy of the template profile, sealed as any job), one after another, each waiting for the one
job it will run. An office is ready once its driver says its office answers, after it has warmed
up on a document of its own for the kinds its runner names (``Runner.warm``;
``driver/warmup.py``); one that doesn't say so within ``deadline`` seconds, or stops, is killed
and the pool says why. :meth:`Pool.take` hands out the oldest office, ready or still starting
(either is ahead of one started then), waiting for one whose driver is being spawned if the pool
holds none yet (or is still making the runner, the template profile's first start, that
its first office needs: a job on a pool filled at start-up never starts an office of its
own), and starts a replacement in the background; the job kills
it at its end as it kills any job. No office ever sees a second user document. While the
offices' resident memory is at ``memory`` bytes or more (0: no cap), no more are started.
:meth:`Pool.status` reports the size, how many are ready or starting, their memory, and how
many jobs took a pooled office or found none (ADR-0033). :func:`machine_size` is the size the
programs that run an office (the served program, the worker, the demo) default to.
"""

import asyncio
import logging
import os
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from artifactr.files.apps import processes
from artifactr.files.apps.libreoffice._process import Office, Runner, end, ready, start
from artifactr.files.core.errors import AppCrashed

logger = logging.getLogger("artifactr.files.apps.libreoffice")

PAGE: Final = os.sysconf("SC_PAGE_SIZE")
"""Bytes in a memory page, as ``/proc/<pid>/statm`` counts them."""

START_DEADLINE: Final = 120.0
"""Seconds an office may take to start and warm up before the pool kills it."""

OFFICE_MEMORY: Final = 1024 * 1024 * 1024
"""Bytes of the machine's memory :func:`machine_size` sets aside for each pooled office: its
idle 120-180 MiB, and the job it runs, which may load a long document."""

MAX_SIZE: Final = 4
"""The most offices :func:`machine_size` keeps started ahead, however large the machine."""


def machine_size(cores: int | None = None, memory: int | None = None) -> int:
    """Return how many offices to keep started ahead on this machine (ADR-0033).

    One per core (each job and each office's start takes about one), no more than the memory
    holds at :data:`OFFICE_MEMORY` each, at most :data:`MAX_SIZE`, and at least one.

    Args:
        cores: The cores this process may run on; the machine's if None.
        memory: The machine's bytes of memory; read from the system if None.
    """
    if cores is None:
        cores = len(os.sched_getaffinity(0))
    if memory is None:
        memory = os.sysconf("SC_PHYS_PAGES") * PAGE
    return max(1, min(cores, memory // OFFICE_MEMORY, MAX_SIZE))


@dataclass(frozen=True)
class PoolStatus:
    """What the pool holds now."""

    size: int
    """How many offices it keeps ready."""
    ready: int
    """How many have said their office is ready (started, warmed up)."""
    idle_memory: int
    """Resident bytes of the offices it holds and everything they started."""
    memory: int
    """The most idle bytes it starts more offices under (0: no cap)."""
    pids: tuple[int, ...]
    """The drivers of the offices it holds, ready or starting, in the order they are handed
    out."""
    starting: int = 0
    """How many are still starting or warming up."""
    taken: int = 0
    """Jobs that ran on an office the pool started ahead."""
    missed: int = 0
    """Jobs that found the pool empty and started an office of their own (a cold start)."""


class Pool:
    """Offices started ahead, one job each."""

    def __init__(
        self,
        size: int,
        memory: int,
        runner: Callable[[], Awaitable[Runner]],
        deadline: float = START_DEADLINE,
    ) -> None:
        self.size = size
        self.memory = memory
        self.deadline = deadline
        self._runner = runner
        self._offices: deque[Office] = deque()
        self._filling: asyncio.Task[None] | None = None
        self._spawning: asyncio.Future[None] | None = None
        self._taken = 0
        self._missed = 0

    async def take(self) -> Office | None:
        """Return the oldest office, ready or starting (its driver alive), or None.

        An office whose driver is being spawned is ahead of one the job would start: with none
        held yet, it waits for that spawn (its processes exist), never for the office's start;
        so it does while the filler makes the runner its first office needs (the template
        profile's first start, which a job of its own would wait for too). Its replacement
        starts in the background.
        """
        if not self._offices and self._spawning is not None:
            await asyncio.wait([self._spawning])  # the filler holds it (or not) by then
        office = None
        while self._offices and office is None:
            candidate = self._offices.popleft()
            if candidate.process.returncode is None:
                office = candidate
            else:
                await processes.to_the_end(end(candidate))
        if office is not None:
            self._taken += 1
        elif self.size:
            self._missed += 1
        self.fill()
        return office

    def fill(self) -> None:
        """Start offices in the background until the pool is full (or at its memory cap).

        A job that comes before the filler's first step waits for it, as for any spawn.
        """
        if self.size and (self._filling is None or self._filling.done()):
            loop = asyncio.get_running_loop()
            self._spawning = loop.create_future()
            self._filling = loop.create_task(self._fill(self._spawning))

    async def _fill(self, spawned: "asyncio.Future[None]") -> None:
        loop = asyncio.get_running_loop()
        try:
            while len(self._offices) < self.size:
                if self.memory and idle_memory(self._offices) >= self.memory:
                    return
                self._spawning = spawned
                try:
                    office = await start(await self._runner())
                except AppCrashed as error:
                    logger.warning("libreoffice's pool could not start an office: %s", error)
                    return
                finally:
                    # A job waiting on it resumes once this step has held the office, or not.
                    _settle(spawned)
                    self._spawning = None
                self._offices.append(office)
                why = await ready(office, self.deadline)
                if office.cold():
                    logger.warning(
                        "libreoffice's pool could not warm an office up: %s", office.cold()
                    )
                if why and office in self._offices:
                    self._offices.remove(office)
                    await processes.to_the_end(end(office))  # reaped whole, even if it closes
                    logger.warning("libreoffice's pool could not start an office: %s", why)
                    return
                spawned = loop.create_future()
        finally:
            _settle(spawned)  # a step announced (by fill) but never taken: nothing under way
            self._spawning = None

    def status(self) -> PoolStatus:
        """Return the pool's size, how many offices are ready, and their resident memory."""
        answered = sum(office.ready() for office in self._offices)
        return PoolStatus(
            self.size,
            answered,
            idle_memory(self._offices),
            self.memory,
            tuple(office.process.pid for office in self._offices),
            len(self._offices) - answered,
            self._taken,
            self._missed,
        )

    async def close(self) -> None:
        """Stop filling and kill every office it holds."""
        if self._filling is not None:
            self._filling.cancel()
            await asyncio.gather(self._filling, return_exceptions=True)
        while self._offices:
            await processes.to_the_end(end(self._offices.popleft()))


def _settle(spawned: "asyncio.Future[None]") -> None:
    """Let the jobs waiting on a step of the filler go on."""
    if not spawned.done():
        spawned.set_result(None)


def idle_memory(offices: "deque[Office]") -> int:
    """Return the resident bytes of the offices' processes and all they started."""
    parents: dict[int, int] = {}
    resident: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        # A process may end while it is read: it then counts for nothing.
        with suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            pages = int((entry / "statm").read_text().split()[1])
            parents[int(entry.name)] = int(stat[1])
            resident[int(entry.name)] = pages * PAGE
    roots = {office.process.pid for office in offices}
    total = 0
    for pid, pages in resident.items():
        ancestor = pid
        while ancestor > 1 and ancestor not in roots:
            ancestor = parents.get(ancestor, 0)
        if ancestor in roots:
            total += pages
    return total
