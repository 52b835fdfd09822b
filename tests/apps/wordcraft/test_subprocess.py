"""The WordCraft adapter over MCP on stdio: edits, reads, refusals, failures and clean-up.

The behaviour suite runs against the stand-in over a real pipe and, marked ``wordcraft``, against
the real ``wordcraft-cli`` when ``WORDCRAFT_CLI`` names one. Every result is checked by reading
the .docx independently (python-docx and lxml), never through the app. The failure modes need
the stand-in's misbehaviour, so they run against it alone.
"""

import io
import json
import os
import random
import re
import shlex
import signal
import string
import subprocess
import sys
import zipfile
from contextlib import suppress
from pathlib import Path

import docx
import pytest
from lxml import etree
from mcp.client.session import ClientSession
from mcp.client.stdio import get_default_environment
from PIL import Image
from scripts import fidelity

from artifactr.files.apps import processes
from artifactr.files.apps.wordcraft import Limits, Subprocess, WordCraftSubprocess
from artifactr.files.apps.wordcraft._process import converse
from artifactr.files.core.app_port import About, AppCommand, Edited, Inspection
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.wordcraft.conftest import STANDIN, MakeStandin, recorded
from tests.pids import alive, kill

FIDELITY_FILES = {"mammoth-comments.docx", "pydocx-having-images.docx", "mammoth-tables.docx"}
"""Corpus files with comments, pictures and tables, for the fidelity report's test."""

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = {"w": W, "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"}


