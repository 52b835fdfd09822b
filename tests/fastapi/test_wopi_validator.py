"""Microsoft's WOPI validator, replayed over real HTTP against the host on SQLite and PostgreSQL.

``../shared/conformance/wopi-validator/TestCases.xml`` (MIT; its README says how the cases work)
holds the validator's groups of cases: each a sequence of requests with validators. This harness
loads the groups the host implements, replays each case (its group's prerequisites first) on a
new document named ``<case>.wopitest``, a real .docx, with every request signed by an editor's
proof keys as Office signs them, and checks every validator. The validator's resources are
placeholder strings; each is mapped to a real document of its kind (:data:`RESOURCES`). A case
that needs what a native file can't be (an empty file) is not applicable, with its reason
(ADR-0016). The table of cases is printed, and must be the one ``docs/wopi.md`` shows.
"""

import base64
import os
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import httpx2
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.fastapi.wopi_discovery import DiscoveryCache, proof_bytes, ticks_of
from tests.documents import build_docx
from tests.wopi import Host, build_host, document, served

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = Path(
    os.environ.get(
        "ARTIFACTR_TEST_WOPI_VALIDATOR", ROOT.parent / "shared" / "conformance" / "wopi-validator"
    )
)
"""The validator's cases: ``../shared/conformance/wopi-validator`` beside a checkout, or where
``ARTIFACTR_TEST_WOPI_VALIDATOR`` says."""
CASES = VALIDATOR / "TestCases.xml"
DOCS = ROOT / "docs" / "wopi.md"

GROUPS: Final = (
    "CheckFileInfoSchema",
    "BaseWopiViewing",
    "Locks",
    "GetLock",
    "ExtendedLockLength",
    "EditFlows",
    "FileVersion",
    "PutRelativeFileUnsupported",
    "ProofKeys",
)
"""The groups the host implements, replayed in this order."""

EMPTY: Final = (
    "a native file is a .docx package, never empty: an empty upload or save is refused as "
    "not_a_zip before any app sees it (ADR-0016), so there is no zero-byte file to put"
)

RESOURCES: Final = {
    "WordBlankDocument": build_docx([""]),
    "WordSimpleDocument": document("A simple document, as the validator's resource is."),
    "WordComplexDocument": build_docx(
        (
            ("Title", "A complex document"),
            ("Heading1", "Terms"),
            "A paragraph with a comment and a tracked insertion.",
            ("Heading2", "More"),
            "Another paragraph.",
        ),
        comment="Reviewed.",
        insertion=" Inserted.",
        tracking=True,
    ),
}
"""Each resource the groups put, as a real document of its kind."""

NOT_APPLICABLE: Final = {"ZeroByteFile": EMPTY}
"""The resources no native file can be, and why."""


