"""Layering: what each module of artifactr.files may import (STYLE.md, RFC-0003).

The core imports only artifactr's public API (``artifactr``, ``artifactr.core``,
``artifactr.workspace``), the standard library, pydantic and OpenTelemetry's API. Adapters import
inward. Only the tools module imports pydantic-ai, and only the MCP module ``artifactr.mcp`` and
the MCP SDK's server; only the router imports FastAPI. A module this table doesn't list fails the
test, so a new one must be placed.
"""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "artifactr" / "files"
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"

CORE = {"artifactr", "artifactr.core", "artifactr.workspace", "pydantic", "opentelemetry"}
"""What the core may import beside the standard library and itself."""

SQL = CORE | {"sqlalchemy", "alembic", "lattice_core.sql.tenancy", "artifactr.sql"}
WORDCRAFT = CORE | {"mcp", "httpx2", "anyio"}

LAYERS: dict[str, set[str]] = {
    "__init__": CORE,
    "_docx": CORE,
    "answers": CORE,
    "app": CORE,
    "blobs": CORE,
    "checkouts": CORE,
    "documents": CORE,
    "demo": CORE | {"artifactr.sql", "artifactr.agent", "pydantic_ai", "sqlalchemy"},
    "errors": CORE,
    "fake": CORE,
    "fingerprint": CORE,
    "integrations": CORE,
    "leases": CORE,
    "log": CORE,
    "manifests": CORE,
    "mcp": CORE | {"artifactr.mcp", "artifactr.agent", "mcp"},
    "native": CORE,
    "revisions": CORE,
    "telemetry": CORE,
    "visibility": CORE,
    "wording": CORE,
    "tools": CORE | {"artifactr.agent", "pydantic_ai"},
    "router": CORE | {"fastapi", "starlette", "artifactr.fastapi"},
    "editor": CORE | {"starlette"},
    "diff": CORE,
    "portal": CORE | {"fastapi", "starlette", "artifactr.fastapi"},
    "serve": CORE
    | {"artifactr.sql", "artifactr.fastapi", "artifactr.agent", "pydantic_ai"}
    | {"sqlalchemy", "fastapi", "uvicorn", "grantr"},
    "sql": SQL,
    "wordcraft": WORDCRAFT,
    "libreoffice": CORE,
    "migrations": SQL,
}
"""Each module (or subpackage, by its first name) and the outside modules it may import."""

DRIVERS: dict[str, set[str]] = {"libreoffice/driver.py": {"uno"}}
"""Files run by another interpreter, and what they import beyond their layer: LibreOffice's
driver runs under the system Python with Debian's python3-uno, never in this process."""

INNER_ONLY = {
    "tools",
    "mcp",
    "router",
    "sql",
    "wordcraft",
    "libreoffice",
    "demo",
    "editor",
    "migrations",
    "serve",
    "portal",
}
"""Outer layers: no other module of the package may import them, except the demo."""


def modules() -> list[tuple[str, Path]]:
    found = [
        (path.relative_to(PACKAGE).parts[0].removesuffix(".py"), path)
        for path in sorted(PACKAGE.rglob("*.py"))
    ]
    return found + [("migrations", path) for path in sorted(MIGRATIONS.rglob("*.py"))]


def imports(path: Path, *, at_run_time: bool = False) -> set[str]:
    """Return the modules a file imports; ``at_run_time``, less those for type checkers only."""
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
            names.add(node.module)
    return names


def allowed(name: str, permitted: set[str]) -> bool:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names or name.startswith("artifactr.files"):
        return True
    return any(name == p or name.startswith(p + ".") for p in permitted if p != "artifactr") or (
        name == "artifactr" and "artifactr" in permitted
    )


@pytest.mark.parametrize(("layer", "path"), modules(), ids=lambda v: str(v))
def test_each_module_imports_only_what_its_layer_allows(layer: str, path: Path) -> None:
    assert layer in LAYERS, f"{path} is in no layer: add it to LAYERS"
    inside = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else ""
    permitted = LAYERS[layer] | DRIVERS.get(inside, set())
    refused = sorted(name for name in imports(path) if not allowed(name, permitted))
    assert refused == []


@pytest.mark.parametrize(("layer", "path"), modules(), ids=lambda v: str(v))
def test_inner_layers_never_import_outer_ones(layer: str, path: Path) -> None:
    if layer in INNER_ONLY:
        return
    # The package's __init__ names the extras' adapters for type checkers and loads them on
    # first use (its __getattr__), so an application imports them from the top level.
    outer = sorted(
        name
        for name in imports(path, at_run_time=True)
        if name.startswith("artifactr.files.") and name.split(".")[2] in INNER_ONLY
    )
    assert outer == []


def test_the_core_reaches_artifactr_only_through_its_public_api() -> None:
    private = sorted(
        f"{path.name}: {name}"
        for layer, path in modules()
        if layer not in {"sql", "migrations", "tools", "mcp", "router", "demo", "serve", "portal"}
        for name in imports(path)
        if name.startswith("artifactr.")
        and not name.startswith("artifactr.files")
        and name not in {"artifactr.core", "artifactr.workspace"}
    )
    assert private == []
