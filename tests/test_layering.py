"""Layering: which layer each module of artifactr.files is in, and what it may import (STYLE.md).

The package has artifactr's own shape (docs/architecture.md). ``core`` is the inner model: it
imports only artifactr's public API (``artifactr``, ``artifactr.core``, ``artifactr.workspace``),
the standard library, pydantic and OpenTelemetry's API. ``native`` (the service) and the adapters
(``apps``, ``sql``, ``s3``) import the core; the surfaces (``agent``, ``mcp``, ``fastapi``) import
the service and the core; the programs import anything. Nothing imports outward, no app imports
another, and no module imports itself back through a circle. Only the agent's tools import
pydantic-ai, only the MCP surface the MCP SDK, only the HTTP routes and the portal FastAPI, only
the parser of upload bodies python-multipart, only WebDAV's bodies defusedxml and only its
capability links PyJWT. A module no rule places fails the test, so a new one must be placed.
"""

import ast
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "artifactr" / "files"
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"
DRIVER = PACKAGE / "apps" / "libreoffice" / "driver"

CORE = {"artifactr", "artifactr.core", "artifactr.workspace", "pydantic", "opentelemetry"}
"""What the core may import beside the standard library and itself."""

SQL = CORE | {"sqlalchemy", "alembic", "lattice_core.sql.tenancy", "artifactr.sql"}
WEB = CORE | {"fastapi", "starlette", "artifactr.fastapi"}
DEMO = CORE | {"artifactr.sql", "artifactr.agent", "pydantic_ai", "sqlalchemy"}

OUTSIDE: dict[str, set[str]] = {
    "__init__": CORE,
    "core": CORE,
    "native": CORE,
    "apps": CORE,
    "apps.wordcraft": CORE | {"mcp", "httpx2", "anyio"},
    "apps.worker": CORE | {"httpx2", "anyio"},
    "apps.libreoffice.driver": {"uno"} | {path.stem for path in DRIVER.glob("*.py")},
    "sql": SQL,
    "s3": CORE | {"obstore"},
    "agent": CORE,
    "agent.tools": CORE | {"artifactr.agent", "pydantic_ai"},
    "mcp": CORE | {"artifactr.mcp", "artifactr.agent", "mcp"},
    "fastapi": CORE,
    "fastapi.router": WEB,
    "fastapi.http_answers": WEB,
    "fastapi.diffs": WEB,
    "fastapi.bodies": WEB | {"python_multipart"},
    "fastapi.portal": WEB | {"jinja2"},
    "fastapi.wopi": WEB,
    "fastapi.wopi_tokens": CORE | {"jwt"},
    "fastapi.wopi_discovery": CORE | {"cryptography"},
    "fastapi.editor": CORE | {"starlette"},
    "fastapi.webdav": WEB,
    "fastapi.dav_xml": CORE | {"defusedxml"},
    "fastapi.capability": CORE | {"jwt", "artifactr.fastapi"},
    "programs.demo": DEMO,
    "programs.serve": DEMO | WEB | {"uvicorn", "grantr", "artifactr.mcp"},
    "programs.settings": DEMO | {"alembic", "pydantic_settings"},
    "programs": CORE,
    "migrations": SQL,
}
"""What each module may import from outside the package, by the longest dotted prefix of its
name under ``artifactr.files`` that is listed. LibreOffice's driver runs under the system Python
with Debian's python3-uno, never in this process: it imports ``uno`` and its own modules only
(run from its directory, they import each other by their own names)."""

INWARD: dict[str, set[str]] = {
    "core": {"core"},
    "native": {"core", "native"},
    "apps": {"core", "apps"},
    "sql": {"core", "sql"},
    "s3": {"core", "s3"},
    "agent": {"core", "native", "agent"},
    "mcp": {"core", "native", "agent", "mcp"},
    "fastapi": {"core", "native", "fastapi"},
    "programs": {"core", "native", "apps", "sql", "s3", "agent", "mcp", "fastapi", "programs"},
    "migrations": {"sql"},
}
"""The layers each layer may import, by first name under ``artifactr.files``; within ``apps``,
an app imports only its own modules (:func:`test_no_app_imports_another`)."""


def name_of(path: Path) -> str:
    """Return a file's module name under ``artifactr.files``: ``core.errors``, ``apps.fake``."""
    if path.is_relative_to(MIGRATIONS):
        return "migrations"
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def modules() -> list[tuple[str, Path]]:
    inside = [(name_of(path), path) for path in sorted(PACKAGE.rglob("*.py"))]
    return inside + [("migrations", path) for path in sorted(MIGRATIONS.rglob("*.py"))]


def imports(path: Path, *, at_run_time: bool = False) -> set[str]:
    """Return the modules a file imports; ``at_run_time``, less those for type checkers only.

    ``from package import name`` counts as importing ``package.name`` where that is a module of
    this package, and as importing ``package`` only for the names that are not modules.
    """
    tree = ast.parse(path.read_text())
    if at_run_time:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                node.body = []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names}
            submodules = {name for name in submodules if is_module(name)}
            names |= submodules
            if len(submodules) < len(node.names):
                names.add(node.module)
    return names


