"""Packaging: the wheel ships artifactr/files only, and imports with its migrations anywhere."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_built_wheel_imports_outside_the_project_with_its_migrations() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "standalone.py")],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr
    assert "site-packages/artifactr/files/__init__.py" in done.stdout


def test_the_wheel_holds_no_artifactr_init(tmp_path: Path) -> None:
    from scripts.standalone import UV

    subprocess.run(
        [UV, "build", "--wheel", "--out-dir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=50,
    )
    names = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    shipped = {name for name in names if not name.startswith("artifactr_files_ai-")}
    assert "artifactr/__init__.py" not in shipped
    assert all(name.startswith("artifactr/files/") for name in shipped)
    assert "artifactr/files/migrations/env.py" in shipped
    assert "artifactr/files/py.typed" in shipped
    # LibreOffice's driver is run from the installed package by the system Python.
    assert "artifactr/files/libreoffice/driver.py" in shipped
