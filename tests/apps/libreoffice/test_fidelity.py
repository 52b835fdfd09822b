"""The fidelity report in LibreOffice mode, on files the tests build (scripts/fidelity.py).

``--app libreoffice`` saves each file through the real office with no commands, then with one
(``paragraph.append``), and compares both saves and the adapter's inspection with the original,
read with the standard library. A file with a comment and two tracked changes keeps all three
through every stage; a file that is not a .docx fails its row, and ``--check`` says so.
"""

from pathlib import Path

import pytest
from scripts import fidelity

from artifactr.files.apps.libreoffice import LibreOffice
from tests.documents import build_docx


def test_a_save_edit_and_inspection_keep_the_text_comment_and_changes(
    office: LibreOffice, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reviewed = tmp_path / "reviewed.docx"
    reviewed.write_bytes(
        build_docx(
            ["Terms", "The tenant pays monthly."],
            comment="Which month?",
            insertion=" in advance",
            deletion=" or yearly",
        )
    )

    code = fidelity.main([str(reviewed), "--app", "libreoffice", "--jobs", "1", "--check"])

    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("| reviewed.docx |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")][1:-1]
    # Three stages (save, edit, inspect), each text, comments, changes, images.
    assert cells == ["kept", "kept", "kept", "-"] * 2 + ["kept", "kept", "kept", "-"]
    assert "**1 files**: 1 done, 0 failed." in table
    assert code == 0


def test_a_file_the_report_cannot_read_fails_its_row_and_the_check(
    office: LibreOffice, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")

    code = fidelity.main([str(broken), "--app", "libreoffice", "--check"])

    table = capsys.readouterr().out
    assert "| broken.docx | failed | failed | failed | failed | unreadable here:" in table
    assert "Failures: unreadable here 1" in table
    assert code == 1
