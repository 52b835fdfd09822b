"""The served job (``python -m artifactr.files.programs.serve``): grantr's access, two people, real
HTTP.

It runs on FakeApp (``ARTIFACTR_FILES_APP=fake``) for the whole walk below, and, where
LibreOffice can run (always in CI), once more on it, to say so and serve a real page.

The job runs as ``python -m`` runs it, on a free port, and each curl line it prints is tried
with an HTTP client against it: rita, a viewer, downloads the file, sees the lease and views a
page, and is refused check-out and check-in with the status and body the lines promise; someone
who is no member is refused even a look; eddie, an editor, checks out, is refused a second
check-out as busy, and checks in a new version.
"""

import contextlib
import io
import re
import runpy
import socket
import struct
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from artifactr import AgentActor, UserActor
from artifactr.core import SystemActor
from grantr import Agent, User
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.fastapi.portal import PERSON_COOKIE
from artifactr.files.programs import serve
from artifactr.files.programs.demo import FORCE_FAKE
from artifactr.files.programs.settings import PREFIX, WOPI_SECRET, read_deployment
from tests.documents import build_docx
from tests.fastapi.conftest import DOCX_BODY
from tests.office import need_office

EDITED = build_docx(["An edited document."])
PNG = b"\x89PNG\r\n\x1a\n"
RITA = {"x-user": "rita"}
EDDIE = {"x-user": "eddie"}
MALLORY = {"x-user": "mallory"}
MCP_URL = "http://127.0.0.1:8000/mcp/"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def retry_until_listening(send: Callable[[], httpx2.Response]) -> httpx2.Response:
    """Send a request once the server listens: it prints its lines before it binds."""
    for _ in range(200):
        try:
            return send()
        except httpx2.ConnectError:
            time.sleep(0.05)
    return send()


def start_job(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    requests: int,
) -> tuple[threading.Thread, str, str, str]:
    """Start the job as ``python -m`` does, stopping after ``requests``; return it, what it
    printed, and the seeded file's name and URL, once it has printed its lines."""
    port = free_port()
    argv = ["serve", "--port", str(port), "--database", str(tmp_path / "out" / "serve.db")]
    monkeypatch.setattr(sys, "argv", [*argv, "--limit-max-requests", str(requests)])
    # Run as `python -m artifactr.files.programs.serve` runs it, from a fresh module.
    monkeypatch.delitem(sys.modules, "artifactr.files.programs.serve", raising=False)
    job = threading.Thread(
        target=runpy.run_module,
        args=("artifactr.files.programs.serve",),
        kwargs={"run_name": "__main__"},
    )
    job.start()
    output = ""
    while "\nserving documents, workbooks and decks" not in output or not output.endswith("\n"):
        assert job.is_alive(), output
        time.sleep(0.05)
        output += capsys.readouterr().out
    found = re.search(r"seeded (\S+) at (\S+), uploaded by eddie", output)
    assert found is not None
    name, url = found.groups()
    assert url.startswith(f"http://127.0.0.1:{port}/workspaces/w1/files/art_")
    return job, output, name, url


