"""The sandbox: a job sees the system read-only and its own directory, and nothing else.

Documents built here reach for the machine (local files by link, field, OLE and an embedded
font's name); each renders and inspects without the files' content, and nothing is written
outside the job's directory. The sandbox itself is tried with a shell run under its command line.
"""

import asyncio
import io
import re
import shutil
import socket
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pptx
import pytest
from PIL import Image

import artifactr.files
from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice, _sandbox
from artifactr.files.apps.libreoffice._process import DRIVER
from tests.apps.libreoffice.conftest import reaching_document, solid_png
from tests.office import need_office

SECRET = "SECRET-TEXT-7f3a"
MAGENTA = (255, 0, 255)
SLOW = 60.0
CLIP = next(Path("/usr/lib/libreoffice/share/gallery/sounds").glob("*.wav"), Path("/clip.wav"))
"""A clip the sealed office can see (the system is bound read-only), for a deck to link."""
FONT = next(Path("/usr/share/fonts").rglob("*.ttf"))
"""A real TrueType font of the system's, embedded in a document under a name that climbs."""


def outside(root: Path) -> dict[str, int]:
    """Every file under ``root`` but the jobs' directory, with its size."""
    return {
        str(path.relative_to(root)): path.stat().st_size
        for path in root.rglob("*")
        if "jobs" not in path.relative_to(root).parts and path.is_file()
    }


async def test_documents_that_reach_for_the_machine_show_nothing_of_it(
    sealed: LibreOffice, tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "secret.txt").write_text(SECRET)
    (secrets / "secret.png").write_bytes(solid_png(MAGENTA))
    font = FONT.read_bytes()
    source = reaching_document(secrets, font, tmp_path / "escaped")
    before = outside(tmp_path)

    inspection = await sealed.inspect(source, deadline=SLOW)
    png = await sealed.render(source, 1, deadline=SLOW)
    pdf = await sealed.pdf(source)
    edited = await sealed.apply(
        source, [AppCommand(command="paragraph.append", params={"text": "Seen."})]
    )

    assert "A page that reaches for the machine." in inspection.text
    assert "Seen." in edited.inspection.text
    for text in (inspection.text, edited.inspection.text, await pdf_text(pdf, tmp_path)):
        assert SECRET not in text
    colours = Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 24) or []
    assert MAGENTA not in {colour for _count, colour in colours}
    assert outside(tmp_path) == before


async def pdf_text(pdf: bytes, where: Path) -> str:
    (where / "out.pdf").write_bytes(pdf)
    done = await asyncio.to_thread(
        subprocess.run,
        ["pdftotext", str(where / "out.pdf"), "-"],
        capture_output=True,
        check=True,
        timeout=30,
    )
    (where / "out.pdf").unlink()
    return done.stdout.decode()


