"""The worker's settings and entry points: the environment read, a bad one refused, each served.

The entry points (the worker's and the editor's) are called with uvicorn replaced by a recorder,
so what they would serve, and where, is checked without a port; the hostile corpus's test starts
the worker's for real, as a process of its own.
"""

import runpy
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient
from worker.artifactr_files_worker import Misconfigured, Screening, Settings, editor, service

from artifactr.files.apps.libreoffice import machine_size
from artifactr.files.apps.wordcraft import MAX_FILE

TOKEN = "settings-token-0123456789abcdef0123456789"


def test_the_defaults_are_the_documented_limits() -> None:
    settings = Settings.from_env({"WORKER_TOKEN": TOKEN})
    assert settings.token == TOKEN
    assert settings.app == "wordcraft"
    assert settings.cli == ("wordcraft-cli",)
    assert (settings.soffice, settings.uno_python) == ("soffice", "/usr/bin/python3")
    assert settings.pdf_cache == 64 * 2**20
    # The pool is sized from the machine: a core each, as its memory allows, at most 4.
    assert (settings.pool, settings.pool_memory, settings.pool_warm) == (
        machine_size(),
        0,
        ("docx",),
    )
    assert Settings(token=TOKEN).pool == machine_size()
    assert Settings.from_env({"WORKER_TOKEN": TOKEN, "WORKER_POOL": "0"}).pool == 0  # no pool
    with pytest.raises(Misconfigured, match="WORKER_POOL must be at least 0, not -1"):
        Settings.from_env({"WORKER_TOKEN": TOKEN, "WORKER_POOL": "-1"})
    assert 1 <= machine_size() <= 4
    assert dict(settings.app_env) == {}
    assert settings.build is None
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert (settings.edit_deadline, settings.render_deadline) == (30.0, 10.0)
    assert (settings.queue, settings.queue_wait, settings.retry_after) == (4, 5.0, 2)
    assert settings.upload_timeout == 30.0
    assert (settings.max_file, settings.max_reply, settings.max_call) == (MAX_FILE, MAX_FILE, 2**20)
    assert (settings.cpu, settings.memory, settings.file_size, settings.open_files) == (
        None,
        2**30,
        2 * MAX_FILE,
        64,
    )
    assert settings.screening == Screening()
    assert TOKEN not in repr(settings)


def test_every_setting_is_read_from_the_environment(tmp_path: Path) -> None:
    secret = tmp_path / "worker_token"
    secret.write_text(f"{TOKEN}\n")
    environ = {
        "WORKER_TOKEN_FILE": str(secret),
        "WORKER_TOKEN": "ignored-when-a-file-is-named",
        "WORKER_APP": "libreoffice",
        "LIBREOFFICE_SOFFICE": "/opt/libreoffice/program/soffice",
        "LIBREOFFICE_PYTHON": "/usr/bin/python3.11",
        "WORKER_PDF_CACHE": "1000000",
        "WORKER_POOL": "2",
        "WORKER_POOL_MEMORY": "400000000",
        "WORKER_POOL_WARM": "docx, pptx",
        "WORDCRAFT_CLI": "/opt/wordcraft/bin/wordcraft-cli --quiet 'two words'",
        "WORKER_PASS_ENV": "LANG, MISSING,",
        "LANG": "C.UTF-8",
        "WORKER_BUILD": "sha256:" + "ef" * 32,
        "WORKER_HOST": "0.0.0.0",
        "WORKER_PORT": "9000",
        "WORKER_EDIT_DEADLINE": "20",
        "WORKER_RENDER_DEADLINE": "7.5",
        "WORKER_QUEUE": "2",
        "WORKER_QUEUE_WAIT": "3",
        "WORKER_UPLOAD_TIMEOUT": "9",
        "WORKER_RETRY_AFTER": "4",
        "WORKER_MAX_FILE": "1000",
        "WORKER_MAX_REPLY": "2000",
        "WORKER_MAX_CALL": "300",
        "WORKER_CPU": "12",
        "WORKER_MEMORY": "5000000",
        "WORKER_FILE_SIZE": "6000",
        "WORKER_OPEN_FILES": "40",
        "WORKER_MAX_DEPTH": "100",
        "WORKER_MAX_ELEMENTS": "1000",
        "WORKER_MAX_TOKEN": "4096",
        "WORKER_MAX_PIXELS": "1000000",
        "WORKER_MAX_NESTING": "1",
    }
    settings = Settings.from_env(environ)
    assert settings.token == TOKEN
    assert settings.app == "libreoffice"
    assert settings.soffice == "/opt/libreoffice/program/soffice"
    assert (settings.uno_python, settings.pdf_cache) == ("/usr/bin/python3.11", 1_000_000)
    assert (settings.pool, settings.pool_memory) == (2, 400_000_000)
    assert settings.pool_warm == ("docx", "pptx")
    assert Settings.from_env({"WORKER_TOKEN": TOKEN, "WORKER_POOL_WARM": "none"}).pool_warm == ()
    assert settings.cli == ("/opt/wordcraft/bin/wordcraft-cli", "--quiet", "two words")
    assert dict(settings.app_env) == {"LANG": "C.UTF-8"}
    assert settings.build == "sha256:" + "ef" * 32
    assert (settings.host, settings.port) == ("0.0.0.0", 9000)
    assert (settings.edit_deadline, settings.render_deadline) == (20.0, 7.5)
    assert (settings.queue, settings.queue_wait, settings.retry_after) == (2, 3.0, 4)
    assert settings.upload_timeout == 9.0
    assert (settings.max_file, settings.max_reply, settings.max_call) == (1000, 2000, 300)
    assert (settings.cpu, settings.memory, settings.file_size, settings.open_files) == (
        12,
        5_000_000,
        6000,
        40,
    )
    assert settings.screening == Screening(
        max_depth=100, max_elements=1000, max_token=4096, max_pixels=1_000_000, max_nesting=1
    )


