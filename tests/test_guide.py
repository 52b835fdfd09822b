"""The guide: every Python block runs, in order, as a reader pastes them.

The blocks are run one after the other in one namespace, in an empty directory, with a
top-level ``await`` allowed as ``python -m asyncio`` allows it: a block that needs a name the
guide never defined, imports a name the package lacks, or raises, fails here with its number.
A fence of ``py`` marks a fragment that names what the reader brings (a token, a client's
resolver): those are formatted by ruff but not run.
"""

import ast
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(path: Path = GUIDE) -> list[str]:
    return BLOCK.findall(path.read_text())


async def test_every_python_block_of_the_guide_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
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
        if "engine" in namespace:
            await namespace["engine"].dispose()
    assert namespace["outcome"].type == "applied"
    assert namespace["result"].status == "applied"
    assert namespace["accepted"].decision == "accept"
    assert (tmp_path / "app.db").is_file()


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
