"""Layering: what each module of artifactr.files may import (STYLE.md, RFC-0003).

The core imports only artifactr's public API (``artifactr``, ``artifactr.core``,
``artifactr.workspace``), the standard library, pydantic and OpenTelemetry's API. Adapters import
inward. Only the tools module imports ``artifactr.agent`` and pydantic-ai; only the router
imports FastAPI. A module this table doesn't list fails the test, so a new one must be placed.
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
    "manifests": CORE,
    "native": CORE,
    "revisions": CORE,
    "telemetry": CORE,
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
    "migrations": SQL,
}
"""Each module (or subpackage, by its first name) and the outside modules it may import."""

INNER_ONLY = {
    "tools",
    "router",
    "sql",
    "wordcraft",
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


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
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
    refused = sorted(name for name in imports(path) if not allowed(name, LAYERS[layer]))
    assert refused == []


@pytest.mark.parametrize(("layer", "path"), modules(), ids=lambda v: str(v))
def test_inner_layers_never_import_outer_ones(layer: str, path: Path) -> None:
    if layer in INNER_ONLY:
        return
    outer = sorted(
        name
        for name in imports(path)
        if name.startswith("artifactr.files.") and name.split(".")[2] in INNER_ONLY
    )
    assert outer == []


def test_the_core_reaches_artifactr_only_through_its_public_api() -> None:
    private = sorted(
        f"{path.name}: {name}"
        for layer, path in modules()
        if layer not in {"sql", "migrations", "tools", "router", "demo", "serve", "portal"}
        for name in imports(path)
        if name.startswith("artifactr.")
        and not name.startswith("artifactr.files")
        and name not in {"artifactr.core", "artifactr.workspace"}
    )
    assert private == []
