"""The hostile corpus through a worker process: each file refused in time, memory bounded.

The worker runs as a process of its own (``python -m worker.artifactr_files_worker``, as the image
runs it), so its memory and its work are its own: its peak resident memory and the CPU time it
spends are read from ``/proc`` for each file. "In time" bounds that work, never the wall-clock,
which a loaded machine stretches without the worker doing any more. After the corpus it still
serves a sound document, and it leaves nothing in its temporary directory. A LibreOffice worker
(the real office, or a skip, never in CI) refuses the corpus the same way, before the office sees
a byte, and then refuses what screening passes but the office can't open with the office's reason
(its deadline and limits: ``test_libreoffice.py``).
"""

import os
import sys
from pathlib import Path

import pytest
from scripts.bench.hostile import peak, reset_peak, spawn
from scripts.hostile_corpus import CORPUS, write

from artifactr.files.core.errors import AppRefused, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from tests import hostile
from tests.apps.wordcraft.conftest import recorded
from tests.office import need_office, running
from tests.worker.conftest import QUICK

DEADLINE = 30.0
"""The deadline each hostile file is sent with: the worker's default for an inspection."""

REFUSAL_CPU = 0.5
"""CPU seconds the worker may spend refusing any one file. A refusal takes a few hundredths;
inflating the lying part's 4 GiB alone would take seconds."""

PEAK_MEMORY = 256 * 1024 * 1024
"""The most resident memory the worker may reach while refusing any one file."""

TICKS = os.sysconf("SC_CLK_TCK")
"""Clock ticks a second, as ``/proc/<pid>/stat`` counts CPU time."""

UNOPENABLE = hostile.build(hostile.package(hostile.deflated("word/document.xml", hostile.DOCUMENT)))
"""A package that passes screening and the fingerprint, but holds no text document."""


def cpu_time(pid: int) -> float:
    """Return the CPU seconds a process has used so far, in user and system mode, every thread."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def test_every_hostile_file_is_refused_in_time_in_bounded_memory_and_the_worker_goes_on(
    scratch: Path, pids: Path, pycache: Path, report: bytes
) -> None:
    env = {
        "TMPDIR": str(scratch),
        "STANDIN_PIDS": str(pids),
        "PYTHONPYCACHEPREFIX": str(pycache),
        "WORKER_PASS_ENV": "STANDIN_PIDS,PYTHONPYCACHEPREFIX",
    }
    with spawn([sys.executable, str(QUICK)], env) as worker:
        app = worker.app()
        for item in CORPUS:
            data = item.make()
            reset_peak(worker.pid)
            before = cpu_time(worker.pid)
            with pytest.raises(UnsafeFile) as refused:
                await app.inspect(data, deadline=DEADLINE)
            work = cpu_time(worker.pid) - before
            assert (item.name, refused.value.reason) == (item.name, item.reason)
            assert work < REFUSAL_CPU, f"{item.name} took {work:.2f} s of CPU"
            assert peak(worker.pid) < PEAK_MEMORY, f"{item.name}: {peak(worker.pid):,} bytes"
        assert recorded(pids) == []
        inspection = await app.inspect(report)
        assert inspection.fingerprint == fingerprint(report)
        assert len(recorded(pids)) == 1


@pytest.mark.timeout(180)  # it starts offices: seconds each on a busy machine
async def test_a_libreoffice_worker_refuses_every_hostile_file_before_the_office_and_goes_on(
    scratch: Path,
) -> None:
    need_office()
    # No pool: a refused file starts no office, and none waits in the scratch either.
    env = {"TMPDIR": str(scratch), "WORKER_APP": "libreoffice", "WORKER_POOL": "0"}
    with spawn([], env) as worker:
        app = worker.app()
        for item in CORPUS:
            data = item.make()
            reset_peak(worker.pid)
            before = cpu_time(worker.pid)
            with pytest.raises(UnsafeFile) as refused:
                await app.inspect(data, deadline=DEADLINE)
            work = cpu_time(worker.pid) - before
            assert (item.name, refused.value.reason) == (item.name, item.reason)
            assert work < REFUSAL_CPU, f"{item.name} took {work:.2f} s of CPU"
            assert peak(worker.pid) < PEAK_MEMORY, f"{item.name}: {peak(worker.pid):,} bytes"
        assert running(str(scratch)) == []
        # What the zip screen passes but names no document is the adapter's refusal: refused,
        # not timed out, so it came before the deadline.
        reset_peak(worker.pid)
        with pytest.raises(AppRefused, match=r"not a \.docx, \.xlsx or \.pptx"):
            await app.inspect(UNOPENABLE, deadline=DEADLINE)
        assert peak(worker.pid) < PEAK_MEMORY
        assert {spec.id for spec in await app.commands("accept")} >= {"changes.accept"}
    assert running(str(scratch)) == []


def test_the_corpus_is_written_to_a_folder_with_nothing_committed(tmp_path: Path) -> None:
    written = write(tmp_path / "corpus")
    assert [path.name for path in written] == [f"{item.name}.docx" for item in CORPUS]
    sizes = {path.stem: path.stat().st_size for path in written}
    assert sizes["empty"] == 0
    assert sizes["huge-image"] < 1024
    assert sizes["billion-laughs"] < 2048
    assert max(sizes.values()) < 16 * 1024 * 1024
    assert not list(Path(__file__).parent.glob("*.docx"))
