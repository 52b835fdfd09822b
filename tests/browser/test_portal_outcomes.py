"""The portal as a person uses it, in chromium: each outcome said in words (issue 28).

Each test is one thing a person trips on, on the served demo (its contract and the assistant's
pending proposal) with the clock fixed at 2026-11-30T12:00:00Z: an outdated proposal, a
refreshed form, who did what and when, a check-out someone else ended, what accepting a stale
check-in would undo, ending a colleague's check-out, times, full-size pages and the changed
region, changed words, and refusals said for a person. The last one uploads a file whose name,
summary and outline hold markup, and finds nothing runs.
"""

import json
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from artifactr.files.core.documents import build_docx
from tests.browser.conftest import Browser
from tests.browser.test_portal import check_in, check_out, open_contract


def file_url(browser: Browser) -> str:
    """Return the file's page, as the browser is on it or one of its pages."""
    found = re.search(r"(/portal/workspaces/w1/files/art_[0-9a-f]+)", browser.driver.current_url)
    assert found is not None, browser.driver.current_url
    return found.group(1)


def check_in_with(browser: Browser, path: Path, summary: str) -> None:
    browser.driver.find_element(By.NAME, "summary").send_keys(summary)
    check_in(browser, path)


def checkout_id(browser: Browser) -> str:
    form = browser.driver.find_element(By.CSS_SELECTOR, "form[action$='/check-in']")
    found = re.search(r"/checkouts/(co_[0-9a-f]+)/check-in", form.get_attribute("action") or "")
    assert found is not None
    return found.group(1)


