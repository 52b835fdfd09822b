"""The LibreOffice adapter without an office: its catalog, its checks, and how it says it can't run.

Nothing here starts ``soffice``: a bad batch is refused before any office starts, so these tests
run on any machine. A misbehaving driver is played by a small shell script given as the
adapter's ``python``, which answers as a broken driver would (the real one never does).
"""

import asyncio
import json
import logging
import math
import os
import re
import stat
import tempfile
import time
from pathlib import Path

import pytest

from artifactr.files import AppCommand
from artifactr.files.apps import processes
from artifactr.files.apps.libreoffice import CATALOG, LibreOffice, _app, _process, available
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge
from tests import hostile
from tests.office import running
from tests.pids import kill

NOWHERE = "/nonexistent/soffice"
"""An office that isn't there: a call that gets as far as starting it fails."""


def command(name: str, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": name, "params": params})


def script(tmp_path: Path, body: str, name: str = "driver.sh") -> str:
    """Return the path of a shell script that plays the driver (``$2`` is the job's folder)."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def test_the_catalog_has_at_least_twenty_commands_each_with_a_label_and_a_schema() -> None:
    specs = (await LibreOffice().commands())[: len(CATALOG)]
    assert [spec.id for spec in specs] == [command.id for command in CATALOG]
    assert len(specs) >= 20
    for spec in specs:
        assert spec.label
        schema = json.loads(spec.params)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
    ids = {spec.id for spec in specs}
    assert {"text.replaceAll", "comment.reply", "changes.accept", "toc.update"} <= ids
    assert [spec.id for spec in await LibreOffice().commands("TABLE.")] == [
        "table.insertRow",
        "table.deleteRow",
        "table.setCell",
    ]
    insert = next(spec for spec in specs if spec.id == "paragraph.insertAfter")
    schema = json.loads(insert.params)
    assert schema["oneOf"] == [{"required": ["paragraph"]}, {"required": ["heading"]}]
    assert schema["required"] == ["text"]
    assert "required" not in json.loads(next(s for s in specs if s.id == "fields.update").params)


@pytest.mark.parametrize(
    ("batch", "reason"),
    [
        ([command("file.open", path="/etc/passwd")], "command 0 (`file.open`): unknown command"),
        (
            [command("toc.update"), command("text.replaceAll", find="a", replace="b", x=1)],
            "command 1 (`text.replaceAll`): bad parameters: unknown field `x`; it takes find,",
        ),
        ([command("toc.update", x=1)], "unknown field `x`; it takes nothing"),
        ([command("text.replaceAll", find="a")], "missing `replace`"),
        ([command("paragraph.delete")], "give exactly one of `paragraph` and `heading`"),
        (
            [command("paragraph.delete", paragraph="a", heading="b")],
            "give exactly one of `paragraph` and `heading`",
        ),
        ([command("changes.track", value="yes")], "`value` must be true or false"),
        ([command("table.deleteRow", table=0, row=1)], "`table` must be a whole number from 1"),
        ([command("table.deleteRow", table=True, row=1)], "`table` must be a whole number"),
        ([command("table.insertRow", table=1, row=1, cells="a")], "must be a list of strings"),
        ([command("table.insertRow", table=1, row=1, cells=["a", 1])], "must be a string"),
        ([command("text.replaceAll", find="", replace="b")], "`find` must not be empty"),
        ([command("text.replaceAll", find="a", replace="b\rc")], "a control character"),
        ([command("text.replaceAll", find="a" * 100_001, replace="")], "longer than 100000"),
        ([command("comment.resolve", id=0)], "`id` must be an id from the inspection"),
        ([command("comment.resolve", id=True)], "`id` must be a string"),
    ],
)
async def test_a_bad_batch_is_refused_before_any_office_starts(
    batch: list[AppCommand], reason: str
) -> None:
    with pytest.raises(AppRefused) as refused:
        await LibreOffice(soffice=NOWHERE).apply(b"never read", batch)
    assert reason in refused.value.reason


async def test_good_parameters_pass_the_check_and_reach_the_office() -> None:
    batch = [
        command("comment.resolve", id=2),
        command("table.insertRow", table=1, row=1, cells=["a", ""]),
        command("paragraph.delete", heading="Intro", occurrence=2),
    ]
    # The batch is fine; the file is what's refused, by the screen before the office.
    with pytest.raises(AppRefused, match=r"not a \.docx"):
        await LibreOffice(soffice=NOWHERE).apply(b"not a zip", batch)


async def test_files_refused_by_the_screen_never_reach_the_office() -> None:
    office = LibreOffice(soffice=NOWHERE, max_size=1024 * 1024)
    with pytest.raises(AppTooLarge, match="over the limit of 1048576"):
        await office.inspect(b"x" * (1024 * 1024 + 1))
    with pytest.raises(AppTooLarge):
        await office.inspect(hostile.ratio_bomb())
    with pytest.raises(AppRefused, match="bad parameters: `scale` must be a number"):
        await office.render(b"", 1, scale=math.nan)


async def test_an_office_that_cannot_start_or_answer_is_a_crash(tmp_path: Path) -> None:
    sound = hostile.sound_docx()
    with pytest.raises(AppCrashed, match=r"soffice exited|could not start"):
        await LibreOffice(soffice="/bin/false").inspect(sound)
    with pytest.raises(AppCrashed, match="driver could not start"):
        await LibreOffice(python=NOWHERE, sandbox=False, isolate_network=False).inspect(sound)
    if await LibreOffice().sandboxed():
        with pytest.raises(AppCrashed, match=r"stopped \(exit status 1\): bwrap: execvp"):
            await LibreOffice(python=NOWHERE).inspect(sound)
    with pytest.raises(AppCrashed, match=r"stopped \(exit status 3\): nothing in its logs"):
        await LibreOffice(python=script(tmp_path, "exit 3")).inspect(sound)
    with pytest.raises(AppCrashed, match="isn't JSON"):
        await LibreOffice(python=script(tmp_path, "echo hello")).inspect(sound)
    broken = script(tmp_path, """echo '{"ok": false, "kind": "crashed", "reason": "boom"}'""")
    with pytest.raises(AppCrashed, match="libreoffice failed: boom"):
        await LibreOffice(python=broken).inspect(sound)
    nonsense = script(tmp_path, """echo '{"ok": true, "result": {"review": 5}}'""")
    with pytest.raises(AppCrashed, match="answered something unreadable"):
        await LibreOffice(python=nonsense, soffice="/bin/echo").inspect(sound)
    silent = script(tmp_path, """echo '{"ok": true, "result": {"pages": 1}}'""")
    with pytest.raises(AppCrashed, match=r"said it wrote out\.pdf"):
        await LibreOffice(python=silent, soffice="/bin/echo").pdf(sound)
    unsealed = LibreOffice(python=silent, sandbox=False, isolate_network=True)
    with pytest.raises(AppCrashed, match=r"said it wrote out\.pdf"):
        await unsealed.pdf(sound)
    junk = script(tmp_path, """echo junk > "$2/out.docx"; echo '{"ok": true, "result": {}}'""")
    with pytest.raises(AppCrashed, match=r"saved something that is not a \.docx"):
        await LibreOffice(python=junk, soffice="/bin/echo").apply(sound, [])
    big = script(
        tmp_path, """head -c 4096 /dev/zero > "$2/out.docx"; echo '{"ok": true, "result": {}}'"""
    )
    with pytest.raises(AppTooLarge, match="wrote a file over the limit of"):
        await LibreOffice(python=big, max_size=len(sound) + 10).apply(sound, [])


async def test_a_process_that_outlives_its_kill_is_a_crash_and_its_directory_still_goes(
    tmp_path: Path, jobs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kill that never lands plays a process the kernel can't tear down (one stuck in I/O).
    monkeypatch.setattr(processes, "_kill_group", lambda pgid: None)
    lingering = script(tmp_path, """sleep 30 & echo '{"ok": true, "result": {}}'""")
    runner = _process.Runner(
        soffice=NOWHERE, python=lingering, isolate=False, max_file=1024, grace=0.2
    )
    with pytest.raises(AppCrashed, match=r"were still alive 0\.2 s later") as crashed:
        await _process.run(runner, "inspect", hostile.sound(), deadline=5)
    # The survivor is named: the sleep, which held the driver's stdout open too.
    named = re.search(r"its processes \[(\d+)\] were", crashed.value.reason)
    assert named is not None
    survivor = int(named[1])
    said = await asyncio.to_thread(Path(f"/proc/{survivor}/cmdline").read_bytes)
    assert said == b"sleep\x0030\x00"
    kill(survivor)
    # The jobs fixture checks its directory is gone all the same.


def installation(root: Path, *, version: str, suffix: str, build: str, kinds: list[str]) -> str:
    """Return the program of an office installed under ``root``, as Debian lays one out."""
    program = root / "lib" / "office" / "program"
    registry = root / "lib" / "office" / "share" / "registry"
    program.mkdir(parents=True)
    registry.mkdir(parents=True)
    (program / "versionrc").write_text(f"[Version]\nAllLanguages=en-US\nbuildid={build}\n")
    shown = f"<value>{suffix}</value>" if suffix else "<value/>"
    (registry / "main.xcd").write_text(
        '<prop oor:name="ooSetupVersionAboutBox" oor:type="xs:string"><value/></prop>'
        f'<prop oor:name="ooSetupVersionAboutBox">\n  <value>{version}</value></prop>'
        f'<prop oor:name="ooSetupVersionAboutBoxSuffix">{shown}</prop>'
    )
    for module in kinds:
        (registry / f"{module}.xcd").write_text("<oor:data/>")
    office = program / "soffice"
    office.write_text("#!/bin/sh\nexit 99\n")
    office.chmod(0o755)
    linked = root / "soffice"
    linked.symlink_to(office)
    return str(linked)


def kill_landing_late(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Make a job's kill land only once a late reaping is logged: a machine under load."""
    kill_group = processes._kill_group

    def late(pgid: int) -> None:
        if "reaped late" in caplog.text:
            kill_group(pgid)

    monkeypatch.setattr(processes, "_kill_group", late)


async def test_an_office_reaped_in_the_background_past_its_grace_is_gone_when_drained(
    tmp_path: Path, jobs: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kill_landing_late(monkeypatch, caplog)
    lingering = script(tmp_path, """sleep 30 & echo '{"ok": true, "result": {"job": "done"}}'""")
    runner = _process.Runner(
        soffice=NOWHERE, python=lingering, isolate=False, max_file=1024, grace=0.2
    )
    reaper = _process.Reaper()
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        reply = await _process.run(runner, "inspect", hostile.sound(), deadline=5, reaper=reaper)
        assert reply.result == {"job": "done"}  # answered first
        assert (reaper.reaping, reaper.started) == (1, 1)
        await reaper.drained()
    assert reaper.reaping == 0
    # The overrun is logged, naming the survivor; it was killed again and is gone.
    assert re.search(r"reaped late, .* its processes \[\d+\] were still alive", caplog.text)
    assert running(str(jobs)) == []


def until_asked(jobs: Path) -> None:
    """Wait until a job's driver has read its job (it marks its directory); fail after a minute."""
    for _ in range(6000):
        if any((path / "asked").exists() for path in jobs.iterdir()):
            return
        time.sleep(0.01)
    pytest.fail("no job asked after 60 s")


async def test_a_job_cancelled_whose_office_outlives_its_grace_is_gone_when_cancelled(
    tmp_path: Path, jobs: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kill_landing_late(monkeypatch, caplog)
    asked = script(tmp_path, """read job; sleep 30 & touch "$2/asked"; wait""")
    runner = _process.Runner(soffice=NOWHERE, python=asked, isolate=False, max_file=1024, grace=0.2)
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        job = asyncio.create_task(_process.run(runner, "inspect", hostile.sound(), deadline=60))
        # The driver has its job: the job waits for its answer.
        await asyncio.to_thread(until_asked, jobs)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
    assert "reaped late, and is killed again" in caplog.text
    assert running(str(jobs)) == []


async def test_the_version_and_kinds_come_from_the_installation_and_no_office_starts(
    tmp_path: Path,
) -> None:
    # Its program exits 99 if started: the version is read, never asked of the office.
    seven = installation(
        tmp_path / "a", version="7.4.7.2", suffix="", build="40(Build:2)", kinds=["writer", "calc"]
    )
    about = await LibreOffice(soffice=seven).about()
    assert (about.app, about.version, about.build) == ("libreoffice", "7.4.7.2", "40(Build:2)")
    found = available(soffice=seven)
    assert found.kinds == ("docx", "xlsx")
    assert found.lacking == ("pptx (apt-get install libreoffice-impress)",)
    assert found.opens == "docx, xlsx; not pptx (apt-get install libreoffice-impress)"
    alpha = installation(
        tmp_path / "b", version="25.2.0", suffix=".0 alpha1 &amp; co", build="1", kinds=[]
    )
    assert (await LibreOffice(soffice=alpha).about()).version == "25.2.0.0 alpha1 & co"
    assert available(soffice=alpha).opens.startswith("nothing; not docx (apt-get install")
    # A wrapper that is no installation's says nothing, and an absent office neither.
    terse = LibreOffice(soffice=script(tmp_path, "exit 99"))
    about = await terse.about()
    assert (about.app, about.version, about.build) == ("libreoffice", None, None)
    assert await terse.about() is about
    assert (await LibreOffice(soffice=NOWHERE, build="sha256:1").about()).build == "sha256:1"


async def test_the_sandbox_and_the_network_namespace_are_used_where_they_can_be_and_said_where_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert not await LibreOffice(sandbox=False, isolate_network=False).isolated()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AppCrashed, match="must run without a network"):
        await LibreOffice(sandbox=False, isolate_network=True).isolated()
    with pytest.raises(AppCrashed, match="must run sealed, and bubblewrap can't run here"):
        await LibreOffice(sandbox=True).sandboxed()
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        preferred = LibreOffice()
        assert not await preferred.isolated()
        assert not await preferred.isolated()
        assert not await preferred.sandboxed()
    assert [r.message for r in caplog.records] == [
        "libreoffice jobs run UNSEALED: bubblewrap is missing or can't run here",
        "libreoffice jobs run WITH the network: `unshare --net` is unavailable here",
    ]
    (tmp_path / "unshare").symlink_to("/bin/false")
    (tmp_path / "bwrap").symlink_to("/bin/false")
    assert not await LibreOffice(isolate_network=None).isolated()


def test_availability_says_what_is_missing_and_which_package_brings_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = LibreOffice.available(soffice="soffice", python="/nonexistent/python3")
    assert not missing
    assert missing.missing == (
        "no `soffice` on the PATH (apt-get install libreoffice-writer libreoffice-calc "
        "libreoffice-impress)",
        "no Python at `/nonexistent/python3` (apt-get install python3-uno)",
        "no `pdftoppm` on the PATH (apt-get install poppler-utils)",
    )
    assert missing.kinds == ()
    without_uno = available(soffice="/bin/true", python="/bin/false")
    assert without_uno.soffice == "/bin/true"
    assert without_uno.python is None
    assert "`/bin/false` can't import uno (apt-get install python3-uno)" in without_uno.missing
    assert os.environ["PATH"] == str(tmp_path)


async def test_a_template_profile_is_made_once_or_none_where_the_office_cannot_make_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def runner(soffice: str) -> _process.Runner:
        return _process.Runner(
            soffice=soffice, python="/usr/bin/python3", isolate=False, max_file=1
        )

    assert await _process.template(runner("/bin/false"), 30) is None
    assert await _process.template(runner("/bin/true"), 30) is None  # says yes, makes nothing
    assert await _process.template(runner(NOWHERE), 30) is None
    assert await _process.template(runner(script(tmp_path, "sleep 30", "slow")), 0.1) is None
    assert [name for name in os.listdir(tmp_path) if name.startswith("libreoffice")] == []
    made = script(tmp_path, 'mkdir -p "${6#-env:UserInstallation=file://}/user"', "maker")
    profile = await _process.template(runner(made), 30)
    assert profile is not None
    assert (profile / "user").is_dir()


async def test_pdftoppm_runs_as_sealed_as_the_jobs_do() -> None:
    # Sealed jobs: the sandbox, bare (the test of the sandbox runs it); else no network.
    assert await LibreOffice(sandbox=False, isolate_network=True)._sealing() == [
        "unshare",
        "--net",
        "--",
    ]
    assert await LibreOffice(sandbox=False, isolate_network=False)._sealing() == []


async def test_a_rasteriser_that_can_t_start_fails_or_hangs_is_a_typed_failure(
    tmp_path: Path,
) -> None:
    # The sealing prefix runs the rasteriser: a prefix that can't start, exits badly or hangs
    # stands for a pdftoppm that does, and each is the adapter's typed failure, never a hang.
    missing = [str(tmp_path / "no-such-sandbox")]
    with pytest.raises(AppCrashed, match="pdftoppm could not start"):
        await _app._rasterise(missing, b"%PDF-1.4", 1, 72, 30)
    failing = ["sh", "-c", "exit 3", "sh"]
    with pytest.raises(AppCrashed, match="pdftoppm failed with exit status 3"):
        await _app._rasterise(failing, b"%PDF-1.4", 1, 72, 30)
    hanging = ["sh", "-c", "exec sleep 30", "sh"]
    with pytest.raises(AppTimeout, match=r"pdftoppm took longer than 0\.2 s and was stopped"):
        await _app._rasterise(hanging, b"%PDF-1.4", 1, 72, 0.2)
