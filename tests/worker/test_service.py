"""The worker service: its token, its one-job gate, each limit, and what it leaves behind.

Every test runs a real worker on loopback in front of a real app process (the quick stand-in, or
the full one where the app's own misbehaviour is the point), and ends with the worker's scratch
directory empty and none of its apps' processes alive (the fixtures check both).
"""

import asyncio
import io
import itertools
import json
import re
import socket
import time
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from urllib.parse import urlsplit

import docx
import httpx2
import pytest
from worker.artifactr_files_worker import Screening

from artifactr.files.apps.wordcraft import ApplyJob, CommandsJob, InspectJob
from artifactr.files.apps.worker import CONTENT_TYPE, Call, frame
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.screen import ZipLimits, screen
from tests import hostile
from tests.apps.wordcraft.conftest import recorded
from tests.worker.conftest import TOKEN, MakeWorker, Served, counting

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": CONTENT_TYPE}

JobLog = Callable[[], list]


def call_body(job: object = None, data: bytes = b"", deadline: float | None = None) -> bytes:
    call = Call(job=job or InspectJob(), deadline=deadline)
    return frame(call) + data


async def post(
    served: Served, body: object, headers: dict[str, str] | None = None
) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as client:
        return await client.post(served.url + "/jobs", content=body, headers=headers or AUTH)


def raw_exchange(url: str, request: bytes, wait: float = 30.0) -> bytes:
    """Send raw bytes to the worker and return what it answers before it closes.

    ``wait`` only guards against a worker that never answers: the tests wait for the answer.
    """
    where = urlsplit(url)
    answer = b""
    with socket.create_connection((where.hostname, where.port), timeout=wait) as connection:
        connection.sendall(request)
        while chunk := connection.recv(65536):
            answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            length = re.search(rb"content-length: (\d+)", head.lower())
            if length and len(body) >= int(length.group(1)):
                break
    return answer


# ─── the token ────────────────────────────────────────────────────────────────


async def test_the_health_route_needs_no_token_and_says_nothing_about_files(
    make_worker: MakeWorker,
) -> None:
    served = make_worker()
    async with httpx2.AsyncClient() as client:
        health = await client.get(served.url + "/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "running": 0, "waiting": 0}


async def test_a_call_without_the_token_is_refused_before_its_body_is_read(
    make_worker: MakeWorker, job_log: JobLog
) -> None:
    served = make_worker()
    # The body is announced but never sent: the answer comes anyway, so none of it was awaited.
    head = b"POST /jobs HTTP/1.1\r\nHost: worker\r\nContent-Length: 1000000\r\n\r\n"
    answer = raw_exchange(served.url, head)
    assert answer.startswith(b"HTTP/1.1 401")
    assert b"www-authenticate: bearer" in answer.lower()
    assert job_log() == []


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {TOKEN[:-1]}x", f"Basic {TOKEN}", f"Bearer {TOKEN}{TOKEN}", "Bearer", ""],
)
async def test_a_wrong_token_is_refused_and_runs_nothing(
    make_worker: MakeWorker, pids: Path, authorization: str
) -> None:
    served = make_worker()
    reply = await post(served, call_body(), {"Authorization": authorization})
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == "Bearer"
    assert reply.json() == {"reason": "a valid bearer token is required"}
    assert recorded(pids) == []


async def test_the_adapter_with_a_wrong_token_fails_as_crashed_and_with_the_right_one_works(
    make_worker: MakeWorker,
) -> None:
    served = make_worker()
    with pytest.raises(AppCrashed, match="401: a valid bearer token is required"):
        await served.app(token="another-token-0123456789abcdef0123456789").commands()
    assert [spec.id for spec in await served.app().commands()] == ["format.bold", "file.info"]


# ─── one job at a time ────────────────────────────────────────────────────────


async def busy(served: Served, *, running: int, waiting: int) -> None:
    """Wait until the worker's health says a job runs and ``waiting`` calls wait, as they will."""
    async with httpx2.AsyncClient() as client:
        while True:
            health = (await client.get(served.url + "/health")).json()
            if (health["running"], health["waiting"]) == (running, waiting):
                return
            await asyncio.sleep(0.01)


async def test_concurrent_calls_run_one_at_a_time_and_all_succeed(
    make_worker: MakeWorker, job_log: JobLog, pids: Path, report: bytes
) -> None:
    served = make_worker(mode="sleep", env={"QUICK_SLEEP": "0.3"}, queue_wait=30)
    app = served.app()
    inspections = await asyncio.gather(*(app.inspect(report) for _ in range(5)))
    assert {inspection.fingerprint for inspection in inspections} == {fingerprint(report)}
    jobs = sorted(job_log(), key=lambda record: record.started)
    assert len(jobs) == 5
    assert all(record.outcome == "ok" for record in jobs)
    for before, after in itertools.pairwise(jobs):
        assert after.started >= before.ended
    assert len(recorded(pids)) == 5


