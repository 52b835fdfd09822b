"""Processes the tests start: whether one still runs, and killing one and waiting for its end.

Both look at the process by its pid alone, so they serve for a process that is not the test's
child (an app's child, orphaned when the app was killed) as well as for one that is.
"""

import os
import select
import signal
from pathlib import Path


def alive(pid: int) -> bool:
    """Return whether a process is running: a zombie is dead, only not yet reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill(pid: int) -> None:
    """Kill a process with SIGKILL; return once it has ended (it may stay a zombie)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        signal.pidfd_send_signal(handle, signal.SIGKILL)
        # A process's pidfd turns readable when it ends: an event, no timing.
        select.select([handle], [], [])
    finally:
        os.close(handle)
