"""The portal in a real browser: what a viewer and two editors see and do (ADR-0011).

Each test serves the demo afresh (its generated two-page contract, and the assistant's pending
proposal) on LibreOffice where it can run (always in CI), so the previews and the pages a diff
compares are real, and FakeApp elsewhere. It drives Debian's headless chromium through the
page's own forms, with no script:
a viewer sees previews and diffs but no check-out; an editor checks out, downloads, uploads an
edited file and sees "applied" with the new revision's diff; a second editor sees who holds the
file and until when (on a fixed clock); and a check-in after the file moved on is kept as a
proposal. Each screen is saved (``out/screens``; ``ARTIFACTR_SCREENS=docs/screens`` refreshes
the docs' copies).
"""

import asyncio
from pathlib import Path

from selenium.webdriver.common.by import By

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import AppCommand
from tests.browser.conftest import Browser


def edited(data: bytes) -> bytes:
    """Return the file as a person would save it after editing it in the app."""
    params = {"text": "Draft terms for review", "with": "Final terms, agreed by both parties"}
    change = AppCommand(command="edit.replaceAll", params=params)
    return asyncio.run(FakeApp().apply(data, [change], author="Eddie")).content


def open_contract(browser: Browser, person: str) -> None:
    browser.open("/")
    browser.act_as(person)
    browser.click("contract.docx")


def check_out(browser: Browser, tmp_path: Path) -> Path:
    """Check the file out as the current person; return the downloaded file, edited."""
    browser.click("Check out")
    assert browser.notice().startswith("Checked out version")
    path = tmp_path / "edited.docx"
    path.write_bytes(edited(browser.downloaded("contract.docx")))
    return path


def check_in(browser: Browser, path: Path) -> None:
    browser.driver.find_element(By.NAME, "file").send_keys(str(path))
    browser.click("Check in")


def test_a_viewer_sees_previews_and_diffs_but_no_check_out_button(browser: Browser) -> None:
    browser.open("/")
    assert "Choose a person" in browser.text()
    browser.act_as("rita")
    assert "contract.docx" in browser.text()
    browser.screenshot("files")
    browser.click("contract.docx")
    assert "Services agreement" in browser.text()  # the outline
    assert "free: no one has it checked out" in browser.text()
    assert browser.images_loaded() == [True, True]  # two page previews
    assert "Check out" not in browser.buttons()
    assert "You may read this file, not check it out." in browser.text()
    assert "you may not decide" in browser.text()
    browser.screenshot("file-viewer")
    browser.click("review it")  # the assistant's pending proposal
    text = browser.text()
    assert "Invoices are paid within fourteen days." in text
    assert "added comment: Shorter terms, as agreed." in text
    assert browser.images_loaded() == [True, True]  # page 2, before and proposed
    assert "Accept" not in browser.buttons()
    browser.screenshot("proposal")


def test_an_editor_checks_out_downloads_and_checks_in_a_change(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    assert "yours until Mon 30 Nov 2026, 20:00 UTC (in 8 hours)" in browser.notice()
    assert {"Extend by 8 hours", "Discard the check-out", "Check in"} <= set(browser.buttons())
    browser.screenshot("checked-out")
    check_in(browser, path)
    assert browser.notice() == "Applied: your check-in is version 2."
    text = browser.text()
    assert "Draft terms for review." in text
    assert "Final terms, agreed by both parties." in text
    assert browser.images_loaded() == [True, True]  # page 2, before and after
    browser.screenshot("applied")
    browser.click("← contract.docx")
    assert "free: no one has it checked out" in browser.text()


def test_a_second_editor_sees_who_holds_the_file_and_until_when(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    check_out(browser, tmp_path)
    browser.act_as("erin")
    held = "checked out by Eddie; the lease ends in 8 hours (Mon 30 Nov 2026, 20:00 UTC)"
    assert held in browser.text()
    assert "Check out" not in browser.buttons()
    assert "Someone else has it checked out" in browser.text()
    browser.screenshot("held")


def test_a_check_in_after_the_file_moved_on_is_kept_as_a_proposal(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    # Meanwhile erin accepts the assistant's proposal: the file moves on to version 2.
    browser.act_as("erin")
    browser.click("Accept")
    assert browser.notice() == "Accepted: the file is now version 2."
    browser.act_as("eddie")
    check_in(browser, path)
    assert browser.notice().startswith(
        "Kept as a proposal: the file moved on to version 2 since you checked it out"
    )
    assert "yours: someone else decides" in browser.text()
    browser.screenshot("stale")
    browser.click("See what it changes")
    assert "Final terms, agreed by both parties." in browser.text()


def _touching(browser: Browser) -> list[tuple[str, str]]:
    """Return the pairs of buttons on the page less than 4 pixels apart."""
    boxes = browser.driver.execute_script(
        "return [...document.querySelectorAll('main button, main a.button')]"
        ".map(e => [e.textContent, ...Object.values(e.getBoundingClientRect().toJSON())])"
    )
    found: list[tuple[str, str]] = []
    for index, (name, *box) in enumerate(boxes):
        for other, *more in boxes[index + 1 :]:
            first = dict(
                zip(
                    ("x", "y", "width", "height", "top", "right", "bottom", "left"),
                    box,
                    strict=True,
                )
            )
            second = dict(
                zip(
                    ("x", "y", "width", "height", "top", "right", "bottom", "left"),
                    more,
                    strict=True,
                )
            )
            dx = max(0, second["left"] - first["right"], first["left"] - second["right"])
            dy = max(0, second["top"] - first["bottom"], first["top"] - second["bottom"])
            if max(dx, dy) < 4:
                found.append((name, other))
    return found


def test_buttons_never_touch_on_the_file_and_proposal_pages(browser: Browser) -> None:
    open_contract(browser, "erin")
    assert "Accept" in browser.buttons()
    assert _touching(browser) == []
    browser.click("review it")
    assert "Accept" in browser.buttons()
    assert _touching(browser) == []
