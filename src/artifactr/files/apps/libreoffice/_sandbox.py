"""The sandbox each LibreOffice job runs in: bubblewrap, sealed from the machine (ADR-0019).

:func:`argv` returns the ``bwrap`` command line a job's driver runs under: the system (``/usr``
and the few files of ``/etc`` the office reads) read-only, the job's own directory the only place
it can write, a private ``/tmp`` and ``/dev``, no home directory and none of the application's
files (the driver's directory alone, read-only), no network, new PID, IPC and UTS namespaces
(so killing the job kills every process it started), a session of its own, and death with its
parent. A job's profile lives in the sandbox's memory, copied there from the template profile.
The office's media backend (:data:`MASKED`) is masked: a sealed job plays nothing, and the
backend waits 10 s for a linked video's window on each load (ADR-0027). :func:`bare` seals a
program that needs no directory (``pdftoppm``, rasterising a PDF made from a document).
:func:`can_sandbox` says whether bubblewrap runs here.
"""

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

SYSTEM: Final = ("usr",)
"""The system's folders, bound read-only: programs, libraries, fonts, the office itself."""

MERGED: Final = ("bin", "sbin", "lib", "lib64", "lib32", "libx32")
"""The root's folders that Debian links into ``/usr`` (bound read-only where they are folders)."""

ETC: Final = (
    "alternatives",
    "fonts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "libreoffice",
    "localtime",
    "mime.types",
    "papersize",
)
"""The files of ``/etc`` the office reads (the linker's cache, fonts, its own settings); no
accounts, keys or hosts."""

ROOT: Final = Path("/")
"""The machine's root, whose folders :data:`MERGED` are looked at."""

CACHES: Final = ("/var/cache/fontconfig",)
"""Caches the office only reads, so it doesn't rebuild them on every start."""

PROFILE_SIZE: Final = 64 * 1024 * 1024
"""The most bytes a job's profile may hold, in the sandbox's memory."""


MASKED: Final = ("libavmediagst.so",)
"""The office's libraries, beside its program, that a sealed job can't load: the media backend
(GStreamer), which a linked video makes wait 10 s in every load for a window it never gets."""

NOTHING: Final = "/dev/null"
"""What a masked library is in the sandbox: a file the linker can't open."""


def _system(bwrap: str, root: Path) -> list[str]:
    """Return the start of a sealed command line: the namespaces and the read-only system."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    for name in SYSTEM:
        args += ["--ro-bind", f"/{name}", f"/{name}"]
    for name in MERGED:
        path = root / name
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for cache in CACHES:
        args += ["--ro-bind-try", cache, cache]
    return [*args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]


def _programs(programs: Sequence[str]) -> list[str]:
    """Bind the programs that live outside the system's folders; mask the office's media."""
    args: list[str] = []
    for program in programs:
        path = Path(program)
        if path.is_absolute() and not path.resolve().is_relative_to("/usr"):
            args += ["--ro-bind-try", program, program]
        found = shutil.which(program)
        if found is not None:
            for name in MASKED:
                library = Path(found).resolve().with_name(name)
                if library.is_file():
                    args += ["--ro-bind", NOTHING, str(library)]
    return args


def bare(bwrap: str, programs: Sequence[str] = (), root: Path = ROOT) -> list[str]:
    """Return the command line that runs what follows it sealed, with nowhere to write.

    For a program that reads its stdin and writes its stdout (``pdftoppm``): the system
    read-only, a private ``/tmp`` gone with it, no network, no home, none of the application's
    files.
    """
    return [*_system(bwrap, root), *_programs(programs), "--chdir", "/", "--"]


def argv(
    bwrap: str,
    directory: Path,
    driver: Path,
    programs: Sequence[str] = (),
    root: Path = ROOT,
    *,
    profile: bool = False,
    template: Path | None = None,
) -> list[str]:
    """Return the command line that runs what follows it sealed, the job's directory writable.

    ``programs`` (the office and the Python the adapter was given) are bound read-only where
    they live outside the system's folders; a bare name is found on the sealed system's PATH.
    With ``profile``, the job's profile (``<directory>/profile``) is a file system in the
    sandbox's memory (at most :data:`PROFILE_SIZE` bytes), gone with it: the office's hundred
    files there are never written to disk, nor removed from it once the job ends. A
    ``template`` profile is bound read-only, for the job to copy.
    """
    args = [*_system(bwrap, root), "--ro-bind", str(driver), str(driver)]
    args += _programs(programs)
    args += ["--bind", str(directory), str(directory)]
    if profile:
        args += ["--size", str(PROFILE_SIZE), "--tmpfs", str(directory / "profile")]
    if template is not None:
        args += ["--ro-bind", str(template), str(template)]
    args += ["--chdir", str(directory), "--"]
    return args


def can_sandbox(bwrap: str, probe: Sequence[str] = ("/usr/bin/true",)) -> bool:
    """Return whether bubblewrap (a program's path) runs here with the sandbox's namespaces."""
    with tempfile.TemporaryDirectory(prefix="libreoffice-probe-") as directory:
        where = Path(directory)
        check = subprocess.run(
            [*argv(bwrap, where, where), *probe], capture_output=True, timeout=30, check=False
        )
    return check.returncode == 0
