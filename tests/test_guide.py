"""The guide: every Python block runs, in order, as a reader pastes them.

The blocks are run one after the other in one namespace, in an empty directory, with a
top-level ``await`` allowed as ``python -m asyncio`` allows it: a block that needs a name the
guide never defined, imports a name the package lacks, or raises, fails here with its number.
Every block of Python is run, none is a fragment: the guide's LibreOffice runs for real (a skip
where it can't, a failure in CI), its MCP client is the official one, and its worker is started
from this checkout's ``worker/`` as the container starts it.
"""

import ast
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.office import need_office

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FENCE = re.compile(r"^```(\w*)$", re.MULTILINE)


def blocks(path: Path = GUIDE) -> list[str]:
    return BLOCK.findall(path.read_text())


@pytest.mark.timeout(180)  # it starts offices and a worker: seconds each on a busy machine
async def test_every_python_block_of_the_guide_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need_office()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARTIFACTR_FILES_WORKER", str(ROOT / "worker"))
    namespace: dict[str, Any] = {"__name__": "guide"}
    try:
        for number, source in enumerate(blocks(), 1):
            code = compile(
                source, f"guide.md block {number}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            )
            if code.co_flags & inspect.CO_COROUTINE:
                await eval(code, namespace)
            else:
                exec(code, namespace)
    finally:
        if "worker_process" in namespace:  # a block that failed before it stopped the worker
            namespace["worker_process"].kill()
            namespace["worker_process"].wait()
        if "engine" in namespace:
            await namespace["engine"].dispose()
    assert namespace["outcome"].type == "applied"
    assert namespace["result"].status == "applied"
    assert namespace["late_result"].status == "proposed"
    assert namespace["notice"].startswith("Alice ended your check-out at ")
    assert namespace["notice"].split(" at ")[1].split(";")[0].endswith("Z")
    assert namespace["accepted"].decision == "accept"
    assert {"read_native", "edit_native", "read_artifact"} <= set(namespace["tools"])
    assert not namespace["read"].is_error
    assert namespace["signed"].type == "applied"
    assert {item.kind for item in namespace["review"]} == {"comment", "change"}
    assert namespace["posted"].status_code == 201
    assert namespace["checked_in"].json()["status"] == "applied"
    assert namespace["taken"]["expires_at"].endswith("Z")
    assert namespace["page"].status_code == 200
    assert namespace["png"].startswith(b"\x89PNG")
    assert namespace["worker_process"].returncode is not None
    assert (tmp_path / "app.db").is_file()


def test_every_code_block_of_the_guide_is_run_or_is_not_python() -> None:
    fences = [language for language in FENCE.findall(GUIDE.read_text()) if language]
    assert set(fences) <= {"python", "sh"}, "a block fenced otherwise is never run"


def test_the_guide_has_its_blocks() -> None:
    assert len(blocks()) >= 10


def test_the_guide_names_the_port_the_worker_listens_on() -> None:
    compose = yaml.safe_load((ROOT / "worker" / "compose.yaml").read_text())
    port = next(
        service["environment"]["WORKER_PORT"]
        for service in compose["services"].values()
        if "WORKER_PORT" in service.get("environment", {})
    )
    urls = re.findall(r"http://wordcraft-worker:(\d+)", GUIDE.read_text())
    assert urls
    assert set(urls) == {port}


def test_the_guide_installs_each_extra_pyproject_declares() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    table = GUIDE.read_text().split("## Install")[1].split("## ")[0]
    assert {extra for extra in extras if extra != "sql"} <= set(
        re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE)
    )