class Editor:
    """The validator's side: its proof keys, current and old, and a newer and older one."""

    def __init__(self) -> None:
        self.keys = {
            name: rsa.generate_private_key(public_exponent=65537, key_size=2048)
            for name in ("older", "old", "current", "newer")
        }

    def discovery(self) -> bytes:
        def b64(number: int) -> str:
            return base64.b64encode(number.to_bytes((number.bit_length() + 7) // 8)).decode()

        now = self.keys["current"].public_key().public_numbers()
        old = self.keys["old"].public_key().public_numbers()
        return (
            f'<wopi-discovery><proof-key modulus="{b64(now.n)}" exponent="{b64(now.e)}" '
            f'oldmodulus="{b64(old.n)}" oldexponent="{b64(old.e)}"/></wopi-discovery>'
        ).encode()

    def sign(self, key: str, token: str, url: str, ticks: int, *, mutate: bool = False) -> str:
        data = proof_bytes(token, url, ticks)
        signature = self.keys[key].sign(data, padding.PKCS1v15(), hashes.SHA256())
        if mutate:
            signature = bytes(reversed(signature))
        return base64.b64encode(signature).decode()


@dataclass
class Replay:
    """One case's run: the file, the saved state, and the first failure, if any."""

    host: Host
    editor: Editor
    artifact_id: str
    token: str
    state: dict[str, str] = field(default_factory=dict[str, str])


def load() -> ElementTree.Element:
    if not CASES.is_file():
        pytest.skip(f"the WOPI validator's cases are not here: {CASES} (CI has them)")
    return ElementTree.parse(CASES).getroot()


def applicable(case: ElementTree.Element) -> str | None:
    """Return why a case is not applicable, or None if it is."""
    for request in case.iter():
        resource = request.get("ResourceId")
        if resource in NOT_APPLICABLE:
            return NOT_APPLICABLE[resource]
    return None


async def send(replay: Replay, request: ElementTree.Element) -> httpx2.Response:
    """Send one of the validator's requests as the validator would, signed."""
    kind = request.tag
    token = replay.token
    proof: dict[str, str] = {}
    mutators = request.find("Mutators")
    if mutators is not None:
        for mutator in mutators:
            if mutator.tag == "AccessToken":
                token = token[:-6] + ("AAAAAA" if not token.endswith("AAAAAA") else "BBBBBB")
            else:
                proof = dict(mutator.attrib)
    path = f"/wopi/files/{replay.artifact_id}"
    contents = kind in ("GetFile", "PutFile")
    url = f"{replay.host.http.base_url}".rstrip("/") + path + ("/contents" if contents else "")
    url = f"{url}?access_token={token}"
    stamp = proof.get("Timestamp")
    moment = (
        datetime.fromisoformat(stamp).astimezone(UTC) if stamp is not None else replay.host.clock()
    )
    ticks = ticks_of(moment)
    current, old = {"Ahead": ("newer", "current"), "Behind": ("old", "older")}.get(
        proof.get("KeyRelation", ""), ("current", "old")
    )
    headers = {
        "X-WOPI-TimeStamp": str(ticks),
        "X-WOPI-Proof": replay.editor.sign(
            current, token, url, ticks, mutate=proof.get("MutateCurrent") == "true"
        ),
        "X-WOPI-ProofOld": replay.editor.sign(
            old, token, url, ticks, mutate=proof.get("MutateOld") == "true"
        ),
    }
    body = b""
    if request.get("Lock") is not None:
        headers["X-WOPI-Lock"] = request.get("Lock", "")
    match kind:
        case "CheckFileInfo":
            return await replay.host.http.get(url, headers=headers)
        case "GetFile":
            return await replay.host.http.get(url, headers=headers)
        case "Lock":
            headers["X-WOPI-Override"] = "LOCK"
        case "Unlock":
            headers["X-WOPI-Override"] = "UNLOCK"
        case "RefreshLock":
            headers["X-WOPI-Override"] = "REFRESH_LOCK"
        case "GetLock":
            headers["X-WOPI-Override"] = "GET_LOCK"
        case "UnlockAndRelock":
            headers |= {
                "X-WOPI-Override": "LOCK",
                "X-WOPI-Lock": request.get("NewLock", ""),
                "X-WOPI-OldLock": request.get("OldLock", ""),
            }
        case "PutFile":
            headers["X-WOPI-Override"] = "PUT"
            body = RESOURCES[request.get("ResourceId", "")]
        case "PutRelativeFile":
            headers["X-WOPI-Override"] = "PUT_RELATIVE"
            body = RESOURCES[request.get("ResourceId", "")]
            name = request.get("Name", "")
            mode = request.get("PutRelativeFileMode")
            if mode in ("Suggested", "Conflicting"):
                headers["X-WOPI-SuggestedTarget"] = name
            if mode in ("ExactName", "Conflicting"):
                headers["X-WOPI-RelativeTarget"] = name
            if request.get("OverwriteRelative") is not None:
                headers["X-WOPI-OverwriteRelativeTarget"] = request.get("OverwriteRelative", "")
            headers["X-WOPI-Size"] = str(len(body))
        case _:
            raise AssertionError(f"the harness can't send a {kind} request")
    return await replay.host.http.post(url, headers=headers, content=body)


def _json(response: httpx2.Response) -> dict[str, Any]:
    try:
        found = response.json()
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


SCHEMA: Final = {"BaseFileName": str, "OwnerId": str, "Size": int, "UserId": str, "Version": str}
"""CheckFileInfo's required properties and their types (the validator's schemas require them)."""


def check(replay: Replay, validator: ElementTree.Element, response: httpx2.Response) -> str | None:
    """Return why a validator fails on a response, or None if it passes."""
    match validator.tag:
        case "ResponseCodeValidator":
            expected = int(validator.get("ExpectedCode", "200"))
            if response.status_code != expected:
                return f"status {response.status_code}, expected {expected}"
            return None
        case "Or":
            reasons = [check(replay, child, response) for child in validator]
            return None if None in reasons else " and ".join(r for r in reasons if r)
        case "LockMismatchValidator":
            lock = response.headers.get("X-WOPI-Lock")
            if response.status_code != 409 or lock != validator.get("ExpectedLock", ""):
                return f"status {response.status_code} with X-WOPI-Lock {lock!r}"
            return None
        case "JsonSchemaValidator":
            info = _json(response)
            for name, kind in SCHEMA.items():
                if not isinstance(info.get(name), kind) or isinstance(info.get(name), bool):
                    return f"{name} is missing or not a {kind.__name__}"
            nulls = [name for name, value in info.items() if value is None]
            return f"null properties {nulls}" if nulls else None
        case "JsonResponseContentValidator":
            info = _json(response)
            for prop in validator:
                if (reason := check_property(replay, prop, info)) is not None:
                    return reason
            return None
        case "ResponseHeaderValidator":
            return check_header(replay, validator, response)
        case "ResponseContentValidator":
            expected = RESOURCES[validator.get("ExpectedResourceId", "")]
            return None if response.content == expected else "the content is not the resource"
        case _:
            raise AssertionError(f"the harness has no {validator.tag}")


def check_property(replay: Replay, prop: ElementTree.Element, info: dict[str, Any]) -> str | None:
    name = prop.get("Name", "")
    required = prop.get("IsRequired") == "true"
    if name not in info:
        return f"{name} is required" if required else None
    value = info[name]
    expected = prop.get("ExpectedValue")
    if (key := prop.get("ExpectedStateKey")) is not None:
        expected = replay.state[key]
    match prop.tag:
        case "StringProperty":
            if not isinstance(value, str):
                return f"{name} is not a string"
            folded = (lambda text: text.lower()) if prop.get("IgnoreCase") == "true" else str
            if (ends := prop.get("EndsWith")) is not None and not folded(value).endswith(
                folded(ends)
            ):
                return f"{name} {value!r} doesn't end with {ends!r}"
            if expected is not None and folded(value) != folded(expected):
                return f"{name} is {value!r}, expected {expected!r}"
        case "StringRegexProperty":
            matched = re.match(prop.get("ExpectedValue", ""), str(value)) is not None
            if matched != (prop.get("ShouldMatch", "true") == "true"):
                return f"{name} {value!r} against {prop.get('ExpectedValue')!r}"
        case "BooleanProperty":
            if not isinstance(value, bool):
                return f"{name} is not a boolean"
            if expected is not None and value != (expected == "true"):
                return f"{name} is {value}, expected {expected}"
        case "LongProperty" | "IntegerProperty":
            if not isinstance(value, int) or isinstance(value, bool):
                return f"{name} is not an integer"
        case "AbsoluteUrlProperty":
            if not isinstance(value, str) or not re.match(r"^https?://", value):
                return f"{name} is not an absolute URL"
        case _:
            raise AssertionError(f"the harness has no {prop.tag}")
    return None


def check_header(
    replay: Replay, validator: ElementTree.Element, response: httpx2.Response
) -> str | None:
    header = validator.get("Header", "")
    value = response.headers.get(header)
    if value is None:
        return f"no {header}" if validator.get("IsRequired", "true") == "true" else None
    expected = validator.get("ExpectedValue")
    if (key := validator.get("ExpectedStateKey")) is not None:
        expected = replay.state[key]
    if expected is None:
        return None
    if (value == expected) != (validator.get("ShouldMatch", "true") == "true"):
        return f"{header} is {value!r} against {expected!r}"
    return None


CODE_VALIDATORS: Final = {"ResponseCodeValidator", "LockMismatchValidator"}


async def run_requests(replay: Replay, requests: ElementTree.Element | None) -> str | None:
    """Replay a sequence of requests; return the first failure, or None."""
    for request in [] if requests is None else list(requests):
        response = await send(replay, request)
        validators = request.find("Validators")
        given = [] if validators is None else list(validators)
        names = {node.tag for validator in given for node in validator.iter()}
        if not names & CODE_VALIDATORS and response.status_code != 200:
            return f"{request.tag}: status {response.status_code}: {response.text[:200]}"
        for validator in given:
            if (reason := check(replay, validator, response)) is not None:
                return f"{request.tag}: {reason}"
        saved = request.find("SaveState")
        for state in [] if saved is None else saved:
            source = state.get("Source", "")
            if state.get("SourceType") == "Header":
                replay.state[state.get("Name", "")] = response.headers[source]
            else:
                replay.state[state.get("Name", "")] = str(response.json()[source])
    return None


async def replay_case(
    host: Host,
    editor: Editor,
    name: str,
    case: ElementTree.Element,
    prereqs: list[ElementTree.Element],
) -> str | None:
    """Replay a case on a new document, its group's prerequisites first; return any failure."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    artifact_id = await host.upload(document("An original", slug), name=f"{slug}.wopitest")
    replay = Replay(host, editor, artifact_id, host.token(artifact_id))
    for prereq in prereqs:
        if (reason := await run_requests(replay, prereq.find("Requests"))) is not None:
            return f"prerequisite {prereq.get('Name')}: {reason}"
    failure = await run_requests(replay, case.find("Requests"))
    await run_requests(
        Replay(host, editor, artifact_id, replay.token), case.find("CleanupRequests")
    )
    return failure


async def replay_all(host: Host, editor: Editor) -> list[tuple[str, str, str, str]]:
    """Replay every case of :data:`GROUPS`; return the table's rows."""
    root = load()
    prereq_cases = {case.get("Name"): case for case in root.iter("TestCase")}
    rows: list[tuple[str, str, str, str]] = []
    for group in root.iter("TestGroup"):
        group_name = group.get("Name", "")
        if group_name not in GROUPS:
            continue
        prereqs = [prereq_cases[p.text or ""] for p in group.iter("PrereqTest")]
        for case in group.iter("TestCase"):
            name = case.get("Name", "")
            reason = applicable(case)
            if reason is not None:
                rows.append((group_name, name, "not applicable", reason))
                continue
            failure = await replay_case(host, editor, name, case, prereqs)
            rows.append(
                (group_name, name, "passed" if failure is None else "FAILED", failure or "")
            )
    return rows


def table(rows: list[tuple[str, str, str, str]]) -> str:
    lines = ["| group | case | result | why |", "|---|---|---|---|"]
    lines += [f"| {group} | {case} | {result} | {why} |" for group, case, result, why in rows]
    return "\n".join(lines)


@pytest.fixture
async def validated(engine: AsyncEngine) -> AsyncIterator[tuple[Host, Editor]]:
    load()
    editor = Editor()

    async def fetch(_url: str) -> bytes:
        return editor.discovery()

    cache = DiscoveryCache("https://validator.test/hosting/discovery", fetch=fetch)
    async with served(await build_host(engine, discovery=cache)) as host:
        yield host, editor


@pytest.mark.timeout(300)
async def test_every_case_of_the_implemented_groups_passes_or_is_not_applicable(
    validated: tuple[Host, Editor], capsys: pytest.CaptureFixture[str]
) -> None:
    host, editor = validated
    rows = await replay_all(host, editor)
    shown = table(rows)
    with capsys.disabled():
        sys.stdout.write(f"\nWOPI validator, {len(rows)} cases:\n{shown}\n")
    assert {group for group, *_ in rows} == set(GROUPS)
    assert [row for row in rows if row[2] == "FAILED"] == []
    documented = DOCS.read_text()
    assert [line for line in shown.splitlines() if line not in documented] == []
    passed = sum(row[2] == "passed" for row in rows)
    assert f"{passed} passed, {len(rows) - passed} not applicable" in documented