def test_the_served_job_lets_a_reader_read_and_an_editor_check_out_and_in_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FORCE_FAKE, "fake")
    # It stops after the twelve requests below.
    job, output, name, url = start_job(tmp_path, monkeypatch, capsys, 12)
    assert output.startswith("app: FakeApp (ARTIFACTR_FILES_APP=fake)\n")
    # FakeApp reads documents only, and the lines say the workbook and the deck weren't seeded.
    assert "budget.xlsx was not seeded: FakeApp reads Word documents (.docx) only" in output
    assert "briefing.pptx was not seeded: FakeApp reads Word documents (.docx) only" in output
    assert "serving documents, workbooks and decks (.docx, .xlsx, .pptx)" in output
    # The lines promise what the requests below answer.
    for promise in (
        "'x-user: rita' -o 'contract.docx' $W/versions/1/content  # 200",
        "'x-user: rita' $W/lease  # lease null, 200",
        "'x-user: rita' -o page-1.png $W/versions/1/pages/1  # 200",
        "'x-user: rita' -X POST $W/checkouts  # forbidden: edit_artifact is refused, 403",
        "'x-user: mallory' $W/lease  # forbidden: open is refused, 403",
        "'x-user: rita' $W/lease  # holder checkout:$CO:user:eddie, expires_at, 200",
        "'x-user: eddie' -X POST $W/checkouts  # artifact_busy: held by him until when, 409",
        "$W/checkouts/$CO/check-in  # forbidden: someone else's, 403",
    ):
        assert promise.replace("contract.docx", name) in output, promise
    with httpx2.Client(timeout=10) as client:
        # rita, a viewer, reads.
        download = retry_until_listening(
            lambda: client.get(f"{url}/versions/1/content", headers=RITA)
        )
        assert download.status_code == 200, download.text
        assert download.headers["content-disposition"].startswith(f'attachment; filename="{name}"')
        assert zipfile.ZipFile(io.BytesIO(download.content)).read("[Content_Types].xml")
        free = client.get(f"{url}/lease", headers=RITA)
        assert (free.status_code, free.json()["lease"]) == (200, None)
        page = client.get(f"{url}/versions/1/pages/1", headers=RITA)
        assert page.status_code == 200
        assert page.content.startswith(PNG)
        # She may not check it out; someone who is no member may not even open the workspace.
        refused = client.post(f"{url}/checkouts", headers=RITA)
        assert_forbidden(refused, "artifactr:edit_artifact is refused in this workspace")
        stranger = client.get(f"{url}/lease", headers=MALLORY)
        assert_forbidden(stranger, "artifactr:open is refused in this workspace")
        # eddie, an editor, checks it out; rita sees his lease; a second check-out is busy.
        checkout = client.post(f"{url}/checkouts", headers=EDDIE)
        assert checkout.status_code == 200, checkout.text
        held = checkout.json()
        assert held["holder"] == f"checkout:{held['id']}:user:eddie"
        lease = client.get(f"{url}/lease", headers=RITA)
        assert lease.status_code == 200
        assert lease.json()["lease"]["holder"] == held["holder"]
        busy = client.post(f"{url}/checkouts", headers=EDDIE)
        assert busy.status_code == 409
        assert busy.json()["detail"]["type"] == "artifact_busy"
        assert busy.json()["detail"]["lease"]["holder"] == held["holder"]
        # rita may not check his check-out in; he checks in a new version, which she reads.
        check_in = f"{url}/checkouts/{held['id']}/check-in"
        foreign = client.post(check_in, content=EDITED, headers={**RITA, **DOCX_BODY})
        assert_forbidden(foreign, f"check-out {held['id']} is someone else's")
        checked_in = client.post(check_in, content=EDITED, headers={**EDDIE, **DOCX_BODY})
        assert checked_in.status_code == 200, checked_in.text
        assert (checked_in.json()["status"], checked_in.json()["version"]) == ("applied", 2)
        assert client.get(f"{url}/versions/2/content", headers=RITA).content == EDITED
        assert client.get(f"{url}/lease", headers={"x-user": ""}).status_code == 401
    job.join(timeout=30)
    assert not job.is_alive()


def test_the_served_job_prints_one_webdav_link_that_opens_eddie_s_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FORCE_FAKE, "fake")
    job, output, name, _ = start_job(tmp_path, monkeypatch, capsys, 3)
    links = re.findall(r"^WebDAV (\S+)$", output, re.MULTILINE)
    assert len(links) == 1
    (link,) = links
    assert link.endswith(f"/workspaces/w1/{name}")
    with httpx2.Client(timeout=10) as client:
        got = retry_until_listening(lambda: client.get(link))
        assert got.status_code == 200
        assert zipfile.ZipFile(io.BytesIO(got.content)).read("[Content_Types].xml")
        found = client.request("PROPFIND", link, headers={"Depth": "0"})
        assert found.status_code == 207
        options = client.options(link)
        assert options.headers["DAV"] == "1, 2"
    job.join(timeout=30)
    assert not job.is_alive()


