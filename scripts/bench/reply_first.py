"""Benchmark: a LibreOffice edit answers before its office is torn down, in one run.

Each round edits a new one-page ``.docx`` (one ``paragraph.append``) on a pooled office, and
times two moments of the same job: when the edit answered (the reply, ADR-0027) and when its
office was gone (``LibreOffice.reaped()``: every process killed and waited for, its directory
wiped), which is when the reply came before. The baseline is the second: the ratio is the reply's
share of the job as it was. Each figure is the median of the rounds; the machine's load average is
printed beside them.

Run: ``uv run --no-sync python scripts/bench/reply_first.py [--rounds 8] [--quick]``.
"""

import argparse
import asyncio
import os
import statistics
import sys
import time

from artifactr.files.apps.libreoffice import LibreOffice, available
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.documents import build_docx

EDIT = (AppCommand(command="paragraph.append", params={"text": "Answered first."}),)
"""The batch each round runs: one command."""


async def ready(app: LibreOffice) -> None:
    """Wait (up to a minute) until the pool's office is ready: the job is timed, not its start."""
    app.fill_pool()
    for _ in range(1200):
        if app.pool_status().ready:
            return
        await asyncio.sleep(0.05)


async def rounds(count: int) -> list[tuple[float, float]]:
    """Return each round's seconds to the reply and to the office's end."""
    app = LibreOffice(pool=1)
    timed: list[tuple[float, float]] = []
    try:
        for number in range(count):
            await ready(app)
            source = build_docx((("Heading1", f"Round {number}"), "A one-page document."))
            start = time.perf_counter()
            await app.apply(source, EDIT)
            answered = time.perf_counter() - start
            await app.reaped()
            timed.append((answered, time.perf_counter() - start))
    finally:
        await app.close()
    return timed


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the figures; 1 where LibreOffice can't run here."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=8, help="edits timed (default 8)")
    parser.add_argument("--quick", action="store_true", help="two rounds, in seconds")
    options = parser.parse_args(argv)
    found = available()
    if not found:
        print("LibreOffice can't run here: " + "; ".join(found.missing), file=sys.stderr)
        return 1
    timed = asyncio.run(rounds(2 if options.quick else options.rounds))
    reply = statistics.median(answered for answered, _ in timed)
    whole = statistics.median(ended for _, ended in timed)
    print(f"rounds: {len(timed)}, load average {os.getloadavg()[0]:.2f}")
    print(f"pooled edit, reply:            {reply:.3f} s")
    print(f"pooled edit, office gone:      {whole:.3f} s (the baseline: the reply before)")
    print(f"reply / office gone:           {reply / whole:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
