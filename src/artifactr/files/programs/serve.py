"""Serve: the files router, the portal and MCP beside artifactr's router, to try by hand.

``python -m artifactr.files.programs.serve --port 8000`` serves, on 127.0.0.1 over a fresh SQLite
file (``out/serve.db``), the portal at ``/``, :func:`~artifactr.files.fastapi.router.files_router`
and artifactr's router, and artifactr's MCP server with the native file tools at ``/mcp``. The app
is the demo's choice (:func:`~artifactr.files.programs.demo.choose_app`), which it says first.
Access is grantr's, as the guide wires it.

The caller is a person chosen on the portal, or named by the ``x-user`` header: neither is
authentication, so it listens on loopback only. Rita is a ``viewer``, eddie and erin
``editor`` s, olive owns the tenant; any other name is refused. Eddie uploads one document, an
assistant's run for olive proposes an edit, and the curl lines that try each answer are printed.

It serves all three kinds: eddie's contract, a workbook and a deck are seeded side by side.

The WOPI host (:mod:`artifactr.files.fastapi.wopi`) is mounted too, its tokens signed with
``ARTIFACTR_FILES_WOPI_SECRET`` (a random secret per run if unset), and the job prints one line
for eddie's document, the three arguments a WOPI validator or an editor takes::

    WOPI WOPISrc=<url> access_token=<token> access_token_ttl=<ms>

With ``ARTIFACTR_FILES_WOPI_DISCOVERY`` (an editor's discovery URL, Collabora's
``https://<host>/hosting/discovery``), requests' proofs are verified with its keys.

A deployment configures it by its environment (:mod:`.settings`, ADR-0025): with
``ARTIFACTR_FILES_DATABASE_URL`` it is one replica of many over a shared PostgreSQL database,
which ``--migrate`` migrates once; a replica seeds nothing, and refuses to start on a database
``--migrate`` hasn't brought to its schema. Every replica answers every request: nothing a
request needs stays in one process's memory (``docs/deploy.md`` lists what does, and why it is
safe).
"""

import argparse
import asyncio
import hashlib
import os
import secrets
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Final

import uvicorn
from artifactr import AgentActor, Runner, Session, UserActor, Workspaces
from artifactr.core import Actor, Applied, ExternalAgentActor, Forbidden, SystemActor
from artifactr.fastapi import Unauthorized, artifactr_router
from artifactr.mcp import ArtifactrMcp, McpContext
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import ACTIONS
from fastapi import FastAPI
from fastapi.requests import HTTPConnection
from fastapi.responses import RedirectResponse
from grantr import Agent as GrantrAgent
from grantr import Grants, InMemoryStorage, Resource, ServicePrincipal, Subject, User
from pydantic_ai import Agent
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import App, AppCommand
from artifactr.files.core.clock import utc_now
from artifactr.files.core.documents import build_docx, build_pptx, build_xlsx
from artifactr.files.core.errors import AppRefused
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.core.manifests import (
    DOCX,
    PPTX,
    XLSX,
    NativeFile,
    Presentation,
    Spreadsheet,
    WordDocument,
)
from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.editor_buttons import DavLinks, editor_buttons, editor_origins
from artifactr.files.fastapi.portal import PERSON_COOKIE, Person, portal_router
from artifactr.files.fastapi.router import files_router
from artifactr.files.fastapi.webdav import file_link, webdav_router
from artifactr.files.fastapi.wopi import WopiSettings, wopi_router, wopi_src
from artifactr.files.fastapi.wopi_discovery import DiscoveryCache
from artifactr.files.fastapi.wopi_tokens import mint_access_token
from artifactr.files.mcp import add_native_file_tools
from artifactr.files.native import NativeFiles
from artifactr.files.programs.demo import choose_app, start_app, stop_app
from artifactr.files.programs.settings import (
    DATABASE_URL,
    Deployment,
    Misconfigured,
    app_from,
    blobs_from,
    database_url,
    read_deployment,
    schema_behind,
    settings_help,
)
from artifactr.files.sql import SqlCheckouts, SqlHistory, SqlLeases, SqlRenders, sqlite_engine
from artifactr.files.sql import migrate as migrate_files

