"""The worker's adapter: what it sends, and every reply and transport failure mapped to a type.

The adapter talks to a mock transport here, which answers each request with a handler, so every
shape of reply (sound, typed, garbage, too big, busy) and every transport failure is reached; the
service's own tests run it against a real worker.
"""

import io
import json
import math
import socket

import httpx2
import pytest

from artifactr.files.apps import worker as adapter
from artifactr.files.apps.worker import (
    CONTENT_TYPE,
    Call,
    Outcome,
    WordCraftWorker,
    Worker,
    frame,
)
from artifactr.files.core.app_port import AppCommand, CommandSpec, Inspection
from artifactr.files.core.errors import (
    AppCrashed,
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    UnsafeFile,
)

TOKEN = "adapter-token-0123456789abcdef0123456789"
INSPECTION = Inspection.model_validate(
    {"outline": "Title", "text": "Body", "fingerprint": "f" * 64, "about": {"app": "wordcraft"}}
)


def over(handler: object, **options: object) -> Worker:
    transport = httpx2.MockTransport(handler)
    return Worker("http://worker.test/", token=TOKEN, transport=transport, **options)


def same(one: Inspection, other: Inspection) -> bool:
    return one.model_dump(mode="json") == other.model_dump(mode="json")


def result(outcome: Outcome, data: bytes = b"") -> httpx2.Response:
    return httpx2.Response(200, content=frame(outcome) + data)


def test_the_adapter_is_the_worker_rfc_0003_names_and_its_app_is_wordcraft() -> None:
    assert Worker is WordCraftWorker
    app = Worker("http://worker.test:8000/", token=TOKEN)
    assert app.name == "wordcraft"
    assert app.url == "http://worker.test:8000"


async def test_the_adapter_is_named_for_its_workers_app_and_refuses_another_apps_result() -> None:
    said = ["libreoffice"]

    async def handler(_request: httpx2.Request) -> httpx2.Response:
        return result(Outcome(app=said[0], inspection=INSPECTION))

    office = over(handler, app="libreoffice")
    assert office.name == "libreoffice"
    assert same(await office.inspect(b"bytes"), INSPECTION)
    said[0] = "wordcraft"
    with pytest.raises(AppCrashed, match="the worker runs wordcraft, not libreoffice"):
        await office.inspect(b"bytes")


async def test_each_call_sends_the_token_the_call_line_and_the_file_streamed() -> None:
    seen: list[httpx2.Request] = []
    bodies: list[bytes] = []
    source = bytes(range(256)) * 800

    async def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        bodies.append(await request.aread())
        kind = json.loads(bodies[-1].partition(b"\n")[0])["job"]["kind"]
        if kind == "apply":
            return result(Outcome(inspection=INSPECTION), b"saved bytes")
        if kind == "render":
            return result(Outcome(), b"\x89PNG")
        if kind == "commands":
            return result(Outcome(commands=(CommandSpec(id="format.bold"),)))
        return result(Outcome(inspection=INSPECTION))

    app = over(handler)
    batch = [AppCommand(command="format.bold", params={"value": True})]
    edited = await app.apply(source, batch, deadline=12, author="Ada")
    assert edited.content == b"saved bytes"
    assert same(edited.inspection, INSPECTION)
    spooled = io.BytesIO(source)
    spooled.seek(100)
    assert same(await app.inspect(spooled), INSPECTION)
    assert await app.render(source, 2, scale=1.5, deadline=3) == b"\x89PNG"
    assert [spec.id for spec in await app.commands("bold")] == ["format.bold"]

    assert {str(request.url) for request in seen} == {"http://worker.test/jobs"}
    for request, body in zip(seen, bodies, strict=True):
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["content-type"] == CONTENT_TYPE
        assert request.headers["content-length"] == str(len(body))
        assert "transfer-encoding" not in request.headers
    calls = [Call.model_validate_json(body.partition(b"\n")[0]) for body in bodies]
    assert [call.model_dump(exclude_none=True) for call in calls] == [
        {
            "job": {
                "kind": "apply",
                "author": "Ada",
                "commands": ({"command": "format.bold", "params": {"value": True}},),
            },
            "deadline": 12.0,
        },
        {"job": {"kind": "inspect"}, "deadline": 30.0},
        {"job": {"kind": "render", "page": 2, "scale": 1.5}, "deadline": 3.0},
        {"job": {"kind": "commands", "query": "bold"}, "deadline": 30.0},
    ]
    files = [body.partition(b"\n")[2] for body in bodies]
    assert files == [source, source, source, b""]


