"""Benchmark: the WOPI host against the files router, on SQLite with grantr (issue 24).

Served as ``make serve`` serves it (:func:`artifactr.files.programs.serve.create_app`: SQLite,
grantr's access, FakeApp), in process, two figures against baselines measured in the same run:

1. A ``PutFile`` of a one-page document under the lock, as a ratio of the same check-in through
   the files router (``POST .../checkouts/{id}/check-in``). Target: at most 1.1x.
2. ``CheckFileInfo`` and ``Lock`` (a repeated Lock, as Collabora re-sends it), p50 in
   milliseconds and as a ratio of the router's ``GET .../lease``. Target: under 5 ms.

Run: ``uv run --no-sync python -m scripts.bench.wopi [--rounds 4] [--quick]`` (``--quick``: one
round of 3 requests each way).
"""

import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx2

from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX
from artifactr.files.programs import serve
from scripts.bench._harness import machine_load, parser, run

ROUNDS = 4
"""Blocks of each measurement, interleaved so the machine's drift falls on both sides."""

BLOCK = 10
"""Requests in each block."""

PAGES = [build_docx([f"A one-page document, saved for the {n} time."]) for n in ("first", "second")]
"""Two one-page documents, saved in turn so every save makes a revision."""

EDDIE = {"x-user": "eddie"}


async def timed(send: Callable[[], Awaitable[httpx2.Response]], times: list[float]) -> None:
    """Send a request, check it succeeded, and record how long it took."""
    start = time.perf_counter()
    response = await send()
    times.append(time.perf_counter() - start)
    assert response.status_code == 200, response.text


async def measure(scratch: Path, rounds: int = ROUNDS, block: int = BLOCK) -> None:
    """Serve the demo in process, measure both figures in interleaved blocks, and print them."""
    lines: list[str] = []
    app = serve.create_app(scratch / "bench.db", corpus=scratch, say=lines.append)
    async with app.router.lifespan_context(app):
        wopi = next(line for line in lines if line.startswith("WOPI "))
        fields = dict(part.split("=", 1) for part in wopi.split()[1:])
        source, token = fields["WOPISrc"], fields["access_token"]
        artifact_id = source.rsplit("/", 1)[1]
        files = f"/workspaces/{serve.WORKSPACE}/files/{artifact_id}"
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as client:
            query = {"access_token": token}

            def wopi_op(override: str) -> Callable[[], Awaitable[httpx2.Response]]:
                headers = {"X-WOPI-Override": override, "X-WOPI-Lock": "bench"}
                return lambda: client.post(
                    f"/wopi/files/{artifact_id}", params=query, headers=headers
                )

            puts: list[float] = []
            check_ins: list[float] = []
            infos: list[float] = []
            locks: list[float] = []
            leases: list[float] = []
            turn = 0
            for _ in range(rounds):
                await wopi_op("LOCK")()
                for _ in range(block):
                    turn += 1
                    body = PAGES[turn % 2]
                    await timed(
                        lambda body=body: client.post(
                            f"/wopi/files/{artifact_id}/contents",
                            params=query,
                            headers={"X-WOPI-Override": "PUT", "X-WOPI-Lock": "bench"},
                            content=body,
                        ),
                        puts,
                    )
                    await timed(
                        lambda: client.get(f"/wopi/files/{artifact_id}", params=query), infos
                    )
                    await timed(wopi_op("LOCK"), locks)
                    await timed(lambda: client.get(f"{files}/lease", headers=EDDIE), leases)
                await wopi_op("UNLOCK")()
                for _ in range(block):
                    turn += 1
                    body = PAGES[turn % 2]
                    checkout = await client.post(f"{files}/checkouts", headers=EDDIE)
                    check_in = f"{files}/checkouts/{checkout.json()['id']}/check-in"
                    await timed(
                        lambda body=body, check_in=check_in: client.post(
                            check_in, content=body, headers={**EDDIE, "content-type": DOCX}
                        ),
                        check_ins,
                    )
    put, check_in = statistics.median(puts), statistics.median(check_ins)
    lease = statistics.median(leases)
    info, lock = statistics.median(infos), statistics.median(locks)
    print(f"WOPI on SQLite with grantr, {len(puts)} saves and {len(check_ins)} check-ins")
    print(
        f"PutFile p50 {put * 1000:.2f} ms, check-in p50 {check_in * 1000:.2f} ms: "
        f"{put / check_in:.2f}x (target <= 1.1x)"
    )
    print(f"GET .../lease p50 {lease * 1000:.2f} ms (the baseline)")
    print(f"CheckFileInfo p50 {info * 1000:.2f} ms: {info / lease:.2f}x the lease read")
    print(f"Lock p50 {lock * 1000:.2f} ms: {lock / lease:.2f}x the lease read (target < 5 ms)")


async def main(rounds: int, block: int) -> None:
    """Run the benchmark in a scratch directory."""
    with TemporaryDirectory() as scratch:
        await measure(Path(scratch), rounds, block)
    print(machine_load())


if __name__ == "__main__":
    arguments = parser(__doc__, quick="one round of 3 requests each way")
    arguments.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds ({ROUNDS})")
    options = arguments.parse_args()
    rounds, block = (1, 3) if options.quick else (options.rounds, BLOCK)
    raise SystemExit(run(lambda: main(rounds, block)))
