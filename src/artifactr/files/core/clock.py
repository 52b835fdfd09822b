"""The clock: what time it is, for leases, check-outs and the blob store's grace period."""

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware."""


def utc_now() -> datetime:
    """Return the current UTC time."""
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """Return a time as every response gives one: RFC 3339 in UTC, ``2026-11-30T20:00:00Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