@pytest.mark.timeout(180)  # it starts offices: seconds each on a busy machine
def test_on_libreoffice_the_served_job_says_so_and_serves_real_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    need_office()
    monkeypatch.delenv(FORCE_FAKE, raising=False)
    monkeypatch.delenv("WORDCRAFT_CLI", raising=False)
    monkeypatch.setenv(f"{PREFIX}POOL", "1")  # one office started ahead: a small machine's
    job, output, _, url = start_job(tmp_path, monkeypatch, capsys, 1)
    opens = "opens docx, xlsx, pptx; 1 office started ahead"
    assert output.startswith(f"app: LibreOffice (real pages, run headless; {opens})\n")
    # LibreOffice reads all three kinds: the workbook and the deck are seeded beside it.
    assert "seeded budget.xlsx at http://127.0.0.1:" in output
    assert "seeded briefing.pptx at http://127.0.0.1:" in output
    with httpx2.Client(timeout=60) as client:
        page = retry_until_listening(lambda: client.get(f"{url}/versions/1/pages/1", headers=RITA))
    assert page.status_code == 200, page.text
    assert page.content.startswith(PNG)
    width, height = struct.unpack(">II", page.content[16:24])
    assert (width, height) in {(816, 1056), (794, 1123)}  # a real page: Letter or A4, 96 dpi
    job.join(timeout=30)
    assert not job.is_alive()


@pytest.mark.timeout(180)  # it starts offices: seconds each on a busy machine
async def test_a_served_programs_first_job_runs_on_an_office_its_pool_started_ahead(
    tmp_path: Path,
) -> None:
    need_office()
    office = LibreOffice(pool=1)
    app = serve.create_app(
        tmp_path / "serve.db", corpus=tmp_path, say=lambda _: None, native_app=office
    )
    async with app.router.lifespan_context(app):
        # Its start-up seeded a document, the assistant's edit, a workbook and a deck: four
        # jobs, the first as soon as it started, each on an office the pool started for it.
        status = office.pool_status()
        assert (status.taken, status.missed) == (4, 0)
    assert office.pool_status().pids == ()  # its offices are killed as it stops


def test_a_person_and_an_agent_acting_for_them_are_checked_as_the_person() -> None:
    rita = UserActor(id="rita")
    run = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=rita)
    assert serve.subject_of("demo", "w1", rita) == User(id="rita")
    assert serve.subject_of("demo", "w1", run) == User(id="rita")


def test_the_system_is_the_application_and_an_agent_for_no_one_holds_nothing() -> None:
    orphan = AgentActor(thread_id="thr_1", run_id="run_1")
    assert serve.subject_of("demo", None, SystemActor()) == serve.APPLICATION
    assert serve.subject_of("demo", "w1", orphan) == Agent()


def test_the_served_job_seeds_the_corpus_document_when_it_is_there(tmp_path: Path) -> None:
    (tmp_path / serve.DOCUMENT).write_bytes(EDITED)
    assert serve.seed_document(tmp_path) == (serve.DOCUMENT, EDITED)


def test_the_served_job_seeds_a_generated_document_without_the_corpus(tmp_path: Path) -> None:
    name, data = serve.seed_document(tmp_path)
    assert name == "contract.docx"
    assert zipfile.ZipFile(io.BytesIO(data)).read("[Content_Types].xml")


def assert_forbidden(response: httpx2.Response, message: str) -> None:
    assert response.status_code == 403
    assert response.json() == {"detail": {"type": "forbidden", "message": message}}


async def test_the_served_demo_leads_with_the_page_and_a_chosen_person_reads_by_cookie(
    tmp_path: Path,
) -> None:
    app = serve.create_app(tmp_path / "serve.db", corpus=tmp_path, say=lambda _: None)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://demo.test") as client:
            front = await client.get("/")
            assert (front.status_code, front.headers["location"]) == (
                303,
                "/portal/workspaces/w1/files",
            )
            client.cookies.set(PERSON_COOKIE, "erin")
            files = await client.get(front.headers["location"])
            assert files.status_code == 200
            assert "contract.docx" in files.text
            found = re.search(r'href="(/portal/workspaces/w1/files/art_[0-9a-f]+)"', files.text)
            assert found is not None
            page = await client.get(found.group(1))
            # The assistant's seeded edit waits for an editor: erin may accept it.
            assert "ran caret.docEnd" in page.text
            assert "<button>Accept</button>" in page.text
            artifact = found.group(1).rsplit("/", 1)[1]
            lease = await client.get(f"/workspaces/w1/files/{artifact}/lease")
            assert lease.status_code == 200