CORPUS = Path(os.environ.get("ARTIFACTR_FILES_CORPUS", "../shared/corpus/real"))
"""The real documents (``ARTIFACTR_FILES_CORPUS``, else ``../shared/corpus/real``), if there."""

DOCUMENT = "pydocx-comments-rich-para.docx"
"""The corpus document it seeds."""

TENANT = "demo"
"""The one tenant every caller belongs to."""

WORKSPACE = "w1"
"""The workspace it seeds."""

READER = UserActor(id="rita", name="Rita")
"""A ``viewer`` of the workspace: she downloads, views pages and sees the lease, and no more."""

EDITOR = UserActor(id="eddie", name="Eddie")
"""An ``editor`` of the workspace: he uploaded the document, and checks it out and in."""

SECOND_EDITOR = UserActor(id="erin", name="Erin")
"""Another ``editor``: she sees who holds the file, and decides on proposals."""

PEOPLE = (
    Person(id=READER.id, name="Rita", role="viewer"),
    Person(id=EDITOR.id, name="Eddie", role="editor"),
    Person(id=SECOND_EDITOR.id, name="Erin", role="editor"),
)
"""Whom the page offers to act as."""

ASSISTANT = AgentActor(thread_id="thr_seed", run_id="run_seed", on_behalf_of=UserActor(id="olive"))
"""An agent's run for olive, whose seeded edit is a proposal waiting for an editor."""

OWNER = "olive"
"""The tenant's owner, who granted the two people their roles at start-up."""

KINDS: Final[tuple[type[NativeFile], ...]] = (WordDocument, Spreadsheet, Presentation)
"""The kinds it serves: documents, workbooks and decks."""

KINDS_SAID: Final = (".docx", ".xlsx", ".pptx")
"""The kinds as the printed line names them."""

EMBEDDED: Final = Deployment.model_construct()
"""The embedded default: nothing set, a SQLite file, the local app, secrets of its own."""

APPLICATION = ServicePrincipal(id="artifactr-files")
"""The application's own principal: the runner and the collector act as it."""

Say = Callable[[str], None]
"""Where the served address and the curl lines go."""


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the caller named by the ``x-user`` header, else the page's chosen person.

    Neither is authentication: anyone may name anyone.

    Raises:
        Unauthorized: If neither names anyone.
    """
    user = connection.headers.get("x-user", "").strip()
    user = user or connection.cookies.get(PERSON_COOKIE, "").strip()
    if not user:
        raise Unauthorized("name yourself with an x-user header, or choose a person on the page")
    return TENANT, UserActor(id=user, name=user.title())


async def resolve_client(ctx: McpContext) -> tuple[str, ExternalAgentActor]:
    """Return the MCP client, acting for the person the ``x-user`` header names.

    It is no authentication, as :func:`resolve_actor` is none.

    Raises:
        Forbidden: If the header names no one.
    """
    user = ((ctx.headers or {}).get("x-user") or "").strip()
    if not user:
        raise Forbidden("name the person the MCP client acts for with an x-user header")
    person = UserActor(id=user, name=user.title())
    assistant = f"{person.display_name}'s assistant"
    return TENANT, ExternalAgentActor(client_id="mcp", name=assistant, on_behalf_of=person)


def subject_of(_tenant: str, _workspace: str | None, actor: Actor) -> Subject:
    """Return the grantr subject an artifactr actor is checked as, in any tenant and workspace.

    A person is themselves, and an agent (a run, or an MCP client) acting for a person acts with
    their rights; the system is the application's own principal; an agent acting for no one
    holds nothing.
    """
    match actor:
        case (
            UserActor(id=user)
            | AgentActor(on_behalf_of=UserActor(id=user))
            | ExternalAgentActor(on_behalf_of=UserActor(id=user))
        ):
            return User(id=user)
        case SystemActor():
            return APPLICATION
        case _:
            return GrantrAgent()


async def grant_people(grants: Grants) -> None:
    """Make the tenant, owned by olive, with rita a viewer and eddie an editor of the workspace."""
    await grants.bootstrap()
    await grants.provision_tenant(TENANT, owner=OWNER)
    owner = User(id=OWNER)
    on = Resource(kind="workspace", workspace=WORKSPACE)
    for person, role in ((READER, "viewer"), (EDITOR, "editor"), (SECOND_EDITOR, "editor")):
        user = User(id=person.id)
        await grants.add_member(TENANT, user, by=owner)
        await grants.grant(TENANT, role, on=on, to=user, by=owner)


CONTRACT: Final = (
    ("Title", "Services agreement"),
    ("Heading1", "Parties"),
    "This agreement is made between the Supplier and the Customer named below.",
    ("Heading1", "Services"),
    *(
        f"Clause {n}. The Supplier provides the services described in schedule {n}, on the "
        "terms of this agreement, with the care and skill of a diligent supplier."
        for n in range(1, 41)
    ),
    ("Heading1", "Payment"),
    "The Customer pays each invoice within thirty days.",
    ("Heading1", "Term"),
    "Draft terms for review.",
)
"""The document it seeds without the corpus: two pages at FakeApp's layout."""

