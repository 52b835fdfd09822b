"""The portal's editor buttons: what each person gets, and the CSP their forms need."""

import httpx2
import pytest
from artifactr import AgentActor, UserActor
from fastapi import APIRouter, FastAPI

from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.editor_buttons import DavLinks, editor_buttons, editor_origins
from artifactr.files.fastapi.portal import EditorLink, portal_router
from artifactr.files.fastapi.wopi import WopiSettings
from artifactr.files.fastapi.wopi_discovery import DiscoveryCache
from tests.fastapi.conftest import Api, resolve_actor

SECRET = "a test secret of at least thirty-two bytes"
BASE = "http://127.0.0.1:8000"

DISCOVERY = b"""<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery><net-zone name="external-https"><app name="writer">
<action ext="docx" name="edit" urlsrc="https://cool.test/browser/1/cool.html?"/>
<action ext="docx" name="view" urlsrc="https://cool.test/browser/1/cool.html?"/>
</app></net-zone></wopi-discovery>"""


async def fetch(url: str) -> bytes:
    return DISCOVERY


def portal(api: Api, origin: str) -> APIRouter:
    return portal_router(
        api.files,
        api.workspaces,
        resolve_actor=resolve_actor,
        people=[],
        workspace_ids=["w1"],
        form_origins=[origin],
    )


async def test_a_person_gets_the_browser_editor_and_the_desktop_links(api: Api) -> None:
    artifact_id = await api.upload()
    ws = await api.ws(UserActor(id="alice", name="Alice"))
    _, manifest = await api.files.manifest(ws, artifact_id)
    wopi = WopiSettings(SECRET, discovery=DiscoveryCache("https://cool.test/d", fetch=fetch))
    buttons = editor_buttons(
        api.files, base_url=BASE, wopi=wopi, dav=DavLinks(BASE, Capabilities(SECRET))
    )
    found = await buttons(ws, artifact_id, manifest)
    assert [button.label for button in found] == [
        "Edit in the browser",
        "Open in Word",
        "Open in LibreOffice",
    ]
    browser, word, _ = found
    assert (browser.method, browser.target) == ("post", "_blank")
    assert browser.url.startswith("https://cool.test/browser/1/cool.html?WOPISrc=")
    assert [name for name, _ in browser.fields] == ["access_token", "access_token_ttl"]
    assert word.url.startswith(f"ms-word:ofe|u|{BASE}/dav/t/")
    # Switched off in the workspace: the desktop apps open it read-only, and no editor edits it.
    api.off()
    off = await buttons(ws, artifact_id, manifest)
    assert [button.label for button in off] == [
        "View in the browser",
        "Open read-only in Word",
        "Open read-only in LibreOffice",
    ]


async def test_without_an_editor_or_webdav_or_for_an_agent_there_are_no_buttons(
    api: Api,
) -> None:
    artifact_id = await api.upload()
    ws = await api.ws(UserActor(id="alice", name="Alice"))
    _, manifest = await api.files.manifest(ws, artifact_id)
    nothing = editor_buttons(api.files, base_url=BASE, wopi=WopiSettings(SECRET))
    assert await nothing(ws, artifact_id, manifest) == []
    assert await editor_buttons(api.files, base_url=BASE)(ws, artifact_id, manifest) == []
    agent = await api.ws(
        AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice"))
    )
    dav = editor_buttons(api.files, base_url=BASE, dav=DavLinks(BASE, Capabilities(SECRET)))
    assert await dav(agent, artifact_id, manifest) == []


def test_an_editor_s_origin_is_allowed_to_receive_the_portal_s_forms(api: Api) -> None:
    assert editor_origins(
        ["https://cool.test/hosting/discovery", "https://cool.test/other", "ftp://x/y", "nothing"]
    ) == ["https://cool.test"]
    assert portal(api, "https://cool.test").prefix == "/portal"
    with pytest.raises(ValueError, match="is not an origin"):
        portal(api, "https://cool.test/path; script-src *")
    assert EditorLink(label="x", url="y").method == "get"


async def test_the_portal_s_csp_lets_forms_post_to_the_editor_s_origin_only(api: Api) -> None:
    app = FastAPI()
    app.include_router(portal(api, "https://cool.test"))
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://files.test"
    ) as client:
        page = await client.get("/portal/portal.css")
    policy = page.headers["content-security-policy"]
    assert "form-action 'self' https://cool.test;" in policy
    assert "script-src 'none'" in policy