async def test_a_call_past_a_full_queue_is_refused_at_once_with_retry_after(
    make_worker: MakeWorker, report: bytes, tmp_path: Path
) -> None:
    # The running job can't end until the test opens its gate, and a waiting call would wait
    # longer than the test may run: the refusal comes before either, so it waited for neither.
    gate = tmp_path / "gate"
    served = make_worker(
        mode="gate", env={"QUICK_GATE": str(gate)}, queue=1, queue_wait=3600, retry_after=3
    )
    app = served.app()
    running = asyncio.ensure_future(app.inspect(report))
    await busy(served, running=1, waiting=0)
    waiting = asyncio.ensure_future(app.inspect(report))
    await busy(served, running=1, waiting=1)
    refused = await post(served, call_body(data=report))
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "3"
    assert refused.json() == {"reason": "the worker is busy: its queue is full (1 waiting)"}
    assert not running.done()
    assert not waiting.done()
    gate.touch()
    inspections = await asyncio.gather(running, waiting)
    assert [inspection.fingerprint for inspection in inspections] == [fingerprint(report)] * 2


async def test_a_call_that_waits_past_its_limit_is_refused_with_retry_after(
    make_worker: MakeWorker, report: bytes, tmp_path: Path
) -> None:
    # The running job holds the worker until the test opens its gate: the call's turn can't come.
    gate = tmp_path / "gate"
    served = make_worker(mode="gate", env={"QUICK_GATE": str(gate)}, queue_wait=0.2)
    running = asyncio.ensure_future(served.app().inspect(report))
    await busy(served, running=1, waiting=0)
    refused = await post(served, call_body(data=report))
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "2"
    assert refused.json() == {"reason": "the worker is busy: the call waited 0.2 s for its turn"}
    assert not running.done()
    gate.touch()
    assert (await running).fingerprint == fingerprint(report)


async def test_the_adapter_asks_a_busy_worker_again_after_retry_after(
    make_worker: MakeWorker, job_log: JobLog, report: bytes
) -> None:
    served = make_worker(mode="sleep", env={"QUICK_SLEEP": "1.5"}, queue=0, retry_after=1)
    app = served.app()
    running = asyncio.ensure_future(app.inspect(report))
    await busy(served, running=1, waiting=0)
    started = time.monotonic()
    await app.inspect(report)
    assert time.monotonic() - started >= 1.0
    await running
    assert [record.outcome for record in job_log()] == ["ok", "ok"]


# ─── limits ───────────────────────────────────────────────────────────────────


async def test_a_hung_app_times_out_at_the_workers_deadline_and_its_group_is_killed(
    make_worker: MakeWorker, job_log: JobLog, pids: Path, report: bytes
) -> None:
    served = make_worker("standin", mode="hang", edit_deadline=4.0)
    # The app never answers, and the caller would wait an hour, far past the test's timeout:
    # the answer came, so the worker's own deadline stopped the job.
    with pytest.raises(AppTimeout, match="deadline of 4 s"):
        await served.app().inspect(report, deadline=3600)
    assert [record.deadline for record in job_log()] == [4.0]
    # The stand-in and the child it started, which ignores SIGTERM: the fixture checks both died.
    assert len(recorded(pids)) == 2


async def test_a_crash_is_typed_with_what_the_app_said(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker("standin", mode="crash")
    with pytest.raises(AppCrashed, match=r"exit status 3\).*told to crash"):
        await served.app().inspect(report)


async def test_a_flood_on_the_apps_stdout_is_too_large(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker("standin", mode="flood", max_reply=1024 * 1024)
    with pytest.raises(AppTooLarge, match="more than 1048576 bytes"):
        await served.app().inspect(report)


async def test_a_file_over_the_cap_is_too_large_before_any_app_starts(
    make_worker: MakeWorker, pids: Path
) -> None:
    served = make_worker(max_file=64 * 1024, max_call=1024)
    big = hostile.build(hostile.package(hostile.stored("word/media/a.bin", bytes(200 * 1024))))
    with pytest.raises(AppTooLarge, match="the limit is 66561"):
        await served.app().inspect(big)

    async def streamed() -> AsyncIterator[bytes]:
        yield call_body()
        for _ in range(4):
            yield bytes(32 * 1024)

    refused = await post(served, streamed())
    assert refused.status_code == 413
    assert refused.json() == {
        "failure": "too_large",
        "reason": "the file is over the limit of 65536 bytes",
    }
    assert recorded(pids) == []


async def test_a_call_line_over_its_cap_is_too_large(make_worker: MakeWorker) -> None:
    served = make_worker(max_call=1024)
    for body in (b"{" * 2048, b"{" * 2048 + b"\n"):
        refused = await post(served, body)
        assert refused.status_code == 413
        assert refused.json()["failure"] == "too_large"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "the body holds no call and newline"),
        (b'{"job": {"kind": "inspect"}}', "the body holds no call and newline"),
        (b"not json\n", "the call can't be read"),
        (b'{"job": {"kind": "format_disk"}}\n', "the call can't be read"),
        (b'{"job": {"kind": "inspect"}, "deadline": -1}\n', "the call can't be read"),
    ],
)
async def test_a_call_that_cant_be_read_is_refused(
    make_worker: MakeWorker, body: bytes, reason: str
) -> None:
    served = make_worker()
    refused = await post(served, body)
    assert refused.status_code == 400
    assert refused.json()["failure"] == "refused"
    assert refused.json()["reason"].startswith(reason)