def is_module(dotted: str) -> bool:
    if not dotted.startswith("artifactr.files."):
        return False
    relative = Path(*dotted.removeprefix("artifactr.files.").split("."))
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative).is_dir()


def rule(table: Mapping[str, set[str]], name: str) -> set[str]:
    """Return the entry for the longest dotted prefix of ``name`` the table lists."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in table:
            return table[".".join(parts[:end])]
    raise AssertionError(f"artifactr.files.{name} is in no layer: place it in the table")


def allowed(name: str, permitted: set[str]) -> bool:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names or name.startswith("artifactr.files"):
        return True
    return any(name == p or name.startswith(p + ".") for p in permitted if p != "artifactr") or (
        name == "artifactr" and "artifactr" in permitted
    )


def inner(name: str) -> str:
    """Return the package-relative name of an import of ours: ``core.errors``; "" for the top."""
    return name.removeprefix("artifactr.files").removeprefix(".")


@pytest.mark.parametrize(("name", "path"), modules(), ids=lambda v: str(v))
def test_each_module_imports_only_what_its_layer_allows(name: str, path: Path) -> None:
    permitted = rule(OUTSIDE, name)
    refused = sorted(found for found in imports(path) if not allowed(found, permitted))
    assert refused == []


@pytest.mark.parametrize(("name", "path"), modules(), ids=lambda v: str(v))
def test_every_import_of_the_package_runs_inward(name: str, path: Path) -> None:
    ours = {inner(found) for found in imports(path) if found.startswith("artifactr.files")}
    if name == "__init__":
        # The facade re-exports the core, the service and FakeApp; the extras' adapters it names
        # for type checkers only, and loads on first use (its __getattr__).
        run_time = {inner(found) for found in imports(path, at_run_time=True)} & ours
        assert {found.split(".")[0] for found in run_time} <= {"core", "native", "apps"}
        return
    layer = name.split(".")[0]
    outward = sorted(found for found in ours if found.split(".")[0] not in INWARD[layer])
    assert outward == [], "an import runs outward or up to the facade"


SHARED_BY_APPS: Final = {"apps", "apps.jobs", "apps.processes"}
"""What every app may import within ``apps``: the App port as jobs, which the adapters that run
a call as one job (WordCraft's ``Subprocess`` and the ``Worker`` client) share, and the reaping
of a job's process group, which WordCraft's and LibreOffice's processes share."""


@pytest.mark.parametrize(("name", "path"), modules(), ids=lambda v: str(v))
def test_no_app_imports_another(name: str, path: Path) -> None:
    if not name.startswith("apps."):
        return
    own = ".".join(name.split(".")[:2])
    others = sorted(
        found
        for found in map(inner, imports(path))
        if found.startswith("apps")
        and found not in {own, *SHARED_BY_APPS}
        and not found.startswith(own + ".")
    )
    assert others == []


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Return the graph's strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for after in sorted(graph.get(node, set())):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in on_stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, set()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle_and_only_a_circle() -> None:
    assert circles({"blobs": {"errors"}, "errors": {"leases"}, "leases": {"blobs"}}) == [
        ["blobs", "errors", "leases"]
    ]
    assert circles({"a": {"a"}}) == [["a"]]
    assert circles({"blobs": {"clock"}, "leases": {"clock", "blobs"}, "clock": set()}) == []


def test_no_module_imports_itself_back_through_a_circle() -> None:
    # Every import counts, those for type checkers too: a circle there is a circle in the design.
    graph = {
        name: {inner(found) for found in imports(path) if found.startswith("artifactr.files.")}
        for name, path in modules()
        if name != "migrations"
    }
    assert circles(graph) == []


def test_the_core_reaches_artifactr_only_through_its_public_api() -> None:
    private = sorted(
        f"{name}: {found}"
        for name, path in modules()
        if name.split(".")[0] in {"__init__", "core", "native", "apps"}
        or name in {"agent", "agent.operations", "agent.wording"}
        for found in imports(path)
        if found.startswith("artifactr.")
        and not found.startswith("artifactr.files")
        and found not in {"artifactr.core", "artifactr.workspace"}
    )
    assert private == []


def test_every_file_of_the_package_has_a_layer() -> None:
    names = {name for name, _ in modules()}
    assert {"core.clock", "core.errors", "native", "apps.fake", "fastapi.router"} <= names
    for name in names:
        assert rule(OUTSIDE, name) is not None
        assert name == "__init__" or name.split(".")[0] in INWARD


def test_the_architecture_map_names_every_folder_and_every_module_of_the_core_and_service() -> None:
    architecture = (PACKAGE.parents[2] / "docs" / "architecture.md").read_text()
    folders = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_dir() and path.name != "__pycache__"
    )
    unmapped = [folder for folder in folders if f"{folder.split('/')[-1]}/" not in architecture]
    inner = sorted(
        path.name
        for folder in ("core", "native")
        for path in (PACKAGE / folder).glob("*.py")
        if path.stem != "__init__"
    )
    assert unmapped == []
    assert [name for name in inner if name not in architecture] == []
