"""What people tripped over in issue 43, walked in chromium on the served demo (ADR-0035).

Erin's own MCP client proposes an edit: Erin sees it without Accept, and the words why; Eddie
may decide, accepts it, and the history says who wrote it and who accepted it, the decided
proposal listed. A person adds a file through the file list's form, and a refused one says why.
A workbook and a deck are served beside the contract.
"""

import asyncio
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from selenium.webdriver.common.by import By

from artifactr.files.apps.libreoffice import available
from artifactr.files.core.documents import build_docx
from artifactr.files.programs import serve
from tests.browser.conftest import Browser
from tests.browser.test_portal import open_contract
from tests.browser.test_portal_outcomes import file_url

FILES = "/portal/workspaces/w1/files"
"""The served workspace's file list."""


async def _propose_as_erin_s_assistant(base_url: str, artifact_id: str) -> None:
    """Propose the seeded suggestion through the served MCP endpoint, as Erin's client."""
    app = "libreoffice" if available().ok else "fake"
    commands = [c.model_dump() for c in serve.SUGGESTIONS.get(app, serve.SUGGESTION)]
    arguments = {
        "workspace_id": "w1",
        "artifact_id": artifact_id,
        "base_version": 1,
        "commands": commands,
        "summary": "Shorter payment terms.",
    }
    async with (
        httpx2.AsyncClient(headers={"x-user": "erin"}, timeout=120) as http,
        Client(streamable_http_client(f"{base_url}/mcp/", http_client=http)) as client,
    ):
        result = await client.call_tool("edit_native", arguments)
        assert not result.is_error, result.content


def test_an_assistant_s_proposal_is_decided_by_someone_other_than_whom_it_acted_for(
    browser: Browser,
) -> None:
    open_contract(browser, "erin")
    page = file_url(browser)
    artifact_id = page.rsplit("/", 1)[1]
    asyncio.run(_propose_as_erin_s_assistant(browser.base_url, artifact_id))
    browser.driver.refresh()
    rows = [r.text for r in browser.driver.find_elements(By.CSS_SELECTOR, ".proposals tr")]
    mine = [row for row in rows if row.startswith("Erin's assistant")]
    assert mine, rows
    assert "someone other than you decides what your assistant proposed" in mine[0]
    browser.screenshot("assistant-proposal-for-erin")
    # Eddie may decide: he is offered Accept on that row, and accepts it.
    browser.act_as("eddie")
    row = next(
        r
        for r in browser.driver.find_elements(By.CSS_SELECTOR, ".proposals tr")
        if r.text.startswith("Erin's assistant")
    )
    assert [b.text for b in row.find_elements(By.TAG_NAME, "button")] == ["Accept", "Reject"]
    browser.press(row.find_element(By.XPATH, ".//button[text()='Accept']"))
    browser.driver.find_element(By.CSS_SELECTOR, ".notice.applied")
    assert browser.notice() == "Accepted: the file is now version 2."
    history = [r.text for r in browser.driver.find_elements(By.CSS_SELECTOR, ".history tr")]
    assert history[1].startswith("2 written by Erin's assistant, accepted by Eddie"), history
    decided = [r.text for r in browser.driver.find_elements(By.CSS_SELECTOR, ".decided tr")]
    assert decided[1].startswith("Erin's assistant accepted by Eddie as version 2"), decided
    browser.screenshot("decided-proposal-in-history")


def test_a_person_adds_a_file_through_the_form_and_a_refused_one_says_why(
    browser: Browser, tmp_path: Path
) -> None:
    browser.open("/")
    browser.act_as("eddie")
    browser.open(FILES)
    terms = tmp_path / "terms.docx"
    terms.write_bytes(build_docx(("Terms", "Payment within thirty days.")))
    browser.driver.find_element(By.NAME, "file").send_keys(str(terms))
    browser.screenshot("upload-form")
    browser.click("Upload")
    assert browser.notice() == "Added terms.docx, a Word document (.docx), as version 1."
    assert browser.driver.find_element(By.TAG_NAME, "h1").text == "terms.docx"
    browser.open(FILES)
    notes = tmp_path / "notes.docx"
    notes.write_bytes(b"plain words, not a package")
    browser.driver.find_element(By.NAME, "file").send_keys(str(notes))
    browser.click("Upload")
    assert browser.notice().startswith("That file isn't one this can read")
    assert "notes.docx" not in browser.text()
    # A viewer is offered no form.
    browser.act_as("rita")
    assert browser.driver.find_elements(By.CSS_SELECTOR, "form.upload") == []


def test_a_workbook_and_a_deck_are_served_beside_the_contract(browser: Browser) -> None:
    browser.open("/")
    browser.act_as("rita")
    browser.open(FILES)
    names = [a.text for a in browser.driver.find_elements(By.CSS_SELECTOR, "main table a")]
    assert "contract.docx" in names
    if not available().ok:
        return  # FakeApp reads documents only: the served demo seeds no workbook nor deck
    kinds = [name for name in names if name.endswith((".xlsx", ".pptx"))]
    assert len(kinds) == 2, names
    for name in kinds:
        browser.click(name)
        assert browser.driver.find_element(By.TAG_NAME, "h1").text == name
        assert all(browser.images_loaded())
        browser.driver.back()