async def test_the_apps_refusal_comes_back_with_its_reason(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker()
    with pytest.raises(AppRefused, match=r"fail\.now: refused"):
        await served.app().apply(report, [AppCommand(command="fail.now")])


async def test_a_command_that_names_a_path_is_refused_before_the_app_starts(
    make_worker: MakeWorker, pids: Path, report: bytes
) -> None:
    served = make_worker()
    with pytest.raises(AppRefused, match="reaches the file system"):
        await served.app().apply(report, [AppCommand(command="file.save", params={"path": "/x"})])
    assert recorded(pids) == []


@pytest.mark.parametrize(
    ("mode", "setting", "said"),
    [
        ("cpu", {"cpu": 1}, r"exit status -(24|9)\)"),
        ("memory", {"memory": 256 * 1024 * 1024}, "MemoryError"),
        ("files", {"open_files": 32}, "Too many open files"),
        ("fsize", {"file_size": 1024 * 1024}, r"File too large|exit status -25\)"),
    ],
    ids=["cpu time", "address space", "open files", "file size"],
)
async def test_each_resource_limit_stops_the_app_as_crashed_before_its_deadline(
    make_worker: MakeWorker,
    job_log: JobLog,
    report: bytes,
    mode: str,
    setting: dict[str, int],
    said: str,
) -> None:
    served = make_worker(mode=mode, **setting)
    # The app misbehaves without end: a crash, not a timeout, is the limit's doing.
    with pytest.raises(AppCrashed, match=said):
        await served.app().inspect(report)
    assert [record.outcome for record in job_log()] == ["crashed"]


async def test_a_hostile_file_is_refused_before_any_app_starts(
    make_worker: MakeWorker, pids: Path
) -> None:
    served = make_worker()
    with pytest.raises(UnsafeFile, match="declares") as refused:
        await served.app().inspect(hostile.zip_bomb())
    assert refused.value.reason == "part_too_large"
    assert recorded(pids) == []


@pytest.mark.parametrize(
    ("page", "scale"),
    [(0, 1.0), (-3, 1.0), (1, 0.0), (1, 1e9), (1, float("nan")), (1, float("inf"))],
    ids=["page 0", "a negative page", "scale 0", "a huge scale", "scale nan", "scale inf"],
)
async def test_a_render_of_no_such_page_or_scale_is_refused_before_any_app_starts(
    make_worker: MakeWorker, pids: Path, report: bytes, page: int, scale: float
) -> None:
    served = make_worker()
    # Sent as the raw line a caller could write: the adapter's own checks are not the guard.
    line = json.dumps({"job": {"kind": "render", "page": page, "scale": scale}})
    response = await post(served, line.encode() + b"\n" + report)
    assert response.status_code == 400
    assert response.json()["failure"] == "refused"
    assert "page" in response.json()["reason"] or "scale" in response.json()["reason"]
    assert recorded(pids) == []


async def test_a_caller_that_goes_away_mid_upload_frees_the_worker(
    make_worker: MakeWorker, job_log: JobLog, report: bytes
) -> None:
    served = make_worker()
    line = call_body()
    head = (
        f"POST /jobs HTTP/1.1\r\nHost: worker\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Length: {len(line) + 100_000}\r\n\r\n"
    ).encode()
    where = urlsplit(served.url)
    with socket.create_connection((where.hostname, where.port)) as connection:
        connection.sendall(head + line + bytes(1000))
        await busy(served, running=1, waiting=0)  # it is reading the upload: now hang up
    async with asyncio.timeout(30):  # the job's end is logged once the worker sees the hang-up
        for _ in itertools.count():
            if job_log():
                break
            await asyncio.sleep(0.02)
    assert [record.outcome for record in job_log()] == ["refused"]
    inspection = await served.app().inspect(report)
    assert inspection.fingerprint == fingerprint(report)


async def test_a_call_whose_body_stalls_is_a_timeout_and_frees_the_worker(
    make_worker: MakeWorker, job_log: JobLog, report: bytes
) -> None:
    served = make_worker(upload_timeout=0.5)
    line = call_body()
    head = (
        f"POST /jobs HTTP/1.1\r\nHost: worker\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Length: {len(line) + 100_000}\r\n\r\n"
    ).encode()
    # The rest of the body never comes, and the connection stays open: the answer came anyway.
    answer = await asyncio.to_thread(raw_exchange, served.url, head + line + bytes(10))
    assert answer.startswith(b"HTTP/1.1 504")
    assert b'"failure":"timeout"' in answer
    assert b"the call took longer than 0.5 s to arrive" in answer
    assert [record.outcome for record in job_log()] == ["timeout"]
    inspection = await served.app().inspect(report)
    assert inspection.fingerprint == fingerprint(report)


# ─── results ──────────────────────────────────────────────────────────────────


async def test_every_kind_of_call_comes_back_whole_with_the_workers_build(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker(build="sha256:" + "ab" * 32)
    app = served.app()
    edited = await app.apply(io.BytesIO(report), [AppCommand(command="format.bold")])
    assert edited.content == report
    assert edited.inspection.fingerprint == fingerprint(report)
    assert edited.inspection.about.model_dump() == {
        "app": "wordcraft",
        "version": "0.4.0-quick",
        "build": "sha256:" + "ab" * 32,
    }
    assert (await app.inspect(report)).pages == 1
    assert (await app.render(report, 1)).startswith(b"\x89PNG\r\n\x1a\n")
    assert [spec.id for spec in await app.commands("bold")] == ["format.bold", "file.info"]


async def test_each_file_is_screened_once_and_the_app_is_given_its_fingerprint(
    make_worker: MakeWorker, report: bytes
) -> None:
    app = make_worker().app()
    with counting(screen) as screenings:
        inspection = await app.inspect(report)
        await app.render(report, 1)
    # The worker screens each upload, and the job runner reads its fingerprint, not the file.
    assert screenings.count == 2
    with counting(screen) as screenings:
        edited = await app.apply(report, [AppCommand(command="format.bold")])
    # An edit's upload is screened once; the file the app saved is another, screened once too.
    assert screenings.count == 2
    assert inspection.fingerprint == edited.inspection.fingerprint == fingerprint(report)


async def test_the_workers_zip_limits_are_the_only_ones_a_file_meets(
    make_worker: MakeWorker, report: bytes
) -> None:
    # Zeros that inflate a thousand times: past the default ratio, within the worker's own.
    zeros = hostile.deflated("word/media/zeros.bin", bytes(2 * hostile.MIB))
    data = hostile.build(
        hostile.package(hostile.deflated("word/document.xml", hostile.DOCUMENT), zeros)
    )
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(data)
    assert refused.value.reason == "inflate_ratio"
    limits = ZipLimits(max_ratio=5_000)
    served = make_worker(screening=Screening(zip=limits))
    inspection = await served.app().inspect(data)
    assert inspection.fingerprint == fingerprint(data, limits=limits)


async def test_a_real_edit_through_the_worker_changes_the_document(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker("standin")
    replace = AppCommand(command="edit.replaceAll", params={"text": "fox", "with": "cat"})
    edited = await served.app().apply(report, [replace], author="Ada")
    paragraphs = [p.text for p in docx.Document(io.BytesIO(edited.content)).paragraphs]
    assert "The quick brown cat jumps over the lazy dog." in paragraphs
    assert "cat" in edited.inspection.text
    assert edited.inspection.outline.splitlines()[0] == "Quarterly report"


async def test_the_result_is_the_outcome_line_then_the_bytes(
    make_worker: MakeWorker, report: bytes
) -> None:
    served = make_worker()
    reply = await post(served, call_body(ApplyJob(), report))
    assert reply.status_code == 200
    assert reply.headers["content-type"] == CONTENT_TYPE
    line, _, content = reply.content.partition(b"\n")
    assert json.loads(line)["app"] == "wordcraft"
    assert json.loads(line)["inspection"]["about"]["app"] == "wordcraft"
    assert content == report
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert "word/document.xml" in archive.namelist()
    listing = await post(served, call_body(CommandsJob()))
    assert json.loads(listing.content.partition(b"\n")[0])["commands"][0]["id"] == "format.bold"