SUGGESTION: Final = (
    AppCommand(command="caret.docEnd"),
    AppCommand(command="text.newParagraph"),
    AppCommand(command="text.insert", params={"text": "Invoices are paid within fourteen days."}),
    AppCommand(command="select.text", params={"text": "fourteen days"}),
    AppCommand(command="review.newComment", params={"text": "Shorter terms, as agreed."}),
)
"""The assistant's seeded edit, a proposal on any document: a payment term, commented."""

SUGGESTIONS: Final[dict[str, tuple[AppCommand, ...]]] = {
    "libreoffice": (
        AppCommand(
            command="paragraph.append", params={"text": "Invoices are paid within fourteen days."}
        ),
        AppCommand(
            command="comment.add",
            params={"anchor": "fourteen days", "text": "Shorter terms, as agreed."},
        ),
    ),
}
"""The same edit in the commands of an app that doesn't speak WordCraft's, by its name."""


WORKBOOK: Final = {
    "Budget": [
        ["Item", "Amount"],
        ["Services", 1200],
        ["Support", 300],
        ["Total", "=SUM(B2:B3)"],
    ]
}
"""The workbook it seeds beside the contract."""

DECK: Final = (
    ("Services agreement", "What the Supplier provides\nWhen the Customer pays"),
    ("Payment", "Invoices are paid within thirty days"),
)
"""The deck it seeds beside the contract."""


def seed_files() -> tuple[tuple[str, bytes, str], ...]:
    """Return the workbook and the deck it seeds beside the contract: name, bytes, media type."""
    return (
        ("budget.xlsx", build_xlsx(WORKBOOK), XLSX),
        ("briefing.pptx", build_pptx(DECK), PPTX),
    )


def seed_document(corpus: Path = CORPUS) -> tuple[str, bytes]:
    """Return the document to seed: the corpus's, or a small generated one without it."""
    path = corpus / DOCUMENT
    if path.is_file():
        return DOCUMENT, path.read_bytes()
    return "contract.docx", build_docx(CONTRACT)


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def create_engine(deployment: Deployment, database: Path) -> AsyncEngine:
    """Return the engine of the deployment's database, or of the embedded SQLite file."""
    if deployment.shared:
        return create_async_engine(database_url(deployment), pool_pre_ping=True)
    return sqlite_engine(database)


def _portal_key(secret: str) -> bytes:
    # The portal's notices get a key of their own, derived from the links' secret.
    return hashlib.sha256(b"artifactr.files portal notices\0" + secret.encode()).digest()


