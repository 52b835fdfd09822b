"""The hosted editor's policy: its CSP from index.html, its headers, no cookies, its static app.

Each test builds a fake browser build in a temporary folder: an index.html with an inline
script, a hashed .js and a .wasm, and the files a release ships for other servers.
"""

import base64
import hashlib
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from artifactr.files.fastapi.editor import (
    EditorPolicy,
    content_security_policy,
    editor_app,
    editor_headers,
)

SCRIPT = 'import init from "./wordcraft-3f9c.js";\ninit("./wordcraft-3f9c_bg.wasm");\n'
INDEX = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>WordCraft</title>
<link rel="modulepreload" href="./wordcraft-3f9c.js">
<script type="module">{SCRIPT}</script>
</head><body><canvas id="app"></canvas></body></html>
"""
WASM = b"\x00asm\x01\x00\x00\x00"


def sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.fixture
def build(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text(INDEX)
    (tmp_path / "wordcraft-3f9c.js").write_text("export default async function init() {}\n")
    (tmp_path / "wordcraft-3f9c_bg.wasm").write_bytes(WASM)
    (tmp_path / "_headers").write_text("/*\n  X-Frame-Options: SAMEORIGIN\n")
    (tmp_path / ".htaccess").write_text("Header set X-Frame-Options SAMEORIGIN\n")
    return tmp_path


def directives(policy: str) -> dict[str, list[str]]:
    return {name: rest for name, *rest in (part.split() for part in policy.split("; "))}


# ─── the policy ───────────────────────────────────────────────────────────────


def test_the_policy_allows_the_origin_the_inline_scripts_hash_wasm_and_blobs() -> None:
    policy = directives(content_security_policy(INDEX))
    assert policy == {
        "default-src": ["'self'", "blob:"],
        "script-src": ["'self'", sha256(SCRIPT), "'wasm-unsafe-eval'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
    }


def test_the_policy_is_the_same_from_bytes_as_from_text() -> None:
    assert content_security_policy(INDEX.encode()) == content_security_policy(INDEX)


def test_scripts_loaded_by_url_are_not_hashed_but_every_inline_one_is() -> None:
    page = (
        '<script src="./a.js"></script><script>one()</script>'
        '<p>text</p><script type="module">two()</script>'
    )
    scripts = directives(content_security_policy(page))["script-src"]
    assert scripts == ["'self'", sha256("one()"), sha256("two()"), "'wasm-unsafe-eval'", "blob:"]


def test_a_script_is_hashed_as_a_browser_parses_it_with_its_line_ends_as_lf() -> None:
    page = "<script>\r\nconst a = '\u00e9';\rgo(a);\r\n</script>"
    scripts = directives(content_security_policy(page))["script-src"]
    assert sha256("\nconst a = '\u00e9';\ngo(a);\n") in scripts


def test_inline_styles_are_allowed_by_their_hash_only() -> None:
    page = "<style>body { margin: 0 }</style><script>go()</script>"
    policy = directives(content_security_policy(page))
    assert policy["style-src"] == ["'self'", sha256("body { margin: 0 }")]


def test_the_headers_forbid_framing_sniffing_and_referrers() -> None:
    headers = editor_headers(INDEX)
    assert headers["Content-Security-Policy"] == content_security_policy(INDEX)
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"


# ─── no cookies ───────────────────────────────────────────────────────────────


def cookie_app() -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        response = JSONResponse({"cookie": request.headers.get("cookie")})
        response.set_cookie("session", "secret")
        return response

    return Starlette(routes=[Route("/", echo)])


def test_the_policy_never_lets_a_cookie_in_or_out() -> None:
    app = EditorPolicy(cookie_app(), headers={"X-Test": "yes"})
    with TestClient(app) as client:
        response = client.get("/", headers={"cookie": "session=stolen"})
    assert response.json() == {"cookie": None}
    assert "set-cookie" not in response.headers
    assert response.headers["x-test"] == "yes"


def test_without_the_policy_the_same_app_would_read_and_set_cookies() -> None:
    with TestClient(cookie_app()) as client:
        response = client.get("/", headers={"cookie": "session=stolen"})
    assert response.json() == {"cookie": "session=stolen"}
    assert "set-cookie" in response.headers


# ─── the static app ───────────────────────────────────────────────────────────


def test_the_editor_app_serves_index_html_under_its_policy(build: Path) -> None:
    with TestClient(editor_app(build)) as client:
        response = client.get("/")
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["content-security-policy"] == content_security_policy(INDEX)
    assert response.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize(
    ("path", "media_type"),
    [("/wordcraft-3f9c.js", "text/javascript"), ("/wordcraft-3f9c_bg.wasm", "application/wasm")],
)
def test_the_editor_app_serves_the_build_with_its_types(
    build: Path, path: str, media_type: str
) -> None:
    with TestClient(editor_app(build)) as client:
        response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == media_type
    assert "content-security-policy" in response.headers


@pytest.mark.parametrize("path", ["/_headers", "/.htaccess", "/missing.js"])
def test_the_editor_app_serves_no_file_meant_for_other_servers(build: Path, path: str) -> None:
    with TestClient(editor_app(build)) as client:
        response = client.get(path)
    assert response.status_code == 404
    assert "content-security-policy" in response.headers


def test_the_editor_app_accepts_reads_only(build: Path) -> None:
    with TestClient(editor_app(build)) as client:
        response = client.post("/", content=b"x")
    assert response.status_code == 405
    assert response.headers["x-frame-options"] == "DENY"
