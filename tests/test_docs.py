"""The docs agree with the code: HTTP statuses, and where each cited document lives.

The reference's error table and the guide's ``Error`` (status) pairs are checked against what
the files router answers for each error, raised for real through its error mapping. Every
document an ADR cites that this repository does not hold (an RFC, another project's ADR, a
design note) is listed, with where it lives, in the decisions' index.
"""

import re
from pathlib import Path

import pytest
from artifactr.core import (
    Forbidden,
    InvalidState,
    NotFound,
    PatchFailed,
    ValidationFailed,
    VersionConflict,
)
from fastapi import HTTPException

from artifactr.files.core.errors import (
    AppCrashed,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    CheckoutOutdated,
    ContentDamaged,
    FileTooLarge,
    NotEnabled,
    ServiceBusy,
    UnsafeFile,
)
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.http_answers import or_http
from artifactr.files.s3 import StoreUnreachable

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference.md"
GUIDE = ROOT / "docs" / "guide.md"
ADRS = ROOT / "docs" / "adr"

ERRORS: dict[str, Exception] = {
    "ArtifactBusy": ArtifactBusy("art_1", None),
    "ContentDamaged": ContentDamaged("art_1", 1, "0" * 64, "missing"),
    "CheckoutOutdated": CheckoutOutdated("co_1", 1, 2),
    "ServiceBusy": ServiceBusy("1 files are being read and 2 wait"),
    "StoreFailed": StoreUnreachable("it did not answer"),
    "NotEnabled": NotEnabled("files:fake"),
    "UnsafeFile": UnsafeFile("not_a_zip", "not a zip"),
    "FileTooLarge": FileTooLarge(10),
    "AppRefused": AppRefused("no such command"),
    "AppTimeout": AppTimeout("too slow"),
    "AppCrashed": AppCrashed("died"),
    "AppTooLarge": AppTooLarge("too big"),
    "VersionConflict": VersionConflict("art_1", base=1, head=2),
    "PatchFailed": PatchFailed("stale"),
    "NotFound": NotFound("artifact", "art_1"),
    "Forbidden": Forbidden("no"),
    "ValidationFailed": ValidationFailed("bad", []),
    "InvalidState": InvalidState("checked in"),
}


async def answered(error: Exception) -> tuple[int, str]:
    async def fail() -> None:
        raise error

    with pytest.raises(HTTPException) as raised:
        await or_http(fail())
    return raised.value.status_code, raised.value.detail["type"]


def reference_rows() -> dict[str, tuple[str, int]]:
    table = REFERENCE.read_text().split("## Errors")[1].split("## ")[0]
    rows = re.findall(r"^\| `(\w+)` \| \(?`(\w+)`\)? \| (\d{3}) \|", table, re.MULTILINE)
    return {name: (code, int(status)) for name, code, status in rows}


async def test_the_reference_gives_each_error_the_code_and_status_the_router_answers() -> None:
    rows = reference_rows()
    assert set(rows) == set(ERRORS)
    for name, error in ERRORS.items():
        assert await answered(error) == (rows[name][1], rows[name][0]), name


async def test_the_guide_gives_each_error_it_names_the_status_the_router_answers() -> None:
    pairs = re.findall(r"`(\w+)` \((\d{3})\)", GUIDE.read_text())
    named = [(name, int(status)) for name, status in pairs if name in ERRORS]
    assert len(named) >= 5
    for name, status in named:
        assert (await answered(ERRORS[name]))[0] == status, name


def test_every_document_an_adr_cites_is_one_a_reader_can_find() -> None:
    index = (ADRS / "index.md").read_text()
    ours = {path.name[:4] for path in ADRS.glob("[0-9]*.md")}
    cited: set[str] = set()
    for path in sorted(ADRS.glob("[0-9]*.md")):
        text = path.read_text()
        cited |= set(re.findall(r"\bRFC-\d{4}\b", text))
        cited |= set(re.findall(r"\b(?:lattice|artifactr|portalr) ADR-\d{4}\b", text))
        cited |= {f"ADR-{n}" for n in re.findall(r"\bADR-(\d{4})\b", text) if n not in ours}
        cited |= set(re.findall(r"\b(?:DESIGN|STYLE)\.md\b|\breference/\w+\.md\b", text))
    assert cited
    assert sorted(name for name in cited if name not in index) == []