def create_app(
    database: Path,
    *,
    deployment: Deployment = EMBEDDED,
    base_url: str = "http://127.0.0.1:8000",
    corpus: Path = CORPUS,
    say: Say = _say,
    native_app: App | None = None,
    clock: Callable[[], datetime] = utc_now,
    engine: AsyncEngine | None = None,
) -> FastAPI:
    """Return the app: the routers and MCP over a database, grantr deciding who may do what.

    Embedded (nothing set), its lifespan migrates the SQLite file, grants the people their
    roles, uploads the document, a workbook and a deck as eddie and says how to try each answer
    with curl. As a deployment's replica, it grants the roles and says where it serves; the
    database is migrated by ``--migrate``. It disposes of the engine on shutdown.

    Args:
        database: The SQLite file, made if missing, when no shared database is set.
        deployment: The deployment's settings; the embedded default if omitted.
        base_url: Where the app is reached, for the curl lines.
        corpus: Where the document to seed is looked for.
        say: Where the lines go: standard output if omitted.
        native_app: The app that reads, edits and renders the files: FakeApp if omitted.
        clock: The time everything is stamped with and the page's "now": the wall clock if
            omitted (the browser tests fix it).
        engine: The database to serve from instead of the deployment's (a bench's PostgreSQL
            schema), migrated and seeded as the embedded file is, and disposed of on shutdown.
    """
    engine = engine or create_engine(deployment, database)
    discovery = deployment.wopi_discovery
    wopi_secret, secret = deployment.wopi_secret, deployment.secret
    wopi = WopiSettings(
        secret=wopi_secret.get_secret_value() if wopi_secret else secrets.token_urlsafe(32),
        discovery=DiscoveryCache(discovery) if discovery else None,
    )
    # Capability links (ADR-0018) and the portal's notices: one secret on every replica.
    links_secret = secret.get_secret_value() if secret else secrets.token_urlsafe(32)
    links = Capabilities(links_secret)
    # No one switches an integration off here, so every replica's switch says the same.
    switch = InMemoryIntegrations()
    native_app = app_from(deployment) or native_app or FakeApp()
    suggestion = SUGGESTIONS.get(native_app.name, SUGGESTION)
    files = NativeFiles(
        blobs=blobs_from(deployment.blobs_url, engine, clock),
        app=native_app,
        leases=SqlLeases(engine, clock=clock),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        history=SqlHistory(engine),
        integrations=switch,
        types=KINDS,
        clock=clock,
    )
    grants = Grants(InMemoryStorage(), catalogs=[ACTIONS], application=APPLICATION)
    hooks = grants.hooks(subject_of)
    storage = SqlStorage(engine, clock=clock)
    workspaces = Workspaces(
        storage,
        types=list(KINDS),
        authorize=integration_gate(switch, files.key_of, storage, authorize=hooks.authorize),
        hidden=hooks.hidden,
    )
    # The agent never runs unless a client posts to a thread; then it is pydantic-ai's test model.
    runner = Runner(Agent("test", deps_type=Session[None]), app=None)
    mcp = ArtifactrMcp(workspaces, runner, resolve=resolve_client)
    add_native_file_tools(mcp, files, workspaces=workspaces, resolve=resolve_client)

    async def seed() -> None:
        await migrate(engine)
        await migrate_files(engine)
        ws = await workspaces.open(TENANT, WORKSPACE, actor=EDITOR)
        name, data = seed_document(corpus)
        outcome = await files.upload(ws, name, _once(data), media_type=DOCX)
        assert isinstance(outcome, Applied), "a person's upload is applied"
        assistant = await workspaces.open(TENANT, WORKSPACE, actor=ASSISTANT)
        try:
            await files.edit(assistant, outcome.artifact_id, base_version=1, commands=suggestion)
        except AppRefused as refused:
            # An app whose commands are neither WordCraft's nor LibreOffice's: no suggestion then.
            say(f"the assistant's suggestion was not seeded: {refused.reason}")
        _instructions(say, base_url, f"{WORKSPACE}/files/{outcome.artifact_id}", name)
        say(f"WebDAV {file_link(base_url, links, ws, outcome.artifact_id, name)}")
        token = mint_access_token(
            wopi.secret,
            tenant_id=TENANT,
            workspace_id=WORKSPACE,
            artifact_id=outcome.artifact_id,
            person=EDITOR,
        )
        source = wopi_src(base_url, outcome.artifact_id)
        say(f"WOPI WOPISrc={source} access_token={token.token} access_token_ttl={token.ttl}")
        for other, data, media_type in seed_files():
            try:
                seeded = await files.upload(ws, other, _once(data), media_type=media_type)
            except AppRefused as refused:
                # FakeApp reads documents only; LibreOffice reads all three.
                say(f"{other} was not seeded: {refused.reason}")
                continue
            assert isinstance(seeded, Applied), "a person's upload is applied"
            say(f"seeded {other} at {base_url}/workspaces/{WORKSPACE}/files/{seeded.artifact_id}")

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncGenerator[None]:
        start_app(native_app)  # a LibreOffice's pool, filled before the first job (ADR-0033)
        try:
            await grant_people(grants)
            if deployment.shared:
                say(f"a replica at {base_url}, on the shared database ({DATABASE_URL})")
            else:
                await seed()
            say(f"serving documents, workbooks and decks ({', '.join(KINDS_SAID)})")
            async with mcp.lifespan():
                yield
        finally:
            await runner.aclose()
            await engine.dispose()
            await stop_app(native_app)

    app = FastAPI(title="artifactr.files", lifespan=lifespan)
    app.state.wopi = wopi  # what the portal's "Edit in the browser" reads (editor_launch)
    app.include_router(artifactr_router(workspaces, runner, resolve_actor=resolve_actor))
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(wopi_router(files, workspaces, wopi))
    app.include_router(
        webdav_router(files, workspaces, resolve_actor=resolve_actor, capabilities=links)
    )
    app.include_router(
        portal_router(
            files,
            workspaces,
            resolve_actor=resolve_actor,
            people=PEOPLE,
            workspace_ids=[WORKSPACE],
            clock=clock,
            editor_links=editor_buttons(
                files, base_url=base_url, wopi=wopi, dav=DavLinks(base_url, links)
            ),
            form_origins=editor_origins([discovery] if discovery else []),
            secret=_portal_key(links_secret),
        )
    )

    # Stateless: no MCP session lives in one replica, so any replica answers a client's next call.
    app.mount("/mcp", mcp.http_app(streamable_http_path="/", stateless_http=True))

    @app.get("/", include_in_schema=False)
    async def front() -> RedirectResponse:
        return RedirectResponse(f"/portal/workspaces/{WORKSPACE}/files", status_code=303)

    return app