async def test_an_app_without_the_assistants_commands_serves_with_no_suggestion(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    app = serve.create_app(
        tmp_path / "serve.db",
        corpus=tmp_path,
        say=lines.append,
        native_app=FakeApp(fail={"apply": "refused"}),
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://demo.test") as client:
            client.cookies.set(PERSON_COOKIE, "rita")
            files = await client.get("/portal/workspaces/w1/files")
            found = re.search(r'href="(/portal/workspaces/w1/files/art_[0-9a-f]+)"', files.text)
            assert found is not None
            page = await client.get(found.group(1))
            assert "Pending proposals" in page.text
            assert "None." in page.text
    assert any("the assistant's suggestion was not seeded" in line for line in lines)


async def test_the_served_app_mounts_mcp_with_the_native_file_tools_for_the_named_person(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    app = serve.create_app(tmp_path / "serve.db", corpus=tmp_path, say=lines.append)
    async with app.router.lifespan_context(app):
        assert (
            "MCP (Streamable HTTP) at http://127.0.0.1:8000/mcp/, for the person x-user names"
            in (lines)
        )
        found = re.search(r"seeded \S+ at \S+/files/(art_\w+),", "\n".join(lines))
        assert found is not None
        artifact_id = found.group(1)
        transport = httpx2.ASGITransport(app=app)
        async with (
            httpx2.AsyncClient(transport=transport, headers=RITA) as http,
            Client(streamable_http_client(f"{MCP_URL}", http_client=http)) as client,
        ):
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"read_native", "read_review", "find_commands", "edit_native"} <= tools
            read = await client.call_tool(
                "read_native", {"workspace_id": "w1", "artifact_id": artifact_id, "start": 0}
            )
            assert not read.is_error
            assert isinstance(read.content[0], TextContent)
            assert "Services agreement" in read.content[0].text
        # Someone who is no member is refused, over MCP as over HTTP.
        async with (
            httpx2.AsyncClient(transport=transport, headers=MALLORY) as http,
            Client(streamable_http_client(f"{MCP_URL}", http_client=http)) as client,
        ):
            refused = await client.call_tool(
                "read_native", {"workspace_id": "w1", "artifact_id": artifact_id, "start": 0}
            )
            assert refused.is_error
            assert isinstance(refused.content[0], TextContent)
            assert "artifactr:open is refused in this workspace" in refused.content[0].text
        # A client that names no one is refused before any workspace is opened.
        async with (
            httpx2.AsyncClient(transport=transport) as http,
            Client(streamable_http_client(f"{MCP_URL}", http_client=http)) as client,
        ):
            anonymous = await client.call_tool(
                "read_native", {"workspace_id": "w1", "artifact_id": artifact_id, "start": 0}
            )
            assert anonymous.is_error
            assert isinstance(anonymous.content[0], TextContent)
            assert "name the person the MCP client acts for" in anonymous.content[0].text


async def test_the_tenant_owner_may_do_anything_and_anyone_else_is_refused(tmp_path: Path) -> None:
    lines: list[str] = []
    app = serve.create_app(tmp_path / "serve.db", corpus=tmp_path, say=lines.append)
    async with app.router.lifespan_context(app):
        assert any(
            "olive owns the tenant; anyone else is no member, refused (403)" in line
            for line in lines
        )
        found = re.search(r"seeded \S+ at http://127.0.0.1:8000(\S+),", "\n".join(lines))
        assert found is not None
        file = found.group(1)
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as http:
            for path in (f"{file}/lease", f"{file}/versions/1/content", "/workspaces/w1/artifacts"):
                olive = await http.get(path, headers={"x-user": "olive"})
                assert olive.status_code == 200, (path, olive.text)
                for stranger in ("mallory", "zed", "Olive"):
                    refused = await http.get(path, headers={"x-user": stranger})
                    assert refused.status_code == 403, (path, stranger, refused.text)


async def test_the_served_demo_prints_one_wopi_line_whose_token_lets_eddie_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WOPI_SECRET, "a served secret of at least thirty-two bytes")
    lines: list[str] = []
    deployment = read_deployment()
    app = serve.create_app(
        tmp_path / "serve.db", deployment=deployment, corpus=tmp_path, say=lines.append
    )
    async with app.router.lifespan_context(app):
        wopi = [line for line in lines if line.startswith("WOPI ")]
        assert len(wopi) == 1
        found = re.fullmatch(
            r"WOPI WOPISrc=(http://127\.0\.0\.1:8000/wopi/files/art_[0-9a-f]+) "
            r"access_token=(\S+) access_token_ttl=(\d+)",
            wopi[0],
        )
        assert found is not None
        source, token, ttl = found.groups()
        assert int(ttl) > time.time() * 1000
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as client:
            info = await client.get(source, params={"access_token": token})
            assert info.status_code == 200
            assert (info.json()["UserId"], info.json()["UserCanWrite"]) == ("user:eddie", True)
            locked = await client.post(
                source,
                params={"access_token": token},
                headers={"X-WOPI-Override": "LOCK", "X-WOPI-Lock": "L"},
            )
            assert locked.status_code == 200


ROOT = Path(__file__).resolve().parents[2]
STATUS = re.compile(r"#.*?\b([1-5]\d\d)\b")


def readme_session() -> tuple[list[str], list[int | None]]:
    """Return the README's served-job lines as written, each a whole command, and each curl's
    promised status (None where a line promises none, as the check-out's ``CO=`` line)."""
    block = (ROOT / "README.md").read_text().split("```sh\nmake serve", 1)[1].split("```", 1)[0]
    commands: list[str] = []
    statuses: list[int | None] = []
    pending = ""
    for line in block.splitlines()[1:]:
        if pending:
            line, pending = pending + line.lstrip(), ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if line.lstrip().startswith("#"):  # a promise for the line above
            found = STATUS.search(line)
            if found and statuses and statuses[-1] is None:
                statuses[-1] = int(found[1])
            continue
        command, _, comment = line.partition("  #")
        commands.append(command.strip())
        if "curl" in command and not command.startswith("CO="):
            found = STATUS.search("#" + comment)
            statuses.append(int(found[1]) if found else None)
    return commands, statuses


def test_the_readme_s_lines_run_as_written_against_the_served_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FORCE_FAKE, "fake")
    commands, promised = readme_session()
    assert len(promised) == 10, promised
    assert None not in promised, promised
    # The README's eleven requests (the check-out's own among them) and one to see it listens.
    job, _, _, url = start_job(tmp_path, monkeypatch, capsys, 12)
    with httpx2.Client(timeout=10) as client:
        assert retry_until_listening(lambda: client.get(f"{url}/lease", headers=RITA)).is_success
    port = url.split(":")[2].split("/")[0]
    script = ["set -eu"]
    for command in commands:
        command = command.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        if command.startswith("W="):
            command = f"W={url}"  # as the job prints it
        elif command.startswith("curl"):
            command += " -w '\\nSTATUS %{http_code}\\n'"
        script.append(command)
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    statuses = [int(status) for status in re.findall(r"^STATUS (\d{3})$", ran.stdout, re.M)]
    assert statuses == promised, ran.stdout
    # The viewer's download is a document, and eddie's check-in of it, unchanged, says so.
    assert zipfile.ZipFile(tmp_path / "contract.docx").read("[Content_Types].xml")
    assert ran.stdout.rstrip().splitlines()[-2].find('"unchanged"') >= 0, ran.stdout
    # uvicorn counts a response once its last (empty) chunk is sent; curl hangs up as soon as
    # the download's bytes are in, so that one may go uncounted: ask until the job stops.
    with httpx2.Client(timeout=10) as client:
        for _ in range(3):
            job.join(timeout=5)
            if not job.is_alive():
                break
            with contextlib.suppress(httpx2.TransportError):
                client.get(f"{url}/lease", headers=RITA)
    job.join(timeout=30)
    assert not job.is_alive()


def test_make_serve_takes_the_port_it_is_given() -> None:
    planned = subprocess.run(
        ["make", "-n", "serve", "PORT=8123"], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert planned.returncode == 0, planned.stderr
    assert "python -m artifactr.files.programs.serve --port 8123" in planned.stdout
    default = subprocess.run(["make", "-n", "serve"], cwd=ROOT, capture_output=True, text=True)
    assert "python -m artifactr.files.programs.serve --port 8000" in default.stdout
