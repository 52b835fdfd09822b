"""The portal's pages over HTTP, without a browser: what each person is shown (ADR-0011).

The portal runs beside the files router, over the router tests' app (FakeApp, SQLite or
PostgreSQL, alice and bob as people, mallory refused). Each test reads the HTML a person would
see: the words of each outcome, which buttons are offered, and the links to the router's
renders and downloads. A workbook's and a deck's diffs run on the real LibreOffice, on SQLite
alone. The browser tests (tests/browser) drive the same pages in chromium.
"""

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

import httpx2
import pytest
from artifactr import AgentActor, UserActor
from artifactr.workspace import Workspace
from fastapi import FastAPI

from artifactr.files import Presentation, Spreadsheet, WordDocument
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.portal import (
    CONTENT_SECURITY_POLICY,
    PERSON_COOKIE,
    EditorLink,
    Person,
    _participant,
    _size,
    portal_router,
)
from artifactr.files.fastapi.router import files_router
from artifactr.files.native.diff import DiffLimits
from tests.documents import build_docx
from tests.fastapi.conftest import ALICE, BOB, MALLORY, WORKSPACE, Api, MakeApi, resolve_actor
from tests.office import need_office
from tests.sheets import build_pptx, build_xlsx
from tests.world import chunks

PEOPLE = [Person(id="alice", name="Alice", role="editor"), Person(id="bob", name="Bob")]
PARAGRAPHS = [f"Clause {n} of the agreement." for n in range(1, 61)]
"""Sixty paragraphs: two pages at FakeApp's layout."""


@dataclass
class Portal:
    api: Api
    client: httpx2.AsyncClient

    def url(self, path: str = "") -> str:
        return f"/portal/workspaces/{WORKSPACE}/files{path}"

    async def get(self, path: str = "", who: dict[str, str] = ALICE) -> httpx2.Response:
        return await self.client.get(self.url(path), headers=who)

    async def post(
        self, path: str, who: dict[str, str] = ALICE, **options: object
    ) -> httpx2.Response:
        return await self.client.post(self.url(path), headers=who, **options)


@pytest.fixture
async def portal(api: Api) -> AsyncIterator[Portal]:
    async with portal_over(api) as opened:
        yield opened


@asynccontextmanager
async def portal_over(api: Api) -> AsyncIterator[Portal]:
    """The portal beside the files router over the api's service, and a person's browser."""
    app = FastAPI()
    app.include_router(files_router(api.files, api.workspaces, resolve_actor=resolve_actor))
    app.include_router(
        portal_router(
            api.files,
            api.workspaces,
            resolve_actor=resolve_actor,
            people=PEOPLE,
            workspace_ids=[WORKSPACE],
            limits=DiffLimits(text_chars=2_000),
            clock=api.clock,
        )
    )
    transport = httpx2.ASGITransport(app=app)
    # A person's browser: it follows each form's redirect to the page that says the outcome.
    async with httpx2.AsyncClient(
        transport=transport, base_url="http://portal.test", follow_redirects=True
    ) as client:
        yield Portal(api, client)


def words(response: httpx2.Response) -> str:
    """Return the page's text, as a person reads it: no tags, entities decoded."""
    text = re.sub(r"</?(ins|del|strong|time|code)\b[^>]*>", "", response.text)
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(html.unescape(text).split())


def table(response: httpx2.Response, kind: str) -> list[list[str]]:
    """Return a table of changes (``cells`` or ``slides``) as a person reads it: rows of cells."""
    found = re.search(rf'<table class="changes {kind}">(.*?)</table>', response.text, re.S)
    assert found is not None, response.text
    rows = re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)
    return [
        [" ".join(html.unescape(re.sub(r"<[^>]+>", "", cell)).split()) for cell in cells]
        for cells in (re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in rows)
    ]


def technical(response: httpx2.Response) -> str:
    """Return a refusal's technical reason, as the API gives it, under its notice."""
    found = re.search(r'<details class="technical">.*?<code>(.*?)</code>', response.text)
    assert found is not None, response.text
    return html.unescape(found.group(1))


def notice(response: httpx2.Response) -> str:
    found = re.search(r'<p class="notice [a-z]+" role="status">(.*?)</p>', response.text)
    assert found is not None, response.text
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


async def revise(portal: Portal, artifact_id: str, data: bytes) -> httpx2.Response:
    """Check the file out and in as alice, through the portal's forms."""
    await portal.post(f"/{artifact_id}/check-out")
    lease = await portal.api.files.lease(
        await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice")),
        artifact_id,
    )
    assert lease is not None
    checkout_id = lease.holder.split(":")[1]
    return await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", data)},
        data={"summary": "revised"},
    )


