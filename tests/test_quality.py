"""Quality: no inline suppressions anywhere, and every public module documents itself."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["src", "tests", "scripts", "worker", "migrations", "examples"]
BANNED = re.compile(
    "|".join(
        re.escape(marker)
        for marker in (
            "no" + "qa",
            "type" + ": ignore",
            "pyright" + ": ignore",
            "pragma" + ": no cover",
        )
    )
)


def python_files() -> list[Path]:
    return sorted(
        path
        for folder in CHECKED
        for path in (ROOT / folder).rglob("*.py")
        if ".venv" not in path.parts
    )


def test_no_file_suppresses_a_check_inline() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in python_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if BANNED.search(line)
    ]
    assert found == []


def test_every_shipped_module_opens_with_a_docstring() -> None:
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "src").rglob("*.py"))
        if ast.get_docstring(ast.parse(path.read_text())) is None
    ]
    assert missing == []


def test_the_package_ships_no_artifactr_init() -> None:
    assert not (ROOT / "src" / "artifactr" / "__init__.py").exists()