def sealed_shell(job: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run a shell script in the sandbox a job in ``job`` gets."""
    argv = _sandbox.argv("bwrap", job, DRIVER)
    return subprocess.run(
        [*argv, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=30, check=False
    )


@pytest.mark.usefixtures("sealed")
def test_a_job_sees_the_system_and_its_own_directory_and_nothing_else(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "secret.txt").write_text(SECRET)
    application = Path(artifactr.files.__file__).parent
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        seen = sealed_shell(
            job,
            f"""
            echo written > {job}/mine.txt && echo wrote-mine
            cat {tmp_path}/secret.txt || echo no-secret
            touch {tmp_path}/escaped 2>/dev/null  # the private /tmp: gone with the job
            touch /usr/escaped 2>/dev/null || echo no-system-write
            test -e {application}/__init__.py || echo no-application
            test -e {DRIVER}/__main__.py && echo driver
            test -e /root || test -e /home/nobody || echo no-home
            test -e /etc/shadow || echo no-accounts
            /usr/bin/python3 -c "import socket as s; s.create_connection(('127.0.0.1', {port}))" \
              2>/dev/null || echo no-network
            ls /proc | grep -c '^[0-9]'
            """,
        )
    finally:
        server.close()
    lines = seen.stdout.split()
    assert lines[:-1] == [
        "wrote-mine",
        "no-secret",
        "no-system-write",
        "no-application",
        "driver",
        "no-home",
        "no-accounts",
        "no-network",
    ]
    assert int(lines[-1]) <= 4  # its own PID namespace: the sandbox's init, sh, ls, grep
    assert (job / "mine.txt").read_text() == "written\n"
    assert not (tmp_path / "escaped").exists()


def test_the_roots_folders_are_bound_as_folders_or_linked_as_links(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").symlink_to("usr/lib")
    argv = " ".join(_sandbox.argv("bwrap", tmp_path, DRIVER, root=tmp_path))
    assert f"--ro-bind {tmp_path}/bin /bin" in argv
    assert "--symlink usr/lib /lib" in argv
    assert "/sbin" not in argv


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every program this process starts from now on, as its command line.

    asyncio's subprocesses and ``subprocess.run`` alike are :class:`subprocess.Popen`'s, so
    nothing the adapter starts is missed.
    """
    seen: list[list[str]] = []
    real = subprocess.Popen.__init__

    def recorded(self: subprocess.Popen[bytes], args: list[str], *more: Any, **named: Any):
        seen.append([str(arg) for arg in args])
        real(self, args, *more, **named)

    monkeypatch.setattr(subprocess.Popen, "__init__", recorded)
    return seen


@pytest.mark.timeout(240)
async def test_every_process_a_sealed_job_starts_is_sealed_the_version_probe_too(
    jobs: Path, report: bytes, started: list[list[str]]
) -> None:
    need_office()
    bwrap = shutil.which("bwrap")
    if bwrap is None or not _sandbox.can_sandbox(bwrap):
        pytest.skip("bubblewrap can't run here (apt-get install bubblewrap)")
    started.clear()
    local, pooled = LibreOffice(sandbox=True), LibreOffice(sandbox=True, pool=1)
    try:
        about = await local.about()
        assert about.version is not None  # read from the installation: nothing started
        assert started == []
        for app in (local, pooled):
            await app.inspect(report, deadline=SLOW)
            await app.apply(report, [AppCommand(command="paragraph.append", params={"text": "x"})])
            assert (await app.render(report, 1, deadline=SLOW)).startswith(b"\x89PNG")
            await app.render(report, 1, scale=0.5, deadline=SLOW)  # from the kept PDF
        await pooled.about()
    finally:
        await local.close()
        await pooled.close()
    assert started
    unsealed = [argv for argv in started if argv[0] != bwrap]
    assert unsealed == []
    # The spy saw the office's jobs, its template's start and each page's rasterising.
    assert sum("pdftoppm" in argv for argv in started) == 4
    assert any("--terminate_after_init" in argv for argv in started)
    assert sum(str(DRIVER) in argv[-2:] for argv in started) >= 6
    # The office's media backend can't load in the sandbox: a linked video costs no wait.
    assert any(
        argv[at + 1].endswith("/libavmediagst.so")
        for argv in started
        for at, arg in enumerate(argv)
        if arg == "/dev/null"
    )


def linked_video_deck(url: str) -> bytes:
    """A deck of one slide whose movie is linked (``TargetMode="External"``), not embedded."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "A slide with a linked video"
    inch = 914400
    slide.shapes.add_movie(io.BytesIO(b"\0" * 64), inch, 2 * inch, 4 * inch, 3 * inch)
    buffer = io.BytesIO()
    deck.save(buffer)
    embedded = zipfile.ZipFile(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as linked:
        for info in embedded.infolist():
            body = embedded.read(info)
            if info.filename.endswith("slide1.xml.rels"):
                body = re.sub(
                    rb'Target="\.\./media/media1\.mp4"',
                    f'Target="{url}" TargetMode="External"'.encode(),
                    body,
                )
            if not info.filename.startswith("ppt/media/media"):
                linked.writestr(info, body)
    return out.getvalue()


@pytest.mark.usefixtures("sealed")
def test_the_offices_media_backend_cannot_load_in_the_sandbox(tmp_path: Path) -> None:
    # The office's GStreamer backend waits 10 s a load for a linked video's window: the
    # sandbox masks it, so no sealed office loads it, and a job never waits for it.
    office = shutil.which("soffice")
    assert office is not None
    backend = Path(office).resolve().with_name("libavmediagst.so")
    if not backend.is_file():
        pytest.skip("this office has no GStreamer media backend")
    job = tmp_path / "job"
    job.mkdir()
    argv = _sandbox.argv("bwrap", job, DRIVER, ("/usr/bin/python3", "soffice"))
    load = f"import ctypes; ctypes.CDLL({str(backend)!r})"
    masked = subprocess.run(
        [*argv, "/usr/bin/python3", "-c", load], capture_output=True, text=True, check=False
    )
    assert masked.returncode != 0
    assert "cannot open shared object file" in masked.stderr
    outside = subprocess.run(["/usr/bin/python3", "-c", load], capture_output=True, check=False)
    assert outside.returncode == 0  # the library itself is sound: only the sandbox masks it


async def test_a_deck_with_a_linked_video_is_read_and_rendered_sealed(sealed: LibreOffice) -> None:
    deck = linked_video_deck(CLIP.as_uri())
    found = await sealed.inspect(deck, deadline=SLOW)
    assert found.text.splitlines()[1] == "# Slide 1: A slide with a linked video"
    assert (await sealed.render(deck, 1, deadline=SLOW)).startswith(b"\x89PNG")