def _curl(user: str) -> str:
    # -w prints each answer's status after its body, so every refusal shows its code.
    return f"curl -s -w ' %{{http_code}}\\n' -H 'x-user: {user}'"


def _instructions(say: Say, base_url: str, file: str, name: str) -> None:
    url = f"{base_url}/workspaces/{file}"
    rita, eddie, mallory = _curl(READER.id), _curl(EDITOR.id), _curl("mallory")
    body = f"-H 'content-type: {DOCX}' --data-binary @'{name}'"
    read_id = "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"id\"])'"
    say(f"open {base_url}/ in a browser: the page people use (choose who you are at the top)")
    say(f"serving artifactr and the files router at {base_url} (x-user names you)")
    say(f"MCP (Streamable HTTP) at {base_url}/mcp/, for the person x-user names")
    say(
        f"access is grantr's, in memory: {READER.id} is a viewer of {WORKSPACE}, "
        f"{EDITOR.id} and {SECOND_EDITOR.id} editors, {OWNER} owns the tenant; "
        "anyone else is no member, refused (403)"
    )
    say(f"seeded {name} at {url}, uploaded by {EDITOR.id}")
    say(f"  W={url}")
    say(f"{READER.id} downloads it, sees that no one holds it, and views its first page:")
    say(f"  {rita} -o '{name}' $W/versions/1/content  # 200")
    say(f"  {rita} $W/lease  # lease null, 200")
    say(f"  {rita} -o page-1.png $W/versions/1/pages/1  # 200")
    say(f"{READER.id} may not check it out, and someone who is no member may not even look:")
    say(f"  {rita} -X POST $W/checkouts  # forbidden: edit_artifact is refused, 403")
    say(f"  {mallory} $W/lease  # forbidden: open is refused, 403")
    say(f"{EDITOR.id} checks it out; {READER.id} sees his lease; a second check-out is busy:")
    say(f"  CO=$(curl -s -H 'x-user: {EDITOR.id}' -X POST $W/checkouts | {read_id})")
    say(f"  {rita} $W/lease  # holder checkout:$CO:user:{EDITOR.id}, expires_at, 200")
    say(f"  {eddie} -X POST $W/checkouts  # artifact_busy: held by him until when, 409")
    say(f"{READER.id} may not check his check-out in; {EDITOR.id} checks it in:")
    say(f"  {rita} -X POST {body} $W/checkouts/$CO/check-in  # forbidden: someone else's, 403")
    say(
        f"  {eddie} -X POST {body} $W/checkouts/$CO/check-in"
        "  # unchanged as downloaded, 200; applied, version 2, once edited"
    )


