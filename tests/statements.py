"""Statements counted: how many SQL statements a block of a test sends to its database.

A ``before_cursor_execute`` listener on the engine counts every statement any connection of it
runs, artifactr's and the package's alike. The scale tests (issue 41) count a request at two
sizes and assert the count does not grow with what the request does not show.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


@dataclass
class Statements:
    """The statements an engine ran while :meth:`counting`, in order."""

    engine: AsyncEngine
    seen: list[str] = field(default_factory=list[str])

    def _count(self, *args: Any) -> None:
        self.seen.append(str(args[2]))

    @contextmanager
    def counting(self) -> Iterator[list[str]]:
        """Count the statements run in the block; yield the list they are added to."""
        self.seen = []
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._count)
        try:
            yield self.seen
        finally:
            event.remove(self.engine.sync_engine, "before_cursor_execute", self._count)


def whole_reads(seen: list[str], table: str) -> list[str]:
    """Return the statements that read ``table`` neither by a version nor a page (``LIMIT``).

    A statement count stays flat when one statement reads every row; this finds such a read.
    """
    return [
        sql
        for sql in seen
        if f"FROM {table}" in sql and f"{table}.version =" not in sql and "LIMIT" not in sql
    ]


def whole_lists(seen: list[str]) -> list[str]:
    """Return the statements that send every file's row: artifactr's list, neither one file's
    read (by its id), a page (``LIMIT``) nor a count.
    """
    table = "artifactr_artifacts"
    return [
        sql
        for sql in seen
        if f"FROM {table}" in sql
        and f"{table}.id =" not in sql
        and "LIMIT" not in sql
        and "count(" not in sql
    ]