async def propose(portal: Portal, artifact_id: str, person: str = "alice", base: int = 1) -> str:
    agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id=person))
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=agent)
    commands = [AppCommand(command="edit.replaceAll", params={"text": "Clause", "with": "Art."})]
    proposed = await portal.api.files.edit(ws, artifact_id, base_version=base, commands=commands)
    return proposed.model_dump()["proposal_id"]


# ─── people and pages ─────────────────────────────────────────────────────────


async def test_the_first_page_lists_workspaces_and_asks_who_you_are(portal: Portal) -> None:
    nobody = await portal.client.get("/portal")
    assert nobody.status_code == 200
    assert "Choose a person above to see the files." in words(nobody)
    assert "a choice, not authentication" in words(nobody)
    assert nobody.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    someone = await portal.client.get("/portal", headers=ALICE)
    assert "Choose a person" not in words(someone)
    assert '<option value="alice" selected>' in someone.text
    assert f'href="/portal/workspaces/{WORKSPACE}/files"' in someone.text
    sheet = await portal.client.get("/portal/portal.css")
    assert sheet.headers["content-type"].startswith("text/css")


async def test_choosing_a_person_keeps_them_in_a_cookie_and_goes_back(portal: Portal) -> None:
    back = portal.url()
    chosen = await portal.client.post(
        "/portal/person", data={"person": "bob", "back": back}, follow_redirects=False
    )
    assert (chosen.status_code, chosen.headers["location"]) == (303, back)
    assert f"{PERSON_COOKIE}=bob" in chosen.headers["set-cookie"]
    assert "samesite=strict" in chosen.headers["set-cookie"].lower()
    for elsewhere in ("https://evil.test/portal", "/portal//evil.test", "/other"):
        away = await portal.client.post(
            "/portal/person", data={"person": "bob", "back": elsewhere}, follow_redirects=False
        )
        assert away.headers["location"] == "/portal"
    nobody = await portal.client.post(
        "/portal/person", data={"person": "eve", "back": back}, follow_redirects=False
    )
    assert f'{PERSON_COOKIE}=""' in nobody.headers["set-cookie"]


async def test_pages_need_a_person_and_refuse_one_the_workspace_refuses(portal: Portal) -> None:
    nobody = await portal.client.get(portal.url())
    assert nobody.status_code == 401
    assert "Who are you?" in words(nobody)
    stranger = await portal.get(who=MALLORY)
    assert stranger.status_code == 403
    assert "That didn't work" in words(stranger)


async def test_the_file_list_shows_each_file_its_size_and_its_lease(portal: Portal) -> None:
    assert "No files yet." in words(await portal.get())
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    listed = words(await portal.get())
    assert "contract.docx" in listed
    assert "held by Alice" in listed
    assert re.search(r"\d+\.\d KiB 1 held by Alice", listed)


async def test_a_file_page_shows_what_it_is_and_offers_a_check_out(portal: Portal) -> None:
    artifact_id = await portal.api.upload(
        build_docx([("Title", "Agreement"), ("Heading1", "Terms"), *PARAGRAPHS])
    )
    page = await portal.get(f"/{artifact_id}")
    text = words(page)
    assert "contract.docx" in text
    assert "Agreement Terms" in text  # the outline
    assert "free: no one has it checked out" in text
    assert "Pages 2" in text
    assert page.text.count('<img src="/workspaces/w1/files/') == 2
    assert f"/workspaces/w1/files/{artifact_id}/versions/1/pages/2?scale=0.3" in page.text
    assert f"/workspaces/w1/files/{artifact_id}/versions/1/content" in page.text
    assert "<button>Check out</button>" in page.text
    assert "first version" in text
    assert "Pending proposals None." in text
    plain = await portal.api.upload(build_docx(["No headings here."]))
    assert "Outline None." in words(await portal.get(f"/{plain}"))
    missing = await portal.get("/art_0000000000000000")
    assert missing.status_code == 404