def test_a_jobs_cpu_time_follows_its_deadline_unless_it_is_set() -> None:
    assert Settings(token=TOKEN).cpu_for(9.2) == 10
    assert Settings(token=TOKEN).cpu_for(0.2) == 1
    assert Settings(token=TOKEN, cpu=3).cpu_for(30) == 3


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({}, "no token: set WORKER_TOKEN_FILE"),
        ({"WORKER_TOKEN": "   "}, "no token"),
        ({"WORKER_TOKEN": "short"}, "at least 32 characters"),
        ({"WORKER_TOKEN_FILE": "/nonexistent/worker_token"}, "can't be read"),
        ({"WORKER_TOKEN": TOKEN, "WORKER_PORT": "eighty"}, "WORKER_PORT must be a whole number"),
        ({"WORKER_TOKEN": TOKEN, "WORKER_QUEUE": "0"}, "WORKER_QUEUE must be positive"),
        ({"WORKER_TOKEN": TOKEN, "WORKER_QUEUE_WAIT": "soon"}, "WORKER_QUEUE_WAIT must be a"),
        ({"WORKER_TOKEN": TOKEN, "WORKER_EDIT_DEADLINE": "inf"}, "must be a positive number"),
        ({"WORKER_TOKEN": TOKEN, "WORKER_RENDER_DEADLINE": "-1"}, "must be a positive number"),
        (
            {"WORKER_TOKEN": TOKEN, "WORKER_APP": "word"},
            "WORKER_APP must be one of wordcraft, libreoffice, not 'word'",
        ),
        (
            {"WORKER_TOKEN": TOKEN, "WORKER_POOL_WARM": "docx,odt"},
            "WORKER_POOL_WARM must name docx, xlsx, pptx .* or none, not 'docx,odt'",
        ),
        ({"WORKER_TOKEN": TOKEN, "WORKER_POOL_WARM": " , "}, "WORKER_POOL_WARM must name"),
    ],
    ids=[
        "no token",
        "a blank token",
        "a short token",
        "an unreadable token file",
        "a port that isn't a number",
        "an empty queue",
        "a wait that isn't a number",
        "an endless deadline",
        "a negative deadline",
        "an app it can't run",
        "a format a pooled office can't warm up for",
        "no format to warm up for",
    ],
)
def test_a_missing_or_bad_setting_is_refused(environ: dict[str, str], said: str) -> None:
    with pytest.raises(Misconfigured, match=said):
        Settings.from_env(environ)


class Recorder:
    """Stands in for ``uvicorn.run``: keeps what it would serve, and how."""

    def __init__(self) -> None:
        self.app: object = None
        self.options: dict[str, object] = {}

    def __call__(self, app: object, **options: object) -> None:
        self.app = app
        self.options = options


def test_python_m_serves_the_worker_where_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(uvicorn, "run", recorder)
    for name, value in {
        "WORKER_TOKEN": TOKEN,
        "WORKER_HOST": "0.0.0.0",
        "WORKER_PORT": "8123",
    }.items():
        monkeypatch.setenv(name, value)
    runpy.run_module("worker.artifactr_files_worker", run_name="__main__")
    assert isinstance(recorder.app, Starlette)
    assert recorder.options["host"] == "0.0.0.0"
    assert recorder.options["port"] == 8123
    assert recorder.options["server_header"] is False
    assert recorder.options["limit_concurrency"] == 4 + 16


def test_the_worker_refuses_to_start_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uvicorn, "run", Recorder())
    with pytest.raises(SystemExit, match="artifactr-files-worker: no token"):
        service.serve({})


def test_a_libreoffice_worker_refuses_to_start_where_the_office_cant_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(uvicorn, "run", Recorder())
    environ = {
        "WORKER_TOKEN": TOKEN,
        "WORKER_APP": "libreoffice",
        "LIBREOFFICE_SOFFICE": "no-such-soffice",
    }
    with pytest.raises(SystemExit, match="LibreOffice can't run: no `no-such-soffice` on the PATH"):
        service.serve(environ)


def test_the_editor_serves_its_build_under_the_editors_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tmp_path / "wordcraft-web"
    build.mkdir()
    (build / "index.html").write_text("<html><script>boot()</script></html>")
    (build / "NOTICE").write_text("WordCraft NOTICE")
    (build / "_headers").write_text("/*\n  X-Other: 1")
    with TestClient(editor.app({"EDITOR_BUILD": str(build)})) as client:
        page = client.get("/")
        notice = client.get("/NOTICE")
        hidden = client.get("/_headers")
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "'wasm-unsafe-eval'" in page.headers["content-security-policy"]
    assert notice.text == "WordCraft NOTICE"
    assert hidden.status_code == 404

    recorder = Recorder()
    monkeypatch.setattr(uvicorn, "run", recorder)
    for name, value in {
        "EDITOR_BUILD": str(build),
        "EDITOR_HOST": "0.0.0.0",
        "EDITOR_PORT": "8081",
    }.items():
        monkeypatch.setenv(name, value)
    runpy.run_path(editor.__file__, run_name="__main__")
    assert isinstance(recorder.app, Starlette)
    assert (recorder.options["host"], recorder.options["port"]) == ("0.0.0.0", 8081)
