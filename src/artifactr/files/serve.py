"""Serve: the files router beside artifactr's, on the embedded default, to try by hand (RFC-0003).

``python -m artifactr.files.serve`` serves :func:`~artifactr.files.router.files_router` and
artifactr's ``artifactr_router`` on 127.0.0.1 with uvicorn, over a SQLite file (``out/serve.db``,
made afresh and migrated), with FakeApp as the app. The ``x-user`` header names the caller; there
is no other authentication, so it listens on the loopback address only. It uploads one document
as alice (the corpus's, or a small generated one) and prints the curl lines that check it out,
download it and check it in::

    python -m artifactr.files.serve --port 8000
"""

import argparse
import os
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from artifactr import Runner, Session, UserActor, Workspaces
from artifactr.core import Actor, Applied
from artifactr.fastapi import Unauthorized, artifactr_router
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from fastapi import FastAPI
from fastapi.requests import HTTPConnection
from pydantic_ai import Agent

from artifactr.files.documents import build_docx
from artifactr.files.fake import FakeApp
from artifactr.files.manifests import DOCX, WordDocument
from artifactr.files.native import NativeFiles
from artifactr.files.router import files_router
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files

CORPUS = Path(os.environ.get("ARTIFACTR_FILES_CORPUS", "../shared/corpus/real"))
"""The real documents (``ARTIFACTR_FILES_CORPUS``, else ``../shared/corpus/real``), if there."""

DOCUMENT = "pydocx-comments-rich-para.docx"
"""The corpus document it seeds."""

TENANT = "demo"
"""The one tenant every caller belongs to."""

WORKSPACE = "w1"
"""The workspace it seeds."""

Say = Callable[[str], None]
"""Where the served address and the curl lines go."""


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the caller named by the ``x-user`` header, as a person.

    Raises:
        Unauthorized: If the header is missing or empty.
    """
    user = connection.headers.get("x-user", "").strip()
    if not user:
        raise Unauthorized("name yourself with an x-user header")
    return TENANT, UserActor(id=user, name=user.title())


def seed_document(corpus: Path = CORPUS) -> tuple[str, bytes]:
    """Return the document to seed: the corpus's, or a small generated one without it."""
    path = corpus / DOCUMENT
    if path.is_file():
        return DOCUMENT, path.read_bytes()
    paragraphs = (("Title", "Contract"), ("Heading1", "Terms"), "Draft terms for review.")
    return "contract.docx", build_docx(paragraphs)


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def create_app(
    database: Path,
    *,
    base_url: str = "http://127.0.0.1:8000",
    corpus: Path = CORPUS,
    say: Say = _say,
) -> FastAPI:
    """Return the app: both routers over a SQLite file, seeded with one document on start-up.

    Its lifespan migrates the database, uploads the document as alice and says how to check it
    out and in with curl; it disposes of the engine on shutdown.

    Args:
        database: The SQLite file; it is made if missing.
        base_url: Where the app is reached, for the curl lines.
        corpus: Where the document to seed is looked for.
        say: Where the lines go: standard output if omitted.
    """
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{database}")
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        app=FakeApp(),
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
    )
    workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
    # The agent never runs unless a client posts to a thread; then it is pydantic-ai's test model.
    runner = Runner(Agent("test", deps_type=Session[None]), app=None)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncGenerator[None]:
        await migrate(engine)
        await migrate_files(engine)
        ws = await workspaces.open(TENANT, WORKSPACE, actor=UserActor(id="alice", name="Alice"))
        name, data = seed_document(corpus)
        outcome = await files.upload(ws, name, _once(data), media_type=DOCX)
        assert isinstance(outcome, Applied), "a person's upload is applied"
        _instructions(say, base_url, f"{WORKSPACE}/files/{outcome.artifact_id}", name)
        try:
            yield
        finally:
            await runner.aclose()
            await engine.dispose()

    app = FastAPI(title="artifactr.files", lifespan=lifespan)
    app.include_router(artifactr_router(workspaces, runner, resolve_actor=resolve_actor))
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    return app


def _instructions(say: Say, base_url: str, file: str, name: str) -> None:
    url = f"{base_url}/workspaces/{file}"
    curl = "curl -s -H 'x-user: alice'"
    read_id = "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"id\"])'"
    say(f"serving artifactr and the files router at {base_url} (x-user names you)")
    say(f"seeded {name} at {url}")
    say("check it out, download it, edit it, and check it in:")
    say(f"  CO=$({curl} -X POST {url}/checkouts | {read_id})")
    say(f"  {curl} -o '{name}' {url}/versions/1/content")
    say(
        f"  {curl} -X POST -H 'content-type: {DOCX}' --data-binary @'{name}' "
        f"{url}/checkouts/$CO/check-in"
    )


def server(
    database: Path,
    *,
    port: int = 8000,
    limit_max_requests: int | None = None,
    say: Say = _say,
) -> uvicorn.Server:
    """Return a uvicorn server for :func:`create_app` on 127.0.0.1, ready to ``serve()``.

    Args:
        database: The SQLite file.
        port: The port to listen on.
        limit_max_requests: Stop after this many requests; serve until stopped if None.
        say: Where the lines go.
    """
    base_url = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(
        create_app(database, base_url=base_url, say=say),
        host="127.0.0.1",
        port=port,
        limit_max_requests=limit_max_requests,
        log_config=None,
        access_log=False,
    )
    return uvicorn.Server(config)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until stopped, on a database made afresh (``--database``, ``out/serve.db``)."""
    parser = argparse.ArgumentParser(prog="python -m artifactr.files.serve")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--database", type=Path, default=Path("out") / "serve.db")
    parser.add_argument("--limit-max-requests", type=int, default=None)
    options = parser.parse_args(argv)
    options.database.parent.mkdir(parents=True, exist_ok=True)
    options.database.unlink(missing_ok=True)
    server(options.database, port=options.port, limit_max_requests=options.limit_max_requests).run()


if __name__ == "__main__":
    main()