def server(
    database: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    deployment: Deployment = EMBEDDED,
    limit_max_requests: int | None = None,
    say: Say = _say,
    native_app: App | None = None,
) -> uvicorn.Server:
    """Return a uvicorn server for :func:`create_app`, ready to ``serve()``.

    Args:
        database: The SQLite file, when no shared database is set.
        host: The address to listen on.
        port: The port to listen on.
        deployment: The deployment's settings; the embedded default if omitted.
        limit_max_requests: Stop after this many requests; serve until stopped if None.
        say: Where the lines go.
        native_app: The app when no worker is set: FakeApp if omitted.
    """
    base_url = deployment.public_url or f"http://{host}:{port}"
    config = uvicorn.Config(
        create_app(
            database,
            deployment=deployment,
            base_url=base_url.rstrip("/"),
            say=say,
            native_app=native_app,
        ),
        host=host,
        port=port,
        limit_max_requests=limit_max_requests,
        log_config=None,
        access_log=False,
    )
    return uvicorn.Server(config)


async def migrate_database(deployment: Deployment, database: Path) -> None:
    """Migrate artifactr's tables and this package's on the configured database, once.

    Raises:
        Misconfigured: If the shared database can't be reached.
    """
    engine = create_engine(deployment, database)
    try:
        await migrate(engine)
        await migrate_files(engine)
    except (OSError, SQLAlchemyError) as error:
        raise Misconfigured(DATABASE_URL, f"can't migrate: {error}") from error
    finally:
        await engine.dispose()


async def check_schema(deployment: Deployment) -> None:
    """Check the shared database is at this program's schema, changing nothing.

    Raises:
        Misconfigured: If it can't be reached, or ``--migrate`` hasn't brought it up to date.
    """
    engine = create_engine(deployment, Path())
    try:
        behind = await schema_behind(engine)
    except (OSError, SQLAlchemyError) as error:
        raise Misconfigured(DATABASE_URL, f"can't connect: {error}") from error
    finally:
        await engine.dispose()
    if behind is not None:
        raise Misconfigured(DATABASE_URL, behind)


def pick_app(deployment: Deployment) -> tuple[App | None, str]:
    """Return the local app and a line saying which, or None and the workers the jobs go to."""
    if deployment.worker_urls:
        return None, f"workers: {', '.join(deployment.worker_urls)}"
    return choose_app(pool=deployment.pool)


def parser() -> argparse.ArgumentParser:
    """Return the command line's parser, whose ``--help`` lists every setting."""
    parser = argparse.ArgumentParser(
        prog="python -m artifactr.files.programs.serve",
        description="Serve artifactr.files: the portal, the routers, WOPI, WebDAV and MCP.",
        epilog="settings, from the environment (ADR-0025; none is needed to try it):\n"
        + settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="the port to listen on")
    parser.add_argument(
        "--database",
        type=Path,
        default=Path("out") / "serve.db",
        help="the embedded SQLite file, made afresh, without ARTIFACTR_FILES_DATABASE_URL",
    )
    parser.add_argument("--limit-max-requests", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="migrate artifactr's tables and ours on the configured database, then exit",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until stopped; or migrate, with ``--migrate``.

    Raises:
        SystemExit: With one line naming the setting, if a setting is missing or not valid,
            or the shared database is not migrated.
    """
    options = parser().parse_args(argv)
    options.database.parent.mkdir(parents=True, exist_ok=True)
    try:
        deployment = read_deployment()
        if options.migrate:
            asyncio.run(migrate_database(deployment, options.database))
            _say("migrated artifactr's tables and artifactr.files' to their latest schema")
            return
        if deployment.shared:
            asyncio.run(check_schema(deployment))
        else:
            options.database.unlink(missing_ok=True)
    except Misconfigured as error:
        sys.exit(f"serve: {error}")
    native_app, label = pick_app(deployment)
    _say(f"app: {label}")
    server(
        options.database,
        host=options.host,
        port=options.port,
        deployment=deployment,
        limit_max_requests=options.limit_max_requests,
        native_app=native_app,
    ).run()


if __name__ == "__main__":
    main()