async def test_a_person_who_may_not_edit_is_offered_no_check_out(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await propose(portal, artifact_id)
    portal.api.switch.set("t1", WORKSPACE, portal.api.files.key, enabled=False)
    text = words(await portal.get(f"/{artifact_id}", who=BOB))
    assert "You may read this file, not check it out." in text
    assert "you may not decide" in text
    assert "Check out" not in text


# ─── check-out, extend, discard ───────────────────────────────────────────────


async def test_a_check_out_downloads_the_file_and_shows_the_expiry(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    page = await portal.post(f"/{artifact_id}/check-out")
    assert notice(page) == (
        "Checked out version 1, yours until Mon 30 Nov 2026, 20:00 UTC (in 8 hours). Your "
        "download starts by itself; edit the file, then check it in below. Download it again"
    )
    download = f"/workspaces/w1/files/{artifact_id}/versions/1/content"
    assert f'<meta http-equiv="refresh" content="0; url={download}">' in page.text
    assert f'name="back" value="{portal.url(f"/{artifact_id}")}"' in page.text
    text = words(page)
    assert "checked out by Alice; the lease ends in 8 hours (Mon 30 Nov 2026, 20:00 UTC)" in text
    assert '<time datetime="2026-11-30T20:00:00Z" title="Monday 30 November 2026, 20:00 UTC">' in (
        page.text
    )
    assert "Extend by 8 hours" in text
    assert 'type="file" name="file"' in page.text
    held = words(await portal.get(f"/{artifact_id}", who=BOB))
    assert "checked out by Alice; the lease ends" in held
    assert "Someone else has it checked out" in held
    busy = await portal.post(f"/{artifact_id}/check-out", who=BOB)
    assert notice(busy).startswith("Someone else has this file checked out")
    assert "is held by checkout:" in technical(busy)
    # A refresh shows the page again, without the notice: nothing is posted twice.
    assert 'role="status"' not in (await portal.get(f"/{artifact_id}", who=BOB)).text


async def test_a_check_out_is_extended_or_discarded_from_its_page(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    page = (await portal.get(f"/{artifact_id}")).text
    found = re.search(r'action="([^"]+/checkouts/(co_[0-9a-f]+))/extend"', page)
    assert found is not None
    base = f"/{artifact_id}/checkouts/{found.group(2)}"
    extended = await portal.post(f"{base}/extend")
    assert notice(extended) == "Extended: yours until Mon 30 Nov 2026, 20:00 UTC (in 8 hours)."
    discarded = await portal.post(f"{base}/discard")
    assert notice(discarded) == "Discarded: nothing was checked in, and the file is free."
    assert "free: no one has it checked out" in words(discarded)
    # An ended check-out says how it ended, by whom and when (ADR-0009).
    ended = f"check-out {found.group(2)} was discarded by user:alice at "
    late = await portal.post(f"{base}/extend")
    assert notice(late).startswith("That didn't work, and nothing was changed.")
    assert technical(late).startswith(f"invalid_state: {ended}")
    assert notice(await portal.post(f"{base}/discard")) == notice(discarded)  # a retry
    unknown = await portal.post(f"/{artifact_id}/checkouts/co_0000000000000000/discard")
    assert notice(unknown).startswith("That is gone or was never here")
    assert "co_0000000000000000" in technical(unknown)
    assert 'class="notice refused"' in unknown.text


# ─── check-in ─────────────────────────────────────────────────────────────────


async def test_a_check_in_is_applied_and_shows_the_new_revisions_diff(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    changed = [*PARAGRAPHS[:-1], "Clause 60, amended at length by both of the parties today."]
    page = await revise(portal, artifact_id, build_docx(changed))
    assert notice(page) == "Applied: your check-in is version 2."
    text = words(page)
    assert "contract.docx: version 1 to 2" in text
    assert "Clause 60 of the agreement." in text
    assert "Clause 60, amended at length" in text
    assert "page 2, version 1" in text
    assert "page 2, version 2" in text
    assert f"/workspaces/w1/files/{artifact_id}/versions/2/pages/2?scale=0.5" in page.text
    history = words(await portal.get(f"/{artifact_id}"))
    assert "2 Alice just now revised changes download" in history
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    assert "revised" in [getattr(envelope.event, "summary", None) for envelope in await ws.read()]


async def test_the_check_in_form_sends_its_summary_before_the_file(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    page = (await portal.post(f"/{artifact_id}/check-out")).text
    form = page.split('enctype="multipart/form-data">', 1)[1].split("</form>", 1)[0]
    assert form.index('name="summary"') < form.index('name="file"')
    assert 'maxlength="1000"' in form


async def test_a_check_in_of_the_same_file_is_unchanged(portal: Portal) -> None:
    data = build_docx(PARAGRAPHS)
    artifact_id = await portal.api.upload(data)
    page = await revise(portal, artifact_id, data)
    assert notice(page).startswith("Unchanged: the file you uploaded is version 1 as it is")


async def test_a_check_in_after_the_file_moved_on_is_kept_as_a_proposal(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await propose(portal, artifact_id, person="carol")
    await portal.post(f"/{artifact_id}/check-out")
    accepted = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept", who=BOB)
    assert notice(accepted) == "Accepted: the file is now version 2."
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    lease = await portal.api.files.lease(ws, artifact_id)
    assert lease is not None
    checkout_id = _participant_id(lease.holder)
    page = await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", build_docx(PARAGRAPHS[:50]))},
    )
    assert notice(page) == (
        "Kept as a proposal: the file moved on to version 2 since you checked it out, so your "
        "check-in waits for someone to accept it. See what it changes"
    )
    assert "yours: someone else decides" in words(page)
    assert "Alice just now checked in contract.docx" in words(page)  # its generated summary
    mine = re.search(r"/proposals/(prp_[0-9a-f]+)\"", page.text)
    assert mine is not None, page.text
    own = words(await portal.get(f"/{artifact_id}/proposals/{mine.group(1)}"))
    assert "Why it is a proposal: checked in from check-out" in own
    refused = await portal.post(f"/{artifact_id}/proposals/{mine.group(1)}/accept")
    assert "someone other than its author" in technical(refused)


async def test_a_check_out_whose_lease_lapsed_can_still_be_checked_in(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    portal.api.clock.advance(timedelta(hours=8, minutes=1))
    page = await portal.get(f"/{artifact_id}")
    lapsed = "Your check-out of version 1 lapsed 1 minute ago (Mon 30 Nov 2026, 20:00 UTC)"
    assert lapsed in words(page)
    assert (
        "Check in your edited file all the same: it is applied if no one has changed the file "
        "since, or kept as a proposal for review if someone has. Or discard it."
    ) in words(page)
    assert "free: no one has it checked out" in words(page)
    assert "Check out" in words(page)  # a check-out afresh is offered beside it
    found = re.search(r'action="[^"]+/checkouts/(co_[0-9a-f]+)/check-in"', page.text)
    assert found is not None
    # Bob, who never checked it out, is offered nothing of Alice's.
    assert "lapsed" not in words(await portal.get(f"/{artifact_id}", who=BOB))
    changed = [*PARAGRAPHS[:-1], "Clause 60, signed late."]
    checked_in = await portal.post(
        f"/{artifact_id}/checkouts/{found.group(1)}/check-in",
        files={"file": ("contract.docx", build_docx(changed))},
    )
    assert notice(checked_in) == "Applied: your check-in is version 2."
    assert "lapsed" not in words(await portal.get(f"/{artifact_id}"))


async def test_a_lapsed_check_out_checked_in_after_someone_else_s_is_a_proposal(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    portal.api.clock.advance(timedelta(hours=8, minutes=1))
    await portal.post(f"/{artifact_id}/check-out", who=BOB)
    page = await portal.get(f"/{artifact_id}")
    assert "checked out by Bob; the lease ends" in words(page)
    assert "Your check-out of version 1 lapsed" in words(page)
    found = re.search(r'action="[^"]+/checkouts/(co_[0-9a-f]+)/discard"', page.text)
    assert found is not None
    discarded = await portal.post(f"/{artifact_id}/checkouts/{found.group(1)}/discard")
    assert notice(discarded) == (
        "Discarded: nothing was checked in, and someone else has it checked out."
    )
    assert "lapsed" not in words(await portal.get(f"/{artifact_id}"))


def _participant_id(holder: str) -> str:
    return holder.split(":")[1]


async def test_a_check_in_without_a_file_or_with_a_bad_one_is_refused_in_words(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    lease = await portal.api.files.lease(ws, artifact_id)
    assert lease is not None
    url = f"/{artifact_id}/checkouts/{_participant_id(lease.holder)}/check-in"
    empty = await portal.post(url, data={"summary": "nothing"})
    assert notice(empty) == "Choose the edited file to check in."
    junk = await portal.post(
        url, files={"file": ("contract.docx", b"not a package")}, data={"summary": "<b>mine</b>"}
    )
    assert notice(junk).startswith("That file isn't a Word document this can read")
    assert "zip" in technical(junk)
    assert 'value="&lt;b&gt;mine&lt;/b&gt;"' in junk.text
    nothing = await portal.post(url, files={"file": ("contract.docx", b"")})
    assert notice(nothing).startswith("The file you chose is empty: nothing was checked in.")
    assert "zip" in technical(nothing)
    portal.api.app.fail_next("crashed", "inspect")
    crashed = await portal.post(url, files={"file": ("contract.docx", build_docx(["x"]))})
    assert notice(crashed).startswith("The office app could not read or show the file")
    assert technical(crashed) == "app_failed (crashed): the fake app was told to fail (crashed)"
    left_empty = await portal.post(url, files={"file": ("", b"")}, data={"summary": "x"})
    assert notice(left_empty) == "Choose the edited file to check in."
    assert 'name="summary" maxlength="1000" value="x"' in left_empty.text  # kept
    two = await portal.post(
        url, files=[("file", ("a.docx", build_docx())), ("file", ("b.docx", build_docx()))]
    )
    assert notice(two).startswith("That didn't work, and nothing was changed.")
    assert technical(two) == "form_refused: the form has two files: send one at a time"
    assert len(await ws.revisions(artifact_id)) == 1


async def test_an_applied_check_in_whose_diff_fails_says_so(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    portal.api.app.fail_next("crashed", "render")
    page = await revise(portal, artifact_id, build_docx(PARAGRAPHS[:20]))
    assert page.status_code == 502
    assert "The office app could not read or show the file just now" in words(page)


# ─── diffs and proposals ──────────────────────────────────────────────────────


async def test_a_diff_page_shows_review_changes_and_pages_one_side_lacks(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(["Terms."], comment="A", insertion=" net"))
    await revise(portal, artifact_id, build_docx(PARAGRAPHS, comment="B"))
    await revise(portal, artifact_id, build_docx(["Terms."], comment="B"))
    grew = words(await portal.get(f"/{artifact_id}/diff?from=1&to=2"))
    assert "changed comment: A → B" in grew
    assert "removed change: net" in grew
    assert "page 2, version 2" in grew
    assert "no such page" in grew
    shrank = words(await portal.get(f"/{artifact_id}/diff?from=2&to=3"))
    assert "page 2, version 2" in shrank
    assert "no such page" in shrank
    same = words(await portal.get(f"/{artifact_id}/diff?from=3&to=3"))
    assert "a diff goes from an earlier version to a later one" in same


async def test_a_diff_with_nothing_to_show_says_so_and_a_long_one_says_it_was_cut(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await revise(portal, artifact_id, build_docx(PARAGRAPHS, comment="Fine"))
    quiet = words(await portal.get(f"/{artifact_id}/diff?from=1&to=2"))
    assert "No text changed." in quiet
    assert "No page looks different." in quiet
    assert "added comment: Fine" in quiet
    await revise(portal, artifact_id, build_docx([p.upper() for p in PARAGRAPHS]))
    cut = words(await portal.get(f"/{artifact_id}/diff?from=2&to=3"))
    assert "The text diff was cut at its size cap." in cut
    review = words(await portal.get(f"/{artifact_id}/diff?from=1&to=3"))
    assert "None changed." in review


async def test_a_proposal_page_shows_its_diff_and_lets_another_person_decide(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await propose(portal, artifact_id)
    file_page = await portal.get(f"/{artifact_id}", who=BOB)
    assert f"/proposals/{proposal_id}/accept" in file_page.text
    page = await portal.get(f"/{artifact_id}/proposals/{proposal_id}", who=BOB)
    text = words(page)
    assert "proposed on version 1" in text
    assert "By When Summary" in text
    assert "ran edit.replaceAll" in text
    assert "Art. 1 of the agreement." in text
    assert "page 1, proposed" in text
    assert f"/workspaces/w1/files/{artifact_id}/proposals/{proposal_id}/pages/1" in page.text
    # alice's own agent proposed it: she reviews it, and may decide as anyone else.
    own = await portal.get(f"/{artifact_id}/proposals/{proposal_id}")
    assert f"/proposals/{proposal_id}/accept" in own.text
    rejected = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/reject", who=BOB)
    assert notice(rejected) == "Rejected: the file is as it was."
    again = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept")
    assert notice(again) == "This proposal was rejected already."  # a repeated post: harmless
    gone = await portal.get(f"/{artifact_id}/proposals/{proposal_id}", who=BOB)
    assert gone.status_code == 404


@pytest.mark.timeout(300)
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # the office is the cost: one db
async def test_a_workbooks_and_a_decks_diffs_show_their_changed_cells_and_slides_in_tables(
    make_api: MakeApi,
) -> None:
    need_office()
    api = await make_api(
        app=LibreOffice(),
        types=[WordDocument, Spreadsheet, Presentation],
        deadline=90,
        render_deadline=90,
    )
    ws = await api.ws()
    book = (await api.files.upload(ws, "budget.xlsx", chunks(build_xlsx()))).artifact_id
    deck = (await api.files.upload(ws, "review.pptx", chunks(build_pptx(3)))).artifact_id
    agent = await api.ws(AgentActor(thread_id="thr_1", on_behalf_of=UserActor(id="alice")))
    cells = [
        {"command": "cell.set", "params": {"cell": "B3", "value": 450}},
        {
            "command": "cell.set",
            "params": {"cell": "Notes!A1", "value": "<script>x()</script> & co"},
        },
        {"command": "sheet.add", "params": {"name": "Q1 plan"}},
    ]
    proposed = await api.files.edit(
        agent, book, base_version=1, commands=[AppCommand.model_validate(c) for c in cells]
    )
    slides = [
        {"command": "slide.setTitle", "params": {"slide": 2, "text": "Costs & <risks>"}},
        {"command": "slide.move", "params": {"slide": 3, "to": 1}},
        {"command": "slide.insert", "params": {"title": "Next steps"}},
    ]
    await api.files.edit(
        ws, deck, base_version=1, commands=[AppCommand.model_validate(c) for c in slides]
    )

    async with portal_over(api) as portal:
        proposal = await portal.get(f"/{book}/proposals/{proposed.model_dump()['proposal_id']}")
        revision = await portal.get(f"/{deck}/diff?from=1&to=2")

    # The workbook's proposal: each changed cell by sheet and address, before and after, the
    # total recalculated, the new sheet named; a cell's text is shown as text, never as markup.
    assert table(proposal, "cells") == [
        ["Sheet", "Cell", "Before", "After"],
        ["Budget", "B3", "300", "450"],
        ["Budget", "B4", "1500 (=SUM(B2:B3))", "1650 (=SUM(B2:B3))"],
        ["Notes", "A1", "Reviewed by the board", "<script>x()</script> & co"],
    ]
    assert "sheet added: Q1 plan" in words(proposal)
    assert "&lt;script&gt;x()&lt;/script&gt; &amp; co" in proposal.text
    assert "<script>" not in proposal.text
    assert "Changed cells and sheets" in words(proposal)
    # The deck's revision: each changed slide with what happened and its text, changed words
    # marked, and the slides that look different, named as slides.
    assert table(revision, "slides") == [
        ["Slide", "Title", "Change", "Before", "After"],
        ["1", "Topic 3", "moved from 3", "", ""],
        [
            "3",
            "Costs & <risks>",
            "changed",
            "Topic 2 Point 2a Point 2b Notes: Say 2",
            "Costs & <risks> Point 2a Point 2b Notes: Say 2",
        ],
        ["4", "Next steps", "added", "", "Next steps"],
    ]
    assert "<ins>Costs &amp; &lt;risks&gt;</ins>" in revision.text
    assert "<del>Topic 2</del>" in revision.text
    said = words(revision)
    assert "Slides: 3 before, 4 after" in said
    assert "Slides that differ" in said
    assert "slide 4, version 2" in said
    assert "no such slide" in said


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", ""),
        ("GET", "/art_1"),
        ("GET", "/art_1/diff?from=1&to=2"),
        ("GET", "/art_1/proposals/prop_1"),
        ("POST", "/art_1/check-out"),
        ("POST", "/art_1/checkouts/co_1/extend"),
        ("POST", "/art_1/checkouts/co_1/discard"),
        ("POST", "/art_1/checkouts/co_1/check-in"),
        ("GET", "/art_1/checkouts/co_1/end"),
        ("POST", "/art_1/checkouts/co_1/end"),
        ("POST", "/art_1/proposals/prop_1/accept"),
    ],
)
async def test_every_page_asks_who_you_are_first(portal: Portal, method: str, path: str) -> None:
    response = await portal.client.request(method, portal.url(path))
    assert response.status_code == 401
    assert "Who are you?" in words(response)


# ─── helpers ──────────────────────────────────────────────────────────────────


def test_sizes_are_said_in_bytes_kib_or_mib() -> None:
    assert [_size(n) for n in (12, 2048, 3 * 1024 * 1024)] == ["12 bytes", "2.0 KiB", "3.0 MiB"]


def test_a_lease_holder_is_named_by_its_participant() -> None:
    assert _participant("checkout:co_1:user:alice") == "user:alice"
    assert _participant("edit:1234") == "edit:1234"


async def test_a_file_page_offers_the_editor_links_its_provider_gives(api: Api) -> None:
    seen: list[tuple[str, str, str]] = []

    async def links(ws: Workspace, artifact_id: str, file: NativeFile) -> list[EditorLink]:
        seen.append((ws.actor.participant, artifact_id, file.name))
        return [
            EditorLink("Open in <Word>", "/open/word", target="_blank"),
            EditorLink(
                "Edit in the browser", "/wopi/edit", method="post", fields=(("token", '"t&1"'),)
            ),
        ]

    app = FastAPI()
    app.include_router(files_router(api.files, api.workspaces, resolve_actor=resolve_actor))
    app.include_router(
        portal_router(
            api.files,
            api.workspaces,
            resolve_actor=resolve_actor,
            people=PEOPLE,
            workspace_ids=[WORKSPACE],
            editor_links=links,
        )
    )
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://portal.test") as client:
        page = await client.get(f"/portal/workspaces/{WORKSPACE}/files/{artifact_id}", headers=BOB)
    assert seen == [("user:bob", artifact_id, "contract.docx")]
    actions = page.text.split('class="actions editor-actions"', 1)[1].split("</div>", 1)[0]
    assert (
        '<a class="button" href="/open/word" target="_blank" rel="noopener">'
        "Open in &lt;Word&gt;</a>"
    ) in actions
    assert '<form method="post" action="/wopi/edit">' in actions
    assert '<input type="hidden" name="token" value="&#34;t&amp;1&#34;">' in actions
    assert "<button>Edit in the browser</button>" in actions
    # Without a provider, the block is empty.
    plain = await portal_get_plain(api, artifact_id)
    assert "editor-actions" not in plain


async def portal_get_plain(api: Api, artifact_id: str) -> str:
    app = FastAPI()
    app.include_router(files_router(api.files, api.workspaces, resolve_actor=resolve_actor))
    app.include_router(
        portal_router(
            api.files,
            api.workspaces,
            resolve_actor=resolve_actor,
            people=PEOPLE,
            workspace_ids=[WORKSPACE],
        )
    )
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://portal.test") as client:
        page = await client.get(f"/portal/workspaces/{WORKSPACE}/files/{artifact_id}", headers=BOB)
    return page.text


# ─── what a person trips on (issue 28) ────────────────────────────────────────


async def checkout_of(portal: Portal, artifact_id: str, who: str = "alice") -> str:
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id=who))
    lease = await portal.api.files.lease(ws, artifact_id)
    assert lease is not None
    return _participant_id(lease.holder)


async def test_every_form_redirects_and_a_repeated_post_is_harmless(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    first = await portal.client.post(
        portal.url(f"/{artifact_id}/check-out"), headers=ALICE, follow_redirects=False
    )
    assert (first.status_code, first.headers["location"]) == (303, portal.url(f"/{artifact_id}"))
    again = await portal.post(f"/{artifact_id}/check-out")
    assert notice(again).startswith(
        "You have this file checked out already, yours until Mon 30 Nov 2026, 20:00 UTC "
        "(in 8 hours): nothing was done again."
    )
    assert '<meta http-equiv="refresh"' not in again.text
    # A notice read once is gone; one forged is never shown.
    assert 'role="status"' not in (await portal.get(f"/{artifact_id}")).text
    portal.client.cookies.set("artifactr_notice", "eyJ4Ijo.forged", path="/portal")
    assert 'role="status"' not in (await portal.get(f"/{artifact_id}")).text
    unknown = await portal.post(f"/{artifact_id}/proposals/prp_0000000000000000/accept")
    assert notice(unknown).startswith("That is gone or was never here")


async def test_someone_else_s_check_out_is_ended_after_a_confirmation(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    checkout_id = await checkout_of(portal, artifact_id)
    page = await portal.get(f"/{artifact_id}", who=BOB)
    end = f"/{artifact_id}/checkouts/{checkout_id}/end"
    assert f'href="{portal.url(end)}">End Alice\'s check-out…</a>' in page.text
    portal.api.clock.advance(timedelta(minutes=61))
    confirm = words(await portal.get(end, who=BOB))
    assert "End Alice's check-out?" in confirm
    assert (
        "Alice checked out version 1; it is theirs until Mon 30 Nov 2026, 20:00 UTC (in 7 hours)"
    ) in confirm
    ended = await portal.post(end, who=BOB)
    assert notice(ended) == "You ended Alice's check-out: the file is free."
    assert "free: no one has it checked out" in words(ended)
    assert notice(await portal.get(end, who=BOB)).startswith("That check-out has ended already")
    assert (await portal.get("/art_0000000000000000/checkouts/co_1/end")).status_code == 404
    portal.api.clock.advance(timedelta(minutes=5))
    changed = [*PARAGRAPHS[:-1], "Clause 60, signed."]
    late = await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", build_docx(changed))},
    )
    assert notice(late) == (
        "Your check-out was ended by Bob 5 minutes ago (Mon 30 Nov 2026, 13:01 UTC), so your "
        "check-in was kept as a proposal on version 1: someone else decides whether to accept "
        "it. See what it changes"
    )


async def test_a_check_in_after_discarding_it_oneself_says_so(portal: Portal) -> None:
    data = build_docx(PARAGRAPHS)
    artifact_id = await portal.api.upload(data)
    await portal.post(f"/{artifact_id}/check-out")
    checkout_id = await checkout_of(portal, artifact_id)
    await portal.post(f"/{artifact_id}/checkouts/{checkout_id}/discard")
    page = await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", data)},
    )
    assert notice(page).startswith(
        "Your check-out was ended by you just now (Mon 30 Nov 2026, 12:00 UTC), so Unchanged:"
    )


async def test_an_outdated_proposal_offers_no_accept_and_says_what_to_do(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await propose(portal, artifact_id, person="carol")
    await revise(portal, artifact_id, build_docx(PARAGRAPHS[:50]))
    listed = await portal.get(f"/{artifact_id}", who=BOB)
    assert "outdated: it can't be accepted" in words(listed)
    assert f"/proposals/{proposal_id}/accept" not in listed.text
    assert f"/proposals/{proposal_id}/reject" in listed.text
    page = await portal.get(f"/{artifact_id}/proposals/{proposal_id}", who=BOB)
    text = words(page)
    assert "Outdated: this was proposed on version 1, and the file is now version 2." in text
    assert "Ask its author" in text
    assert f"/proposals/{proposal_id}/accept" not in page.text
    forced = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept", who=BOB)
    assert notice(forced).startswith("This proposal was made on an older version of the file")
    assert technical(forced).startswith("patch_failed: ")


async def test_a_stale_check_in_says_which_revisions_accepting_it_undoes(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await propose(portal, artifact_id, person="carol")
    await portal.post(f"/{artifact_id}/check-out")
    checkout_id = await checkout_of(portal, artifact_id)
    await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept", who=BOB)
    page = await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", build_docx(PARAGRAPHS[:50]))},
        data={"summary": "Shorter, as agreed"},
    )
    mine = re.search(r"/proposals/(prp_[0-9a-f]+)\"", page.text)
    assert mine is not None
    assert "Alice just now Shorter, as agreed" in words(page)  # what she wrote
    review = words(await portal.get(f"/{artifact_id}/proposals/{mine.group(1)}", who=BOB))
    assert (
        "Accepting this would undo version 2: the file checked in was made on version 1"
    ) in review
    assert "version 2 by" in review
    own = words(await portal.get(f"/{artifact_id}/proposals/{mine.group(1)}"))
    assert "Accepting this would undo version 2" in own
    await revise(portal, artifact_id, build_docx(PARAGRAPHS[:40]))
    stale = words(await portal.get(f"/{artifact_id}/proposals/{mine.group(1)}"))
    assert "To get your change in, check out version 3" in stale


# ─── an editor's session on the page (issue 38) ───────────────────────────────


@pytest.mark.parametrize(
    ("lock", "editor"),
    [("opaquelocktoken:0000-38", "a desktop editor"), ("W1", "the browser editor")],
)
async def test_the_page_says_which_editor_holds_the_file_and_what_ending_it_does(
    portal: Portal, lock: str, editor: str
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    held = await portal.api.files.lock(ws, artifact_id, lock=lock)
    theirs = words(await portal.get(f"/{artifact_id}", who=BOB))
    assert f"Open in {editor} by Alice, until" in theirs
    assert lock not in theirs
    mine = words(await portal.get(f"/{artifact_id}"))
    assert f"Open in {editor} by you" in mine
    assert "edits it has not saved stay in the editor" in mine
    confirm = words(await portal.get(f"/{artifact_id}/checkouts/{held.id}/end", who=BOB))
    assert f"Alice has the file open in {editor}" in confirm
    assert "its next save is kept as a proposal" in confirm or "next save is kept" in confirm


async def test_a_person_s_own_check_out_says_no_editor(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    assert "Open in" not in words(await portal.get(f"/{artifact_id}", who=BOB))


async def test_after_a_colleague_ends_your_check_out_the_page_says_so_and_takes_your_edit(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    await portal.post(f"/{artifact_id}/check-out")
    checkout_id = await checkout_of(portal, artifact_id)
    await portal.post(f"/{artifact_id}/checkouts/{checkout_id}/end", who=BOB)
    portal.api.clock.advance(timedelta(minutes=3))
    page = words(await portal.get(f"/{artifact_id}"))
    assert "Your check-out of version 1 was ended by Bob 3 minutes ago" in page
    assert "it is kept as a proposal on version 1" in page
    assert "was ended by" not in words(await portal.get(f"/{artifact_id}", who=BOB))
    changed = [*PARAGRAPHS[:-1], "Clause 60, amended."]
    late = await portal.post(
        f"/{artifact_id}/checkouts/{checkout_id}/check-in",
        files={"file": ("contract.docx", build_docx(changed))},
    )
    assert "your check-in was kept as a proposal on version 1" in notice(late)
    assert "was ended by Bob" not in words(await portal.get(f"/{artifact_id}"))
    # Your own discard, or one long past, is not news.
    await portal.post(f"/{artifact_id}/check-out")
    own = await checkout_of(portal, artifact_id)
    await portal.post(f"/{artifact_id}/checkouts/{own}/discard")
    assert "was ended by" not in words(await portal.get(f"/{artifact_id}"))
    await portal.post(f"/{artifact_id}/check-out")
    old = await checkout_of(portal, artifact_id)
    await portal.post(f"/{artifact_id}/checkouts/{old}/end", who=BOB)
    portal.api.clock.advance(timedelta(hours=9))
    assert "was ended by" not in words(await portal.get(f"/{artifact_id}"))