def test_1_an_outdated_proposal_says_why_and_offers_no_accept(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    check_in_with(browser, path, "Final terms")
    browser.act_as("erin")
    browser.open(file_url(browser))
    assert "outdated" in browser.text()
    browser.click("review it")  # the assistant's proposal, made on version 1
    text = browser.text()
    assert "Outdated: this was proposed on version 1, and the file is now version 2" in text
    assert "It can't be accepted as it is." in text
    assert "Ask its author" in text
    assert "Accept" not in browser.buttons()
    assert "Reject" in browser.buttons()
    browser.screenshot("outdated")


def test_2_every_form_answers_with_a_page_a_refresh_does_not_post_again(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    here = browser.driver.current_url
    browser.driver.switch_to.new_window("tab")
    browser.driver.get(here)
    second = browser.driver.current_window_handle
    first = browser.driver.window_handles[0]
    browser.driver.switch_to.window(first)
    check_out(browser, tmp_path)
    assert browser.driver.current_url == here  # redirected to the file's page
    browser.driver.refresh()
    assert "That didn't work" not in browser.text()
    assert "checked out by Eddie" in browser.text()
    # The same form submitted again from the other tab: harmless, and said so.
    browser.driver.switch_to.window(second)
    browser.click("Check out")
    assert browser.driver.current_url == here
    assert browser.notice().startswith("You have this file checked out already")


def test_3_every_revision_and_proposal_says_who_when_and_the_summary(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    browser.clock.advance(timedelta(minutes=5))
    browser.act_as("erin")
    browser.click("Accept")  # the assistant's proposal: version 2
    browser.clock.advance(timedelta(minutes=5))
    browser.act_as("eddie")
    check_in_with(browser, path, "Final terms, as agreed on the call")
    browser.clock.advance(timedelta(minutes=10))
    browser.driver.refresh()
    rows = [row.text for row in browser.driver.find_elements(By.CSS_SELECTOR, ".history tr")]
    assert re.match(r"2 .+ 15 minutes ago", rows[1]), rows
    assert re.match(r"1 Eddie 20 minutes ago", rows[2]), rows
    # A stale check-in's proposal shows what the person wrote, and when.
    proposals = [row.text for row in browser.driver.find_elements(By.CSS_SELECTOR, ".proposals tr")]
    assert proposals[1].startswith("Eddie 10 minutes ago Final terms, as agreed on the call")
    browser.screenshot("history")


def test_4_a_check_in_after_someone_ended_the_check_out_says_who_and_when(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    checkout = checkout_id(browser)
    artifact = file_url(browser).rsplit("/", 1)[1]
    browser.clock.advance(timedelta(minutes=20))
    browser.call("DELETE", f"/workspaces/w1/files/{artifact}/checkouts/{checkout}", "erin")
    browser.clock.advance(timedelta(minutes=5))
    # Eddie checks in from the page he had open while he edited.
    check_in_with(browser, path, "Final terms")
    notice = browser.notice()
    assert notice.startswith(
        "Your check-out was ended by Erin 5 minutes ago (Mon 30 Nov 2026, 12:20 UTC)"
    )
    assert "kept as a proposal" in notice
    browser.screenshot("ended")


def test_5_a_stale_check_in_says_which_revisions_accepting_it_would_undo(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    browser.act_as("erin")
    browser.click("Accept")  # the assistant's proposal: version 2
    browser.act_as("eddie")
    check_in_with(browser, path, "Final terms")
    browser.act_as("erin")
    browser.click("review it")  # eddie's check-in, kept as a proposal on version 2
    warning = browser.driver.find_element(By.CSS_SELECTOR, ".notice.undoes").text
    assert warning.startswith("Accepting this would undo version 2")
    assert "made on version 1" in warning
    assert "Accept" in browser.buttons()
    browser.screenshot("would-undo")


def test_6_an_editor_ends_someone_else_s_check_out_after_a_confirmation(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    check_out(browser, tmp_path)
    checkout = checkout_id(browser)
    artifact = file_url(browser).rsplit("/", 1)[1]
    # 6 h 59 min are left: "in 7 hours", as a person rounds them.
    browser.clock.advance(timedelta(minutes=61))
    browser.act_as("erin")
    browser.click("End Eddie's check-out…")
    confirm = browser.text()
    assert "End Eddie's check-out?" in confirm
    assert (
        "Eddie checked out version 1; it is theirs until Mon 30 Nov 2026, 20:00 UTC (in 7 hours)"
        in (confirm)
    )
    browser.screenshot("end-check-out")
    browser.click("End the check-out")
    assert browser.notice() == "You ended Eddie's check-out: the file is free."
    assert "free: no one has it checked out" in browser.text()
    state = json.loads(
        browser.call("GET", f"/workspaces/w1/files/{artifact}/checkouts/{checkout}", "eddie")
    )
    assert state["state"] == "discarded"
    assert state["ended_by"]["id"] == "erin"


def test_7_times_are_said_as_a_person_reads_them(browser: Browser, tmp_path: Path) -> None:
    open_contract(browser, "eddie")
    check_out(browser, tmp_path)
    assert "yours until Mon 30 Nov 2026, 20:00 UTC (in 8 hours)" in browser.notice()
    expiry = browser.driver.find_element(By.CSS_SELECTOR, "dd time")
    assert expiry.get_attribute("datetime") == "2026-11-30T20:00:00Z"
    assert expiry.text == "in 8 hours"
    assert expiry.get_attribute("title") == "Monday 30 November 2026, 20:00 UTC"
    # 5 h 29 min are left: "in 5 hours", as a person rounds them.
    browser.clock.advance(timedelta(hours=2, minutes=31))
    browser.driver.refresh()
    assert browser.driver.find_element(By.CSS_SELECTOR, "dd time").text == "in 5 hours"
    assert not re.search(r"\d\d:\d\d:\d\d", browser.text())


def test_8_pages_open_full_size_and_a_differing_page_marks_its_changed_region(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    page = browser.driver.find_element(By.CSS_SELECTOR, ".pages a")
    assert "scale=1" in (page.get_attribute("href") or "")
    path = check_out(browser, tmp_path)
    check_in(browser, path)
    marks = browser.driver.find_elements(By.CSS_SELECTOR, ".side svg rect.changed")
    assert len(marks) == 2  # the changed region of page 2, on both sides
    box = {name: float(marks[1].get_attribute(name) or 0) for name in ("y", "height")}
    assert 0 < box["height"] < 600  # a region, not the whole page
    browser.screenshot("applied")
    browser.press(browser.driver.find_element(By.CSS_SELECTOR, ".side a"))
    assert "scale=1" in browser.driver.current_url
    width = browser.driver.execute_script("return document.images[0].naturalWidth")
    assert width > 500


def test_9_a_changed_paragraph_marks_its_changed_words(browser: Browser, tmp_path: Path) -> None:
    open_contract(browser, "eddie")
    path = check_out(browser, tmp_path)
    check_in(browser, path)
    added = [e.text for e in browser.driver.find_elements(By.CSS_SELECTOR, ".added ins")]
    removed = [e.text for e in browser.driver.find_elements(By.CSS_SELECTOR, ".removed del")]
    assert "Draft" in " ".join(removed)
    assert "Final" in " ".join(added)
    assert "terms" not in " ".join(added).split()  # unchanged words are not marked


def test_10_a_refused_check_in_says_what_to_do_and_keeps_the_summary(
    browser: Browser, tmp_path: Path
) -> None:
    open_contract(browser, "eddie")
    check_out(browser, tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a document")
    check_in_with(browser, notes, "My careful summary")
    notice = browser.notice()
    assert notice.startswith("That file isn't a Word document this can read")
    assert "zip" not in notice
    summary = browser.driver.find_element(By.NAME, "summary")
    assert summary.get_attribute("value") == "My careful summary"
    detail = browser.driver.find_element(By.CSS_SELECTOR, "details.technical")
    assert "zip" in (detail.get_attribute("textContent") or "")
    browser.screenshot("refused")
    empty = tmp_path / "contract.docx"
    empty.write_bytes(b"")
    check_in(browser, empty)
    assert browser.notice().startswith("The file you chose is empty")


def test_markup_in_a_name_a_summary_and_an_outline_shows_as_text(
    browser: Browser, tmp_path: Path
) -> None:
    name = "<script>alert(1)</script>.docx"
    outline = '<img src=x onerror="alert(2)">Terms'
    data = build_docx([("Title", outline), "Body <b>bold</b>."])
    answer = browser.call("POST", f"/workspaces/w1/files?name={quote(name)}", "eddie", data)
    artifact = json.loads(answer)["artifact_id"]
    browser.open("/")
    browser.act_as("eddie")
    assert name in browser.text()
    browser.click(name)
    assert browser.driver.find_element(By.TAG_NAME, "h1").text == name
    assert outline in browser.text()
    browser.click("Check out")
    path = tmp_path / "edited.docx"
    path.write_bytes(build_docx([("Title", outline), "Body <i>changed</i>."]))
    check_in_with(browser, path, "<script>alert(3)</script><b>summary</b>")
    browser.open(f"/portal/workspaces/w1/files/{artifact}")
    assert "<script>alert(3)</script><b>summary</b>" in browser.text()
    previews = browser.driver.find_elements(By.CSS_SELECTOR, "main .pages img")
    assert browser.driver.find_elements(By.CSS_SELECTOR, "main script, main b, main img") == (
        previews
    )
    browser.screenshot("markup")
    try:
        alert: str | None = browser.driver.switch_to.alert.text
    except NoAlertPresentException:
        alert = None
    assert alert is None
