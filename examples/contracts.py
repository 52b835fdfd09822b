"""Contracts: a complete FastAPI application on artifactr.files, with an agent that edits.

A team keeps its contracts as Word documents. People upload them, ask the assistant for an edit
(which arrives as a proposal that someone accepts), check a file out to edit it in their word
processor, and check it in. This module is the whole server; ``examples/walkthrough.py`` is a
client that does each of those things over HTTP.

- **State**: one SQLite file, with artifactr's tables and this package's, migrated at start-up.
- **Files**: :class:`~artifactr.files.NativeFiles` with :class:`~artifactr.files.FakeApp`;
  WordCraft in its sandbox is ``Worker(url, token=...)`` in its place.
- **Access**: the app's switch (on) around the application's own ``authorize``, which here lets
  every named person do everything; the guide's access section puts grantr there.
- **The agent**: artifactr's ``ArtifactWorkspace`` capability and this package's
  ``native_file_tools``, run by artifactr's ``Runner``. Its model is :func:`assistant`, a script,
  unless you name a real one (``--model anthropic:claude-sonnet-4-5``, with pydantic-ai's
  provider extra installed and its key in the environment).
- **HTTP**: artifactr's router (threads, messages, proposals) and the files router (upload,
  check-out, check-in, downloads), with the ``x-user`` header naming the caller.

Serve it with ``python -m examples.contracts`` (127.0.0.1:8000); ``make example`` serves it and
walks through it in one go.
"""

import argparse
import os
import re
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import uvicorn
from artifactr import Runner, UserActor, Workspaces
from artifactr.agent import ArtifactWorkspace, Session, function_model
from artifactr.core import Actor
from artifactr.fastapi import Unauthorized, artifactr_router
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from artifactr.workspace import Access
from fastapi import FastAPI
from fastapi.requests import HTTPConnection
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo

from artifactr.files import (
    App,
    FakeApp,
    InMemoryIntegrations,
    NativeFiles,
    SqlBlobs,
    SqlCheckouts,
    SqlHistory,
    SqlLeases,
    SqlRenders,
    WordDocument,
    files_router,
    integration_gate,
    native_file_tools,
)
from artifactr.files.sql import migrate as migrate_files

TENANT: Final = "acme"
"""The one tenant every caller belongs to."""

WORKSPACE: Final = "contracts"
"""The team's workspace."""

NOTE: Final = "Reviewed by the assistant."
"""What the scripted assistant adds at the end of a file."""

INSTRUCTIONS: Final = (
    "You edit the team's Word documents. Read a file with read_native, find the word "
    "processor's commands with find_commands, and change the file with edit_native, naming the "
    "version you read. Your edits are proposals that a person accepts. If a person has the file "
    "checked out, say who and until when, and stop."
)
"""What a real model is told; the script needs no telling."""


# ─── the agent ────────────────────────────────────────────────────────────────


def assistant(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    """Answer as a model would: add :data:`NOTE` to the file the person names, then report.

    The person names the file and the version they see (``art_… v1``). The first step calls
    ``edit_native`` with a batch of the app's commands; once the tool answers, the script says
    what the tool said. Run through artifactr's ``Runner`` by :func:`function_model`, which
    streams as the Runner needs (pydantic-ai's ``FunctionModel`` alone has no stream function).
    """
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else ()
    for part in parts:
        if isinstance(part, ToolReturnPart) and part.tool_name == "edit_native":
            return ModelResponse(parts=[TextPart(str(part.content))])
    asked = " ".join(
        part.content
        for part in parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    )
    named = re.search(r"(art_\w+) v(\d+)", asked)
    if named is None:
        return ModelResponse(parts=[TextPart("Which file? Name it and its version: art_... v1.")])
    arguments: dict[str, object] = {
        "artifact_id": named[1],
        "base_version": int(named[2]),
        "commands": [
            {"command": "caret.docEnd", "params": {}},
            {"command": "text.newParagraph", "params": {}},
            {"command": "text.insert", "params": {"text": NOTE}},
        ],
        "summary": "add a review note at the end",
    }
    return ModelResponse(parts=[ToolCallPart("edit_native", arguments)])


# ─── who is calling ───────────────────────────────────────────────────────────


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the caller the ``x-user`` header names, as a person of :data:`TENANT`.

    Your application authenticates here (a session cookie, a bearer token).

    Raises:
        Unauthorized: If the header is missing or empty (401).
    """
    user = connection.headers.get("x-user", "").strip()
    if not user:
        raise Unauthorized("name yourself with an x-user header")
    return TENANT, UserActor(id=user, name=user.title())


async def authorize(_tenant: str, _workspace: str | None, _actor: Actor, _access: Access) -> bool:
    """Allow every named person everything: the application's own rule goes here."""
    return True


# ─── the application ──────────────────────────────────────────────────────────


def create_app(
    database: Path, *, app: App | None = None, model: Model | str | None = None
) -> FastAPI:
    """Return the application over a SQLite file, which its start-up makes and migrates.

    Args:
        database: The SQLite file.
        app: The native app; :class:`~artifactr.files.FakeApp` if omitted.
        model: The agent's model, as pydantic-ai names one (``"anthropic:claude-sonnet-4-5"``),
            or the scripted :func:`assistant` if omitted.
    """
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{database}")
    storage = SqlStorage(engine)
    switch = InMemoryIntegrations()  # every app on; an admin's store in production
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        app=app or FakeApp(),
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        history=SqlHistory(engine),
        integrations=switch,
    )
    workspaces = Workspaces(
        storage,
        types=[WordDocument],
        authorize=integration_gate(switch, files.key_of, storage, authorize=authorize),
    )
    agent = Agent(
        model or function_model(assistant),
        deps_type=Session[None],
        instructions=INSTRUCTIONS,
        capabilities=[ArtifactWorkspace(types=[WordDocument])],
        toolsets=[native_file_tools(files)],
    )
    runner = Runner(agent, app=None)  # app= is what tools find as ctx.deps.app

    @asynccontextmanager
    async def lifespan(_api: FastAPI) -> AsyncGenerator[None]:
        await migrate(engine)  # artifactr's tables first
        await migrate_files(engine)  # then this package's
        try:
            yield
        finally:
            await runner.aclose()  # stop the runs of this process
            await engine.dispose()

    api = FastAPI(title="contracts", lifespan=lifespan)
    api.include_router(artifactr_router(workspaces, runner, resolve_actor=resolve_actor))
    api.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    return api


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the application on 127.0.0.1 until stopped."""
    parser = argparse.ArgumentParser(prog="python -m examples.contracts")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--database", type=Path, default=Path("out") / "contracts.db")
    parser.add_argument("--model", default=os.environ.get("EXAMPLE_MODEL"))
    options = parser.parse_args(argv)
    options.database.parent.mkdir(parents=True, exist_ok=True)
    api = create_app(options.database, model=options.model)
    uvicorn.run(api, host="127.0.0.1", port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
