"""Check pins: the worker and the editor are built from the same WordCraft release (RFC-0003).

"One release, two artifacts, one pin": the worker's image takes ``wordcraft-cli`` from the
release's Linux tarball, the editor's the same release's ``wordcraft-web`` zip. Each has its pins
in one place, and ``worker/pins.toml`` records the release:

- the worker's: ``worker/Dockerfile``'s ``ARG`` defaults, ``WORDCRAFT_VERSION``,
  ``WORDCRAFT_SUMS_SHA256`` (the release's ``SHA256SUMS.txt``) and ``WORDCRAFT_SHA256`` (the
  tarball);
- the editor's: ``worker/compose.yaml``'s build args for the service that sets
  ``WORDCRAFT_WEB_SHA256``: the same version and sums, and ``WORDCRAFT_WEB_SHA256`` (the zip);
- the record: ``[wordcraft]`` ``version``, ``sums_sha256``, and ``[wordcraft.assets]``, the sums
  file's lines for ``wordcraft-<ver>-linux-x86_64.tar.gz`` and ``wordcraft-web-<ver>.zip``.

It fails (exit 1, one line a problem) when a pin is missing or malformed, when the worker's and
the editor's versions or sums differ, when either differs from the record, or when a WordCraft
pin anywhere else in the compose file disagrees. Base images are pinned by digest too (the
Dockerfile's ``*_DIGEST`` args must be ``sha256:`` and 64 hex digits). ``--strict`` also refuses
placeholder digests (all zeros), for the job that builds the images::

    python scripts/check_pins.py [--root DIR] [--strict]
"""

import argparse
import re
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
"""The repository, whose ``worker/`` holds the pins."""

VERSION: Final = "WORDCRAFT_VERSION"
SUMS: Final = "WORDCRAFT_SUMS_SHA256"
TARBALL: Final = "WORDCRAFT_SHA256"
WEB: Final = "WORDCRAFT_WEB_SHA256"

WORKER_PINS: Final = (VERSION, SUMS, TARBALL)
"""The pins the worker's Dockerfile must set."""

EDITOR_PINS: Final = (VERSION, SUMS, WEB)
"""The pins the editor's build args must set."""

ARCH: Final = "x86_64"
"""The architecture of the tarball the worker's image is built from."""

_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
_SEMVER: Final = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
_PLACEHOLDER: Final = "0" * 64
_ARG: Final = re.compile(r"^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?\s*$")
_SERVICE: Final = re.compile(r"^  ([A-Za-z0-9._-]+):\s*$")
_COMPOSE_PIN: Final = re.compile(
    r"^\s+-?\s*(WORDCRAFT_[A-Z0-9_]+)\s*[:=]\s*\"?([^\"#\s]*)\"?\s*(?:#.*)?$"
)


@dataclass
class Pins:
    """Every pin found, and every problem with them."""

    record: dict[str, str] = field(default_factory=dict[str, str])
    """The release's record (pins.toml), by the build arg that must equal it."""
    worker: dict[str, str] = field(default_factory=dict[str, str])
    """The Dockerfile's ARG defaults."""
    digests: dict[str, str] = field(default_factory=dict[str, str])
    """The Dockerfile's base image digests."""
    services: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    """Each compose service's WordCraft build args."""
    problems: list[str] = field(default_factory=list[str])
    """What is wrong, one sentence each."""

    @property
    def editor(self) -> dict[str, str]:
        """The build args of the service that builds the editor (the one setting its zip)."""
        for args in self.services.values():
            if WEB in args:
                return args
        return {}


