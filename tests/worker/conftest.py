"""Fixtures for the worker: the service on loopback, its app, its scratch space and its leftovers.

Each worker runs for real: uvicorn in a background thread, on a free port of 127.0.0.1, in front of
a real app process. The app is the quick stand-in (``quick.py``, the worker's mechanics, a fraction
of a second a job), the full one (``tests/apps/wordcraft/standin.py``, real edits, seconds a job,
since it imports the MCP SDK), or the real LibreOffice (seconds a job; skipped where it can't run,
except in CI).

Every test that starts a worker gets a scratch directory as the temporary directory of the
worker and of its jobs (``tempfile.tempdir``), which must be empty when the test ends, and a file
its apps write their pids to, none of which may still be alive.
"""

import logging
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
import uvicorn
from worker.artifactr_files_worker import Settings, create_app

from artifactr.files.apps.worker import Worker
from tests.apps.wordcraft.conftest import STANDIN, recorded, report_document, saved
from tests.office import need_office
from tests.pids import alive

QUICK = Path(__file__).with_name("quick.py")
"""The quick stand-in."""

TOKEN = "test-token-0123456789abcdef0123456789abcdef"
"""The bearer token every test worker is given."""

START_TIMEOUT = 60.0
"""Seconds a worker may take to start before it is taken to hang: never hit by a slow start."""


@dataclass(frozen=True)
class Served:
    """A running worker: where it listens, and what it was told."""

    url: str
    settings: Settings

    def app(self, **options: Any) -> Worker:
        """Return the package's adapter for this worker, named for its app."""
        return Worker(self.url, **{"token": TOKEN, "app": self.settings.app, **options})


MakeWorker = Callable[..., Served]


@dataclass
class Calls:
    """How many times a function has started, in any thread."""

    count: int = 0


@contextmanager
def counting(function: Callable[..., Any]) -> Iterator[Calls]:
    """Count every call of ``function`` while the block runs, in every thread.

    Nothing is replaced: :mod:`sys.monitoring` reports each start of the function's own code,
    so the worker's thread and its helpers are counted as they really run.
    """
    monitoring = sys.monitoring
    tool = next(tool for tool in range(6) if monitoring.get_tool(tool) is None)
    code: CodeType = function.__code__
    calls = Calls()

    def started(_code: CodeType, _offset: int) -> None:
        calls.count += 1

    monitoring.use_tool_id(tool, "tests.worker.counting")
    try:
        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        monitoring.set_local_events(tool, code, monitoring.events.PY_START)
        yield calls
    finally:
        monitoring.set_local_events(tool, code, monitoring.events.NO_EVENTS)
        monitoring.register_callback(tool, monitoring.events.PY_START, None)
        monitoring.free_tool_id(tool)


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """Run the worker on a free port of 127.0.0.1 in a thread; yield its URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    # The lifespan runs: at shutdown LibreOffice's pool and template profile go.
    config = uvicorn.Config(create_app(settings), lifespan="on", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    # Wait for the worker to be ready; the bound only tells a worker that hangs from a slow one.
    started = time.monotonic()
    while not server.started:
        assert thread.is_alive(), "the worker didn't start"
        assert time.monotonic() - started < START_TIMEOUT, "the worker hangs at its start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


@pytest.fixture(scope="session")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the stand-ins write their bytecode: never the virtual environment or the tree."""
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """The file the test's apps write their pids to; none may outlive the test."""
    path = tmp_path / "pids"
    yield path
    assert [pid for pid in recorded(path) if alive(pid)] == []


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary directory of the worker and its jobs; empty when the test ends."""
    path = tmp_path / "scratch"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    yield path
    assert sorted(path.iterdir()) == []


@pytest.fixture
def make_worker(scratch: Path, pids: Path, pycache: Path) -> Iterator[MakeWorker]:
    """Return a factory of running workers over the quick stand-in or the full one.

    ``app`` is ``"quick"``, ``"standin"`` or ``"libreoffice"`` (the real office, or a skip);
    ``mode`` the stand-in's misbehaviour
    (``QUICK_MODE`` or ``STANDIN_MODE``); ``env`` more variables for the app; any other keyword
    is a :class:`Settings` field.
    """
    with ExitStack() as stack:

        def make(
            app: str = "quick",
            *,
            mode: str = "",
            env: dict[str, str] | None = None,
            **overrides: Any,
        ) -> Served:
            if app == "libreoffice":
                need_office()
                # No pool unless the test is about one: a machine-sized pool in every test's
                # worker would start offices the tests don't use.
                overrides.setdefault("pool", 0)
                settings = Settings(token=TOKEN, app="libreoffice", **overrides)
                return Served(stack.enter_context(serving(settings)), settings)
            program = QUICK if app == "quick" else STANDIN
            app_env = {"PYTHONPYCACHEPREFIX": str(pycache), "STANDIN_PIDS": str(pids)}
            if mode:
                app_env["QUICK_MODE" if app == "quick" else "STANDIN_MODE"] = mode
            settings = Settings(
                token=TOKEN,
                cli=(sys.executable, str(program)),
                app_env=app_env | (env or {}),
                **overrides,
            )
            return Served(stack.enter_context(serving(settings)), settings)

        yield make


@pytest.fixture
def report() -> bytes:
    """A short report (a title, two headings, two paragraphs), as .docx bytes."""
    return saved(report_document())


@pytest.fixture
def job_log(caplog: pytest.LogCaptureFixture) -> Callable[[], list[logging.LogRecord]]:
    """Return a reader of the jobs the worker logged so far, in the order they ended."""
    caplog.set_level(logging.INFO, logger="artifactr_files_worker")

    def read() -> list[logging.LogRecord]:
        return [record for record in caplog.records if record.name == "artifactr_files_worker"]

    return read
