"""A clock the tests move by hand, for leases, blobs' put times and check-outs."""

from datetime import UTC, datetime, timedelta


class Clock:
    """Returns a fixed time until a test moves it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta
