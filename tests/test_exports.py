"""The top level: what an application imports is there, and a missing extra names itself.

Every ``from artifactr... import ...`` line in the README, the guide, the reference, the
examples and the package's own docstrings is imported, name by name, so the docs can't promise a
name the package lacks. The adapters that need an extra load when first used; with the extra
missing, the import fails with an :class:`ImportError` that says what to install.
"""

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

import artifactr.files

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
IMPORT = re.compile(r"^\s*from (artifactr[\w.]*) import (\(.*?\)|[^\n]+)", re.MULTILINE | re.DOTALL)


def documented_imports() -> list[tuple[str, str]]:
    """Return each (module, name) a doc, an example or a docstring imports from artifactr."""
    sources = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "examples").rglob("*.py")])
    texts = [path.read_text() for path in [*DOCS, *sources]]
    found: set[tuple[str, str]] = set()
    for text in texts:
        for module, names in IMPORT.findall(text):
            for name in names.strip("()").replace("\n", " ").split(","):
                name = name.split("#")[0].strip().split(" as ")[0].strip()
                if name:
                    found.add((module, name))
    return sorted(found)


def test_the_package_docstring_imports_what_it_promises() -> None:
    from artifactr.files import NativeFiles, WordDocument, integration_gate, native
    from artifactr.files.core import integrations, manifests

    # The top level's names are the modules' own objects, not copies or stand-ins.
    assert (NativeFiles, WordDocument, integration_gate) == (
        native.NativeFiles,
        manifests.WordDocument,
        integrations.integration_gate,
    )
    assert WordDocument.kind == "word_document"


@pytest.mark.parametrize(("module", "name"), documented_imports(), ids=lambda v: str(v))
def test_every_name_the_docs_import_is_there(module: str, name: str) -> None:
    found = importlib.import_module(module)
    if not hasattr(found, name):  # a submodule: from artifactr.files import answers
        importlib.import_module(f"{module}.{name}")


def test_the_docs_import_from_the_top_level() -> None:
    names = {name for module, name in documented_imports() if module == "artifactr.files"}
    assert {"NativeFiles", "WordDocument", "integration_gate", "FakeApp"} <= names


def test_all_names_each_name_once_and_only_what_the_top_level_holds() -> None:
    assert len(set(artifactr.files.__all__)) == len(artifactr.files.__all__)
    assert all(hasattr(artifactr.files, name) for name in artifactr.files.__all__)


def test_the_top_level_names_every_public_class_of_the_core_it_imports() -> None:
    tree = ast.parse((ROOT / "src" / "artifactr" / "files" / "__init__.py").read_text())
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("artifactr.files")
        for alias in node.names
    }
    assert imported <= set(artifactr.files.__all__)


def test_an_extra_s_names_load_when_first_used() -> None:
    from artifactr.files import SqlBlobs, Subprocess, Worker, files_router, native_file_tools, sql
    from artifactr.files.agent import tools
    from artifactr.files.apps import wordcraft, worker
    from artifactr.files.fastapi import router

    assert (SqlBlobs, Subprocess, Worker) == (sql.SqlBlobs, wordcraft.Subprocess, worker.Worker)
    assert (files_router, native_file_tools) == (router.files_router, tools.native_file_tools)
    assert set(artifactr.files.EXTRAS) <= set(dir(artifactr.files))


def test_a_name_the_package_lacks_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        artifactr.files.__getattr__("Nothing")


@pytest.mark.parametrize(
    ("name", "missing", "extra"),
    [
        ("Worker", "httpx2", "pip install 'artifactr-files-ai[worker]'"),
        ("SqlLeases", "sqlalchemy", "pip install 'artifactr-files-ai[sqlite]'"),
        ("files_router", "fastapi", "pip install 'artifactr-files-ai[fastapi]'"),
        ("native_file_tools", "pydantic_ai", "pip install 'artifactr-ai>=0.2.1'"),
    ],
)
def test_a_missing_extra_is_an_import_error_that_names_it(
    monkeypatch: pytest.MonkeyPatch, name: str, missing: str, extra: str
) -> None:
    module = artifactr.files.EXTRAS[name][0]
    for loaded in [key for key in sys.modules if key.split(".")[0] == missing or key == module]:
        monkeypatch.delitem(sys.modules, loaded)
    for loaded in [key for key in sys.modules if key.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(ImportError, match=re.escape(extra)) as raised:
        importlib.import_module("artifactr.files").__getattr__(name)
    assert f"({missing}" in str(raised.value)