async def test_a_result_that_lacks_its_inspection_or_catalog_is_a_crash() -> None:
    app = over(lambda request: result(Outcome()))
    with pytest.raises(AppCrashed, match="holds no inspection"):
        await app.inspect(b"file")
    with pytest.raises(AppCrashed, match="holds no catalog"):
        await app.commands()


@pytest.mark.parametrize(
    ("status", "body", "failure", "said"),
    [
        (400, {"failure": "refused", "reason": "no style `X`"}, AppRefused, "no style `X`"),
        (413, {"failure": "too_large", "reason": "too big"}, AppTooLarge, "too big"),
        (502, {"failure": "crashed", "reason": "it died"}, AppCrashed, "it died"),
        (504, {"failure": "timeout", "reason": "too slow"}, AppTimeout, "too slow"),
        (401, {"reason": "a valid bearer token is required"}, AppCrashed, "401: a valid"),
        (500, b"Internal Server Error", AppCrashed, "500: Internal Server Error"),
        (422, {"unsafe": "made_up", "reason": "?"}, AppCrashed, "422: "),
        (200, b"no newline", AppCrashed, "can't be read: no newline"),
        (200, b"not json\n", AppCrashed, "can't be read"),
        (200, b'{"surprise": 1}\n', AppCrashed, "can't be read"),
    ],
    ids=[
        "refused",
        "too large",
        "crashed",
        "timeout",
        "no token",
        "a server error",
        "an unknown refusal",
        "a result without its line",
        "a result that isn't JSON",
        "a result of another shape",
    ],
)
async def test_every_reply_maps_to_its_typed_failure(
    status: int, body: object, failure: type[AppFailure], said: str
) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    app = over(lambda request: httpx2.Response(status, content=content))
    with pytest.raises(failure) as raised:
        await app.inspect(b"file")
    assert said in raised.value.reason


async def test_an_unsafe_file_comes_back_with_its_reason() -> None:
    reply = {"unsafe": "image_too_large", "reason": "word/media/a.png is an image of 1e10 pixels"}
    app = over(lambda request: httpx2.Response(422, json=reply))
    with pytest.raises(UnsafeFile) as raised:
        await app.apply(b"file", [])
    assert raised.value.reason == "image_too_large"
    assert str(raised.value) == "word/media/a.png is an image of 1e10 pixels"


@pytest.mark.parametrize(
    ("error", "failure", "said"),
    [
        (httpx2.ConnectError("refused"), AppCrashed, "can't be reached"),
        (httpx2.RemoteProtocolError("garbled"), AppCrashed, "can't be reached"),
        (httpx2.ReadTimeout("slow"), AppTimeout, "didn't answer in time"),
        (httpx2.ConnectTimeout("slow"), AppTimeout, "didn't answer in time"),
    ],
    ids=["connection refused", "a broken reply", "a read timeout", "a connect timeout"],
)
async def test_every_transport_failure_maps_to_its_typed_failure(
    error: Exception, failure: type[AppFailure], said: str
) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise error

    with pytest.raises(failure, match=said):
        await over(handler).render(b"file", 1)


async def test_a_worker_that_isnt_listening_is_a_crash() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    app = Worker(f"http://127.0.0.1:{port}", token=TOKEN)
    with pytest.raises(AppCrashed, match="can't be reached"):
        await app.inspect(b"file")


async def test_a_result_over_the_cap_is_too_large() -> None:
    app = over(lambda request: result(Outcome(inspection=INSPECTION), bytes(4096)), max_result=1024)
    with pytest.raises(AppTooLarge, match="over the limit of 1024 bytes"):
        await app.apply(b"file", [])


async def test_a_busy_worker_is_asked_again_after_retry_after() -> None:
    replies = [
        httpx2.Response(503, headers={"Retry-After": "0"}, json={"reason": "busy"}),
        httpx2.Response(503, headers={"Retry-After": "0.01"}, json={"reason": "busy"}),
        result(Outcome(inspection=INSPECTION)),
    ]
    asked: list[bytes] = []

    async def handler(request: httpx2.Request) -> httpx2.Response:
        asked.append(await request.aread())
        return replies.pop(0)

    spooled = io.BytesIO(b"the file")
    assert same(await over(handler).inspect(spooled), INSPECTION)
    assert len(asked) == 3
    assert {body.partition(b"\n")[2] for body in asked} == {b"the file"}