def command(name: str, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": name, "params": params})


def part(content: bytes, name: str) -> etree._Element:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return etree.fromstring(archive.read(name))


def core(content: bytes, field: str) -> str:
    return part(content, "docProps/core.xml").findtext(f"cp:{field}", namespaces=NS) or ""


def texts(content: bytes) -> list[str]:
    return [p.text for p in docx.Document(io.BytesIO(content)).paragraphs]


# ─── edits and reads (the stand-in, and the real app when there is one) ───────


async def test_an_edit_replaces_styles_bolds_types_and_inserts_a_table(
    app: Subprocess, report: bytes
) -> None:
    edited = await app.apply(
        report,
        [
            command("edit.replaceAll", text="quick", **{"with": "slow"}),
            command("select.text", text="lazy"),
            command("text.insert", text="sleepy"),
            command("select.text", text="Draft"),
            command("format.bold", value=True),
            command("select.text", text="Details"),
            command("para.style", style="Heading 1"),
            command("caret.set", pos={"story": "body", "path": [4], "off": 0}),
            command("insert.table", rows=2, cols=3),
        ],
    )

    document = docx.Document(io.BytesIO(edited.content))
    body = [p.text for p in document.paragraphs]
    assert "The slow brown fox jumps over the sleepy dog." in body
    assert [p.style.name for p in document.paragraphs if p.text == "Details"] == ["Heading 1"]
    assert [run.bold for p in document.paragraphs for run in p.runs if run.text == "Draft"] == [
        True
    ]
    assert [(len(t.rows), len(t.columns)) for t in document.tables] == [(2, 3)]
    assert "slow brown fox" in edited.inspection.text
    assert edited.inspection.outline.splitlines() == ["Quarterly report", "Summary", "Details"]
    assert edited.inspection.fingerprint == fingerprint(edited.content)


async def test_an_inspection_reads_text_outline_review_pages_and_the_handshake(
    app: Subprocess, reviewed: bytes
) -> None:
    inspection = await app.inspect(reviewed)

    assert "The quick brown fox jumps over the lazy dog." in inspection.text
    assert inspection.outline == "Quarterly report\nSummary\n  Details"
    comments = [item for item in inspection.review if item.kind == "comment"]
    assert [(c.id, c.author, c.text) for c in comments] == [("0", "Grace", "Check the figures")]
    changes = {item.change: item for item in inspection.review if item.kind == "change"}
    assert sorted(changes) == ["delete", "insert"]
    assert {item.author for item in changes.values()} == {"Linus"}
    assert changes["insert"].text.strip() == "Quickly."
    assert inspection.pages is not None
    assert inspection.pages >= 1
    assert inspection.fingerprint == fingerprint(reviewed)
    assert inspection.about.app == "wordcraft"
    assert inspection.about.version
    assert inspection.about.build == app.build
    assert app.build is not None
    assert app.build.startswith("sha256:")


async def test_a_file_is_read_from_its_start_and_the_stand_in_names_its_version(
    make_standin: MakeStandin, report: bytes, jobs: Path
) -> None:
    source = io.BytesIO(report)
    source.seek(0, io.SEEK_END)

    inspection = await make_standin().inspect(source)

    assert inspection.fingerprint == fingerprint(report)
    assert (inspection.about.app, inspection.about.version) == ("wordcraft", "0.4.0-standin")
    assert os.listdir(jobs) == []


async def test_a_comment_names_its_author_and_keeps_its_id_when_read_again(
    app: Subprocess, report: bytes
) -> None:
    edited = await app.apply(
        report,
        [command("select.text", text="lazy"), command("review.newComment", text="Why lazy?")],
        author="Ada Lovelace",
    )

    comments = part(edited.content, "word/comments.xml").findall("w:comment", NS)
    assert [c.get(f"{{{W}}}author") for c in comments] == ["Ada Lovelace"]
    assert ["".join(c.itertext()) for c in comments] == ["Why lazy?"]
    assert core(edited.content, "lastModifiedBy") == "Ada Lovelace"
    first = [(item.id, item.author) for item in edited.inspection.review]
    again = await app.inspect(edited.content)
    assert (
        [(item.id, item.author) for item in again.review]
        == first
        == [(comments[0].get(f"{{{W}}}id"), "Ada Lovelace")]
    )


async def test_tracked_changes_are_attributed_then_accepted_and_rejected(
    app: Subprocess, report: bytes
) -> None:
    tracked = await app.apply(
        report,
        [
            command("review.trackChanges", value=True),
            command("select.text", text="quick"),
            command("text.insert", text="slow"),
        ],
        author="Claude",
    )

    document = part(tracked.content, "word/document.xml")
    inserted = document.findall(".//w:ins", NS)
    deleted = document.findall(".//w:del", NS)
    assert ["".join(e.itertext()) for e in inserted] == ["slow"]
    assert ["".join(e.itertext()) for e in deleted] == ["quick"]
    assert {e.get(f"{{{W}}}author") for e in inserted + deleted} == {"Claude"}
    review = sorted((i.change, i.text, i.author) for i in tracked.inspection.review)
    assert review == [("delete", "quick", "Claude"), ("insert", "slow", "Claude")]

    resolved = await app.apply(
        tracked.content,
        [
            command("select.text", text="slow"),
            command("review.accept"),
            command("select.text", text="quick"),
            command("review.reject"),
        ],
    )

    document = part(resolved.content, "word/document.xml")
    assert document.findall(".//w:ins", NS) == document.findall(".//w:del", NS) == []
    paragraph = texts(resolved.content)[2]
    assert "quick" in paragraph
    assert "slow" in paragraph
    assert resolved.inspection.review == ()


async def test_a_save_without_edits_keeps_the_fingerprint_and_stamps_core_xml(
    app: Subprocess, report: bytes
) -> None:
    first = await app.apply(report, [], author="  ")
    second = await app.apply(first.content, [], author="Bob")

    assert fingerprint(second.content) == fingerprint(first.content)
    assert second.inspection.fingerprint == first.inspection.fingerprint
    assert core(first.content, "lastModifiedBy") == "WordCraft User"
    assert core(second.content, "lastModifiedBy") == "Bob"
    assert int(core(second.content, "revision")) == int(core(first.content, "revision")) + 1


async def test_a_page_renders_as_a_png(app: Subprocess, report: bytes) -> None:
    png = await app.render(report, 1, scale=0.5)

    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.width > 0


async def test_a_page_that_is_not_there_is_refused(app: Subprocess, report: bytes) -> None:
    with pytest.raises(AppRefused, match="no page 99"):
        await app.render(report, 99)


async def test_the_catalog_lists_the_commands_a_query_matches(app: Subprocess) -> None:
    catalog = await app.commands("newcomment")

    assert [spec.id for spec in catalog] == ["review.newComment"]
    assert catalog[0].mutates


async def test_the_apps_refusal_stops_the_batch_with_its_reason(
    app: Subprocess, report: bytes
) -> None:
    steps = [command("select.text", text="quick"), command("bogus.command"), command("select.all")]

    with pytest.raises(AppRefused, match=r"^bogus\.command: unknown command `bogus\.command`$"):
        await app.apply(report, steps)


def test_an_unknown_flag_is_refused_before_any_io(app: Subprocess) -> None:
    done = subprocess.run(
        [*app.command, "mcp", "--automation-read-root", "/"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert done.returncode == 1
    assert done.stderr.strip() == "wordcraft-cli: mcp: unknown option --automation-read-root"


def test_the_server_speaks_wordcraft_s_protocol(app: Subprocess, pycache: Path) -> None:
    environment = {"PATH": os.environ.get("PATH", ""), "PYTHONPYCACHEPREFIX": str(pycache)}
    server = subprocess.Popen(
        [*app.command, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment
    )
    assert server.stdin is not None
    assert server.stdout is not None

    def send(message: dict[str, object]) -> None:
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        server.stdin.flush()

    def call(id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        send({"id": id, "method": method, "params": params})
        reply = json.loads(server.stdout.readline())
        assert reply["id"] == id
        return reply["result"]

    try:
        client = {"name": "test", "version": "1"}
        hello = call(
            1,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client},
        )
        send({"method": "notifications/initialized"})
        tools = call(2, "tools/list", {})["tools"]
        unknown = call(3, "tools/call", {"name": "execute", "arguments": {"command": "bogus.x"}})
        steps = [{"command": "document.text"}, {"command": "bogus.x"}]
        batch = call(4, "tools/call", {"name": "batch", "arguments": {"commands": steps}})
        text = call(5, "tools/call", {"name": "get_text", "arguments": {}})
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        server.stdout.close()

    assert hello["protocolVersion"] == "2025-06-18"
    assert hello["serverInfo"]["name"] == "wordcraft"
    assert {"tools", "resources"} <= set(hello["capabilities"])
    schemas = {tool["name"]: tool["inputSchema"] for tool in tools}
    assert set(schemas) >= {
        "list_commands",
        "execute",
        "batch",
        "new_document",
        "open_document",
        "save_document",
        "type_text",
        "select_text",
        "get_text",
        "inspect_document",
        "render_page",
    }
    assert schemas["execute"]["required"] == ["command"]
    assert schemas["select_text"]["required"] == ["text"]
    assert unknown["isError"] is True
    assert unknown["content"] == [{"type": "text", "text": "unknown command `bogus.x`"}]
    assert batch["isError"] is True
    ran = json.loads(batch["content"][0]["text"])
    assert [(step["command"], step["ok"]) for step in ran] == [
        ("document.text", True),
        ("bogus.x", False),
    ]
    assert text["isError"] is False
    assert json.loads(text["content"][0]["text"]) == {"text": ""}
    assert "\n  " in text["content"][0]["text"]


# ─── refusals before WordCraft starts ─────────────────────────────────────────


@pytest.mark.parametrize(
    "step",
    [
        command("file.open", path="/etc/passwd"),
        command("file.saveAs", path="copy.docx"),
        command("file.exportPdf", path="out.pdf"),
        command("insert.picture", path="cat.png"),
        command("review.exportComments"),
        command("text.insert", text="x", path="notes.txt"),
        command("insert.hyperlink", text="home", href="https://example.com"),
        command("text.insert", text="/etc/passwd"),
        command("edit.replaceAll", text="a", **{"with": "../../secret"}),
        command("caret.set", pos={"story": "body", "path": [0], "off": 0, "src": "a.docx"}),
        command("table.fill", cells=[["fine", "C:\\Windows\\win.ini"]]),
    ],
    ids=lambda step: step.command,
)
async def test_a_command_that_reaches_the_file_system_is_refused_before_wordcraft_starts(
    make_standin: MakeStandin, report: bytes, pids: Path, step: AppCommand
) -> None:
    with pytest.raises(AppRefused, match=f"`{step.command}`"):
        await make_standin().apply(report, [command("select.text", text="quick"), step])

    assert recorded(pids) == []


async def test_an_author_that_reads_as_a_flag_is_refused_before_wordcraft_starts(
    make_standin: MakeStandin, report: bytes, pids: Path
) -> None:
    with pytest.raises(AppRefused, match="can't start with '--'"):
        await make_standin().apply(report, [], author="--connect")

    assert recorded(pids) == []


async def test_a_file_over_the_limit_is_refused_before_wordcraft_starts(
    make_standin: MakeStandin, report: bytes, pids: Path
) -> None:
    with pytest.raises(AppTooLarge, match="over the limit of 100"):
        await make_standin(limits=Limits(max_file=100)).inspect(report)

    assert recorded(pids) == []


async def test_a_file_that_is_not_a_docx_is_refused_before_wordcraft_starts(
    make_standin: MakeStandin, pids: Path
) -> None:
    with pytest.raises(UnsafeFile, match="not a zip archive"):
        await make_standin().render(b"%PDF-1.7 not a package", 1)

    assert recorded(pids) == []


# ─── failures, typed ──────────────────────────────────────────────────────────


async def test_a_hung_app_times_out_and_its_whole_process_group_is_killed(
    make_standin: MakeStandin, report: bytes, pids: Path, jobs: Path
) -> None:
    # The app never answers (it sleeps for an hour, far past the test's timeout): the answer
    # came, so the deadline ended the job, and took the child that ignores SIGTERM with it.
    with pytest.raises(AppTimeout, match="deadline of 4 s"):
        await make_standin("hang").inspect(report, deadline=4)

    app, child = recorded(pids)
    assert not alive(app)
    assert not alive(child)
    assert os.listdir(jobs) == []


async def test_a_child_the_app_started_in_its_group_is_gone_when_the_job_returns(
    make_standin: MakeStandin, report: bytes, pids: Path, jobs: Path
) -> None:
    inspection = await make_standin("child").inspect(report)

    assert "The quick brown fox jumps over the lazy dog." in inspection.text
    app, child = recorded(pids)
    assert not alive(app)
    assert not alive(child)
    assert os.listdir(jobs) == []


def kill_the_leader_alone(pgid: int) -> None:
    """A group's kill that spares all but the leader: the others play processes the kernel can't
    tear down (stuck in I/O)."""
    with suppress(ProcessLookupError):
        os.kill(pgid, signal.SIGKILL)


async def test_a_child_that_outlives_the_kill_is_a_crash_that_names_it(
    pycache: Path, pids: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(processes, "_kill_group", kill_the_leader_alone)
    standin = {"PYTHONPYCACHEPREFIX": str(pycache), "STANDIN_PIDS": str(pids)}
    env = get_default_environment() | standin | {"STANDIN_MODE": "child"}

    async def tools(session: ClientSession) -> int:
        return len((await session.list_tools()).tools)

    argv = [sys.executable, str(STANDIN), "mcp"]
    try:
        with pytest.raises(AppCrashed) as crashed:
            await converse(argv, tmp_path, env, Limits(), tools, grace=0.5)
    finally:
        app, child = recorded(pids)
        kill(child)

    # The app is gone by now; had it been slower to go than the grace, it would be named too.
    named = re.fullmatch(
        r"wordcraft was killed, but its processes \[([\d, ]+)\] were still alive 0\.5 s later",
        crashed.value.reason,
    )
    assert named is not None
    assert child in {int(pid) for pid in named[1].split(", ")}
    assert not alive(app)


async def test_a_crash_is_typed_with_its_exit_status_and_what_it_said(
    make_standin: MakeStandin, report: bytes, jobs: Path
) -> None:
    with pytest.raises(AppCrashed, match=r"exit status 3\): .*told to crash"):
        await make_standin("crash").inspect(report)

    assert os.listdir(jobs) == []


async def test_an_app_that_exits_after_the_handshake_has_crashed(
    make_standin: MakeStandin, report: bytes
) -> None:
    with pytest.raises(AppCrashed, match=r"exit status 0\): nothing on stderr"):
        await make_standin("exit_early").inspect(report)


async def test_a_flood_on_stdout_is_too_large(make_standin: MakeStandin, report: bytes) -> None:
    app = make_standin("flood", limits=Limits(max_reply=1024 * 1024))

    with pytest.raises(AppTooLarge, match="more than 1048576 bytes"):
        await app.inspect(report)


async def test_a_line_that_is_not_json_rpc_is_a_crash(
    make_standin: MakeStandin, report: bytes
) -> None:
    with pytest.raises(AppCrashed, match="isn't JSON-RPC: b'this is not JSON-RPC'"):
        await make_standin("garbage").inspect(report)


async def test_a_reply_in_a_shape_wordcraft_never_uses_is_a_crash(
    make_standin: MakeStandin, report: bytes
) -> None:
    app = make_standin("odd")

    with pytest.raises(AppCrashed, match="can't read"):
        await app.inspect(report)
    with pytest.raises(AppCrashed, match="can't read"):
        await app.render(report, 1)


async def test_a_saved_file_that_is_not_a_docx_is_a_crash(
    make_standin: MakeStandin, report: bytes
) -> None:
    with pytest.raises(AppCrashed, match=r"not a \.docx package"):
        await make_standin("corrupt").apply(report, [])


async def test_a_save_that_writes_nothing_is_a_crash(
    make_standin: MakeStandin, report: bytes
) -> None:
    with pytest.raises(AppCrashed, match="said it saved the file, but it can't be read"):
        await make_standin("nosave").apply(report, [])


async def test_a_saved_file_over_the_limit_is_too_large(
    make_standin: MakeStandin, report: bytes
) -> None:
    noise = "".join(random.Random(7).choices(string.ascii_letters, k=60_000))
    app = make_standin(limits=Limits(max_file=len(report) + 5_000))

    with pytest.raises(AppTooLarge, match="saved a file over the limit"):
        await app.apply(
            report, [command("select.text", text="lazy"), command("text.insert", text=noise)]
        )


async def test_an_app_that_is_not_there_is_a_crash(report: bytes) -> None:
    app = Subprocess(cli="/nonexistent/wordcraft-cli")

    assert app.command == ("/nonexistent/wordcraft-cli",)
    assert app.build is None
    with pytest.raises(AppCrashed, match="could not start"):
        await app.inspect(report)


def test_the_adapter_is_the_app_rfc_0003_names_subprocess() -> None:
    app = Subprocess()

    assert Subprocess is WordCraftSubprocess
    assert app.name == "wordcraft"
    assert app.command == ("wordcraft-cli",)
    assert app.deadline == 30.0
    assert Subprocess(cli="/bin/true", build="sha256:pinned").build == "sha256:pinned"


# ─── the fidelity report ──────────────────────────────────────────────────────


def test_the_fidelity_report_finds_a_save_keeps_a_few_corpus_files_whole(
    corpus: list[Path], pycache: Path, pids: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen = [path for path in corpus if path.name in FIDELITY_FILES]
    cli = shlex.join([sys.executable, str(STANDIN)])
    environment = [f"PYTHONPYCACHEPREFIX={pycache}", f"STANDIN_PIDS={pids}"]

    code = fidelity.main(
        [*map(str, chosen), "--cli", cli, *(f"--env={pair}" for pair in environment), "--check"]
    )

    table = capsys.readouterr().out
    assert code == 0
    assert "| mammoth-comments.docx | kept | kept | none | none |  |" in table
    assert "| pydocx-having-images.docx | none | none | none | kept |  |" in table
    assert "| mammoth-tables.docx | kept | none | none | none |  |" in table
    assert "**3 files**: 3 saved, 0 failed." in table
    assert len(recorded(pids)) == 3


class _Dropping:
    """An app that saves every file without its pictures, or fails as it is told to."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure = failure

    async def apply(self, source: bytes, commands: object, *, deadline: float) -> Edited:
        if self.failure is not None:
            raise self.failure
        kept = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(source)) as old, zipfile.ZipFile(kept, "w") as new:
            for entry in old.infolist():
                if "/media/" not in entry.filename:
                    new.writestr(entry, old.read(entry))
        about = About(app="dropping")
        inspection = Inspection(fingerprint=fingerprint(kept.getvalue()), about=about)
        return Edited(content=kept.getvalue(), inspection=inspection)


async def test_the_fidelity_report_shows_what_a_save_lost_and_why_a_file_failed(
    corpus: list[Path],
) -> None:
    pictures = [path for path in corpus if path.name == "pydocx-having-images.docx"]

    lost = await fidelity.report(_Dropping(), pictures)
    failed = await fidelity.report(_Dropping(AppTimeout("too slow")), pictures)

    assert [(row.kept["images"], row.failure) for row in lost] == [(False, None)]
    assert "| pydocx-having-images.docx | none | none | none | **lost** |  |" in fidelity.render(
        lost
    )
    assert [row.failure for row in failed] == ["timeout: too slow"]
    assert "Failures: timeout 1" in fidelity.render(failed)
