"""Packaging: the wheel check refuses what artifactr-ai owns, and the install step runs it.

The wheel itself is built, installed with each extra into a fresh virtual environment and
imported by ``scripts/standalone.py``, which the test command runs beside pytest (it takes
longer than a test may). Here its check is tried on wheels made to fail it.
"""

import tomllib
import zipfile
from pathlib import Path

import pytest
from scripts.standalone import BARE, PROBES, check_wheel

ROOT = Path(__file__).resolve().parents[1]
NEEDED = [
    "artifactr/files/__init__.py",
    "artifactr/files/migrations/env.py",
    "artifactr/files/apps/libreoffice/driver/__main__.py",
]


def wheel(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "artifactr_files_ai-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in [*names, "artifactr_files_ai-0.1.0.dist-info/METADATA"]:
            archive.writestr(name, "")
    return path


def test_a_wheel_of_artifactr_files_alone_passes(tmp_path: Path) -> None:
    check_wheel(wheel(tmp_path, [*NEEDED, "artifactr/files/py.typed"]))


@pytest.mark.parametrize(
    ("names", "complaint"),
    [
        ([*NEEDED, "artifactr/files/py.typed", "artifactr/__init__.py"], "artifactr/__init__"),
        ([*NEEDED, "artifactr/files/py.typed", "tests/conftest.py"], "more than artifactr/files"),
        (NEEDED, "lacks artifactr/files/py.typed"),
    ],
)
def test_a_wheel_that_ships_the_wrong_files_is_refused(
    tmp_path: Path, names: list[str], complaint: str
) -> None:
    with pytest.raises(AssertionError, match=complaint):
        check_wheel(wheel(tmp_path, names))


def test_every_extra_is_installed_and_imported_by_the_test_command() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"])
    assert extras - {"sql"} == set(PROBES)
    assert "standalone.py" in (ROOT / "scripts" / "test.sh").read_text()
    assert "[worker]" in BARE