async def test_a_worker_busy_past_the_calls_deadline_is_a_timeout() -> None:
    busy = httpx2.Response(503, headers={"Retry-After": "0"}, json={"reason": "busy"})
    app = over(lambda request: busy, slack=0.2)
    with pytest.raises(AppTimeout, match=r"no result within 0\.3 s"):
        await app.inspect(b"file", deadline=0.1)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), ("0.5", 0.5), ("soon", 1.0), ("inf", 1.0), ("-2", 1.0), (None, 1.0)],
)
def test_retry_after_is_read_in_seconds_and_anything_else_waits_a_second(
    header: str | None, seconds: float
) -> None:
    headers = httpx2.Headers({} if header is None else {"Retry-After": header})
    waited = adapter._retry_after(headers)
    assert math.isclose(waited, seconds)


# ─── a fleet ──────────────────────────────────────────────────────────────────

BUSY = httpx2.Response(503, headers={"Retry-After": "0"}, json={"reason": "busy"})


def fleet(answers: dict[str, list[object]], **options: object) -> tuple[Worker, list[str]]:
    """Return an adapter over workers named by host, each answering from its list in turn (an
    exception is raised), and the hosts in the order they were asked."""
    asked: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        asked.append(host)
        answer = answers[host].pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, httpx2.Response)
        return answer

    urls = [f"http://{host}:8000" for host in answers]
    transport = httpx2.MockTransport(handler)
    return Worker(urls, token=TOKEN, transport=transport, **options), asked


def ok() -> httpx2.Response:
    return result(Outcome(inspection=INSPECTION))


def test_a_fleet_keeps_each_worker_s_url_and_needs_one_at_least() -> None:
    app = Worker(["http://one:8000/", "http://two:8000"], token=TOKEN)
    assert (app.urls, app.url) == (("http://one:8000", "http://two:8000"), "http://one:8000")
    with pytest.raises(ValueError, match="at least one worker URL"):
        Worker([], token=TOKEN)


async def test_a_busy_worker_s_job_goes_to_the_next_at_once() -> None:
    app, asked = fleet({"one": [BUSY], "two": [ok()]})
    assert same(await app.inspect(b"file"), INSPECTION)
    assert asked == ["one", "two"]


async def test_jobs_take_turns_over_free_workers() -> None:
    app, asked = fleet({"one": [ok(), ok()], "two": [ok(), ok()]})
    for _ in range(4):
        await app.inspect(b"file")
    assert asked == ["one", "two", "one", "two"]


async def test_a_dead_worker_is_skipped_by_the_next_jobs_and_tried_again_later() -> None:
    refused = httpx2.ConnectError("refused")
    app, asked = fleet({"one": [refused, ok()], "two": [ok(), ok()]}, down_for=3600)
    await app.inspect(b"file")
    await app.inspect(b"file")
    assert asked == ["one", "two", "two"]
    # Once its time is up, it is asked again.
    again, asked = fleet({"one": [refused, ok()], "two": [ok(), ok()]}, down_for=0)
    await again.inspect(b"file")
    await again.inspect(b"file")
    await again.inspect(b"file")
    assert asked == ["one", "two", "two", "one"]


async def test_a_worker_that_drops_a_call_hands_the_job_to_the_next() -> None:
    app, asked = fleet({"one": [httpx2.ReadTimeout("dropped")], "two": [ok()]})
    assert same(await app.inspect(b"file"), INSPECTION)
    assert asked == ["one", "two"]


async def test_when_every_worker_is_busy_the_job_waits_and_goes_round_again() -> None:
    app, asked = fleet({"one": [BUSY, ok()], "two": [BUSY, ok()]})
    assert same(await app.inspect(b"file"), INSPECTION)
    # Both were asked, then, a round later, the first of the next turn.
    assert asked == ["one", "two", "two"]


async def test_when_no_worker_can_be_reached_the_job_fails_as_the_last_one_did() -> None:
    app, asked = fleet({"one": [httpx2.ConnectError("refused")], "two": [httpx2.ConnectError("x")]})
    with pytest.raises(AppCrashed, match="can't be reached"):
        await app.inspect(b"file")
    assert asked == ["one", "two"]
