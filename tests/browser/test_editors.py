"""The portal's editor buttons in a real browser: WOPI's "Edit in the browser", WebDAV's links.

The editor is a test double on a free port of 127.0.0.1: it serves a discovery whose ``edit``
and ``view`` actions are its own page, and only records what the portal's form posts to it.
"""

import http.server
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import Browser, free_port


@dataclass
class Editor:
    """The editor's test double: its discovery URL, and the forms posted to it."""

    url: str
    posted: list[dict[str, list[str]]] = field(default_factory=list[dict[str, list[str]]])

    def wait_for_post(self) -> dict[str, list[str]]:
        for _ in range(400):  # bounded: a new tab's post arrives within seconds
            if self.posted:
                return self.posted[0]
            time.sleep(0.05)
        raise AssertionError("the portal's form never reached the editor")


@pytest.fixture
def editor(monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    """An editor's discovery and page, and the served demo configured with it."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    discovery = (
        '<?xml version="1.0" encoding="utf-8"?><wopi-discovery><net-zone name="external-http">'
        '<app name="writer">'
        f'<action ext="docx" name="edit" urlsrc="{origin}/browser/cool.html?"/>'
        f'<action ext="docx" name="view" urlsrc="{origin}/browser/cool.html?"/>'
        "</app></net-zone></wopi-discovery>"
    ).encode()
    found = Editor(f"{origin}/hosting/discovery")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(discovery, "text/xml")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            found.posted.append(parse_qs(self.rfile.read(length).decode()))
            self._answer(b"<!doctype html><title>Editor</title><p>The editor opened.", "text/html")

        def _answer(self, body: bytes, media: str) -> None:
            self.send_response(200)
            self.send_header("content-type", media)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    monkeypatch.setenv("ARTIFACTR_FILES_WOPI_DISCOVERY", found.url)
    try:
        yield found
    finally:
        server.shutdown()
        thread.join(timeout=30)
        server.server_close()


def links(browser: Browser) -> dict[str, str]:
    found = browser.driver.find_elements(By.CSS_SELECTOR, ".editor-actions a")
    return {link.text: link.get_attribute("href") or "" for link in found}


def test_an_editor_opens_the_file_in_the_browser_editor_or_in_word_and_libreoffice(
    editor: Editor, browser: Browser
) -> None:
    browser.open("/")
    browser.act_as("eddie")
    browser.click("contract.docx")
    assert "Edit in the browser" in browser.buttons()
    offered = links(browser)
    assert set(offered) == {"Open in Word", "Open in LibreOffice"}
    assert offered["Open in Word"].startswith(f"ms-word:ofe|u|{browser.base_url}/dav/t/")
    assert offered["Open in LibreOffice"].startswith(
        f"vnd.libreoffice.command:ofe|u|{browser.base_url}/dav/t/"
    )
    assert offered["Open in Word"].endswith("/contract.docx")
    browser.screenshot("editors")
    form = browser.driver.find_element(By.CSS_SELECTOR, ".editor-actions form")
    action = form.get_attribute("action") or ""
    assert action.startswith(editor.url.replace("/hosting/discovery", "/browser/cool.html?"))
    before = browser.driver.window_handles
    browser.driver.find_element(By.XPATH, "//button[text()='Edit in the browser']").click()
    posted = editor.wait_for_post()
    assert set(posted) == {"access_token", "access_token_ttl"}
    assert int(posted["access_token_ttl"][0]) > 0
    assert len(browser.driver.window_handles) == len(before) + 1  # a new tab; the page stays
    # The token the editor got opens this file for eddie, who may write, on the WOPI host.
    source = parse_qs(urlsplit(action).query)["WOPISrc"][0]
    token = quote(posted["access_token"][0], safe="")
    with urllib.request.urlopen(f"{source}?access_token={token}", timeout=60) as answer:
        info = json.load(answer)
    assert (info["BaseFileName"], info["UserCanWrite"]) == ("contract.docx", True)


def test_a_viewer_gets_the_browser_editor_s_view_and_read_only_links(
    editor: Editor, browser: Browser
) -> None:
    browser.open("/")
    browser.act_as("rita")
    browser.click("contract.docx")
    assert "View in the browser" in browser.buttons()
    assert "Edit in the browser" not in browser.buttons()
    offered = links(browser)
    assert set(offered) == {"Open read-only in Word", "Open read-only in LibreOffice"}
    assert offered["Open read-only in Word"].startswith(f"ms-word:ofv|u|{browser.base_url}/dav/")