def read_record(path: Path, pins: Pins) -> None:
    """Read the release's record, noting what is missing or malformed."""
    try:
        release = tomllib.loads(path.read_text()).get("wordcraft", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        pins.problems.append(f"{path.name}: can't be read: {error}")
        return
    version = str(release.get("version", ""))
    assets = release.get("assets", {})
    pins.record = {
        VERSION: version,
        SUMS: str(release.get("sums_sha256", "")),
        TARBALL: str(assets.get(f"wordcraft-{version}-linux-{ARCH}.tar.gz", "")),
        WEB: str(assets.get(f"wordcraft-web-{version}.zip", "")),
    }


def read_dockerfile(path: Path, pins: Pins) -> None:
    """Read the Dockerfile's ARG defaults: the worker's pins and the base images' digests."""
    for line in path.read_text().splitlines():
        match = _ARG.match(line)
        if match is None or match.group(2) is None:
            continue
        name, value = match.group(1), match.group(2).strip("\"'")
        if name.startswith("WORDCRAFT_") and name != "WORDCRAFT_RELEASES":
            if name in pins.worker and pins.worker[name] != value:
                pins.problems.append(
                    f"Dockerfile: {name} is set twice, to {pins.worker[name]} and {value}"
                )
            pins.worker.setdefault(name, value)
        elif name.endswith("_DIGEST"):
            pins.digests[name] = value


def read_compose(path: Path, pins: Pins) -> None:
    """Read each compose service's WordCraft build args (one ``NAME: "value"`` a line)."""
    service: str | None = None
    in_services = False
    for line in path.read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            in_services = line.rstrip() == "services:"
            service = None
            continue
        heading = _SERVICE.match(line)
        if in_services and heading is not None:
            service = heading.group(1)
            continue
        pin = _COMPOSE_PIN.match(line)
        if service is not None and pin is not None:
            pins.services.setdefault(service, {})[pin.group(1)] = pin.group(2)


def check(root: Path, *, strict: bool = False) -> Pins:
    """Return every pin under ``root/worker`` and every problem with them."""
    folder = root / "worker"
    pins = Pins()
    read_record(folder / "pins.toml", pins)
    read_dockerfile(folder / "Dockerfile", pins)
    read_compose(folder / "compose.yaml", pins)
    _check_record(pins, strict)
    _check_side(pins, "the worker's pin (Dockerfile)", pins.worker, WORKER_PINS, strict)
    _check_side(pins, "the editor's pin (compose.yaml)", pins.editor, EDITOR_PINS, strict)
    for name in (VERSION, SUMS):
        worker, editor = pins.worker.get(name), pins.editor.get(name)
        if worker and editor and worker != editor:
            pins.problems.append(
                f"the worker's and the editor's {name} differ: {worker} and {editor}"
            )
    for service, args in sorted(pins.services.items()):
        for name, value in sorted(args.items()):
            expected = pins.record.get(name)
            if expected and value != expected:
                pins.problems.append(
                    f"compose.yaml: {service}'s {name} is {value}, not the release's {expected}"
                )
    for name, value in sorted(pins.digests.items()):
        digest = value.removeprefix("sha256:")
        if not value.startswith("sha256:") or not _SHA256.match(digest):
            pins.problems.append(f"Dockerfile: {name} is not a sha256: digest: {value!r}")
        elif strict and digest == _PLACEHOLDER:
            pins.problems.append(f"Dockerfile: {name} is a placeholder")
    return pins


def _check_record(pins: Pins, strict: bool) -> None:
    if not _SEMVER.match(pins.record.get(VERSION, "")):
        pins.problems.append("pins.toml: the release's version is missing or not x.y.z")
    for name in (SUMS, TARBALL, WEB):
        _check_digest(pins, f"pins.toml's {name}", pins.record.get(name, ""), strict)


def _check_side(
    pins: Pins, side: str, found: dict[str, str], required: Sequence[str], strict: bool
) -> None:
    for name in required:
        value = found.get(name, "")
        if not value:
            pins.problems.append(f"{side}: {name} is missing")
            continue
        if name != VERSION:
            _check_digest(pins, f"{side}: {name}", value, strict)
        expected = pins.record.get(name)
        if expected and value != expected:
            pins.problems.append(f"{side}: {name} is {value}, not the release's {expected}")


def _check_digest(pins: Pins, where: str, value: str, strict: bool) -> None:
    if not _SHA256.match(value):
        pins.problems.append(f"{where} is missing or not 64 hex digits: {value!r}")
    elif strict and value == _PLACEHOLDER:
        pins.problems.append(f"{where} is a placeholder")


def main(argv: Sequence[str] | None = None) -> int:
    """Check the pins; print each problem, or what agrees; return the exit status."""
    parser = argparse.ArgumentParser(description="Check the worker's and editor's WordCraft pins.")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    parser.add_argument("--strict", action="store_true", help="refuse placeholder digests too")
    options = parser.parse_args(argv)
    pins = check(options.root, strict=options.strict)
    for problem in pins.problems:
        print(f"check_pins: {problem}", file=sys.stderr)
    if pins.problems:
        return 1
    placeholders = sum(
        value.removeprefix("sha256:") == _PLACEHOLDER
        for value in [*pins.record.values(), *pins.digests.values()]
    )
    print(
        f"check_pins: the worker and the editor pin WordCraft {pins.record[VERSION]} alike"
        + (f" ({placeholders} digests are placeholders)" if placeholders else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
