"""Diffs over HTTP: a revision's and a proposal's changed text, review and pages (ADR-0011).

Each revision is made as people make them, by checking out and checking in real .docx bytes
(FakeApp lays out 45 paragraphs a page), and each answer is checked as a portal would show it:
the hunks, the comments added, the pages that differ and their renders. A hidden file answers
as a missing one; a second request renders nothing; the pure bounds are checked directly.
"""

import io
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest
from artifactr import AgentActor, UserActor
from artifactr.core import RespondToProposal, ValidationFailed
from PIL import Image

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import AppCommand, ReviewItem
from artifactr.files.native import CheckedIn
from artifactr.files.native.diff import (
    MAX_REGIONS,
    ChangedPage,
    DiffLimits,
    changed_pages,
    review_diff,
    text_diff,
)
from artifactr.files.native.regions import Region
from tests.documents import build_docx
from tests.fastapi.conftest import ALICE, BOB, WORKSPACE, Api, MakeApi

PNG = b"\x89PNG\r\n\x1a\n"
PARAGRAPHS = [f"Clause {n} of the agreement." for n in range(1, 101)]
"""A hundred paragraphs: three pages at FakeApp's 45 lines a page."""


class CountingApp(FakeApp):
    """FakeApp, counting its renders."""

    def __init__(self) -> None:
        super().__init__()
        self.renders = 0

    async def render(self, source: bytes, page: int, **options: Any) -> bytes:
        self.renders += 1
        return await super().render(source, page, **options)


async def revise(api: Api, artifact_id: str, data: bytes) -> int:
    checkout = await api.check_out(artifact_id)
    response = await api.check_in(artifact_id, checkout["id"], data)
    outcome = CheckedIn.model_validate(response.json())
    assert outcome.status == "applied", response.text
    return outcome.version


def changed(paragraphs: Sequence[str], at: int, text: str) -> list[str]:
    return [text if number == at else p for number, p in enumerate(paragraphs)]


async def diff(api: Api, artifact_id: str, before: int, after: int, who: dict[str, str] = ALICE):
    return await api.client.get(
        api.url(f"/{artifact_id}/diff"), params={"from": before, "to": after}, headers=who
    )


async def test_a_revision_diff_shows_the_changed_paragraph_with_its_context(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    await revise(api, artifact_id, build_docx(changed(PARAGRAPHS, 59, "Clause 60, amended.")))
    response = await diff(api, artifact_id, 1, 2)
    assert response.status_code == 200, response.text
    body = response.json()
    [hunk] = body["text"]["hunks"]
    assert (hunk["before_start"], hunk["before_count"]) == (58, 5)
    assert (hunk["after_start"], hunk["after_count"]) == (58, 5)
    assert [(line["op"], line["text"]) for line in hunk["lines"]] == [
        ("same", "Clause 58 of the agreement."),
        ("same", "Clause 59 of the agreement."),
        ("removed", "Clause 60 of the agreement."),
        ("added", "Clause 60, amended."),
        ("same", "Clause 61 of the agreement."),
        ("same", "Clause 62 of the agreement."),
    ]
    assert body["text"]["truncated"] is False
    assert (body["before_pages"], body["after_pages"]) == (3, 3)


async def test_only_the_page_whose_render_differs_is_listed_with_both_renders(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    # A longer paragraph 60 draws a longer bar on page two only.
    longer = "Clause 60 of the agreement, with a much longer sentence than it had before."
    await revise(api, artifact_id, build_docx(changed(PARAGRAPHS, 59, longer)))
    body = (await diff(api, artifact_id, 1, 2)).json()
    [page] = body["pages"]
    assert page["page"] == 2
    assert body["pages_compared"] == 3
    assert page["before_url"].endswith(f"/files/{artifact_id}/versions/1/pages/2?scale=0.5")
    assert page["after_url"].endswith(f"/files/{artifact_id}/versions/2/pages/2?scale=0.5")
    before = await api.client.get(page["before_url"], headers=ALICE)
    after = await api.client.get(page["after_url"], headers=ALICE)
    assert before.content.startswith(PNG)
    assert after.content.startswith(PNG)
    assert before.content != after.content
    # Where the renders differ: a box on page two, not the whole page.
    region = page["region"]
    assert 0 < region["height"] < region["page_height"]
    assert 0 < region["width"] <= region["page_width"]


async def test_a_page_only_one_revision_has_differs_with_no_render_for_the_other(
    api: Api,
) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    await revise(api, artifact_id, build_docx([*PARAGRAPHS, *PARAGRAPHS[:40]]))
    body = (await diff(api, artifact_id, 1, 2)).json()
    assert (body["before_pages"], body["after_pages"]) == (3, 4)
    assert [p["page"] for p in body["pages"]] == [3, 4]
    last = body["pages"][-1]
    assert (last["page"], last["before_url"], last["region"]) == (4, None, None)
    assert last["after_url"].endswith("/versions/2/pages/4?scale=0.5")


async def test_comments_added_and_tracked_changes_removed_are_listed(api: Api) -> None:
    artifact_id = await api.upload(build_docx(["Terms.", "Price."], insertion=" net"))
    await revise(api, artifact_id, build_docx(["Terms.", "Price."], comment="Check the price"))
    review = (await diff(api, artifact_id, 1, 2)).json()["review"]
    assert [(item["kind"], item["text"]) for item in review["added"]] == [
        ("comment", "Check the price")
    ]
    assert [(item["kind"], item["change"]) for item in review["removed"]] == [("change", "insert")]
    assert review["changed"] == []


async def test_a_second_diff_renders_nothing(make_api: MakeApi) -> None:
    app = CountingApp()
    api = await make_api(app=app)
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    await revise(api, artifact_id, build_docx(changed(PARAGRAPHS, 0, "Clause 1, amended.")))
    first = await diff(api, artifact_id, 1, 2)
    rendered = app.renders
    assert rendered == 6  # each of three pages, once per revision
    second = await diff(api, artifact_id, 1, 2)
    assert second.json() == first.json()
    assert app.renders == rendered


async def test_a_hidden_file_is_answered_as_a_missing_one(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    await revise(api, artifact_id, build_docx(PARAGRAPHS[:10]))
    api.hidden["user:bob"] = {artifact_id}
    hidden = await diff(api, artifact_id, 1, 2, who=BOB)
    missing = await diff(api, "art_0000000000000000", 1, 2, who=BOB)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"]["type"] == "not_found"
    assert (await diff(api, artifact_id, 1, 3)).status_code == 404


async def test_a_diff_goes_forwards_between_two_versions(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    backwards = await diff(api, artifact_id, 2, 1)
    assert backwards.status_code == 422
    assert backwards.json()["detail"]["type"] == "validation_failed"
    assert (await diff(api, artifact_id, 1, 1)).status_code == 422


# ─── proposals ────────────────────────────────────────────────────────────────


async def agent_proposal(api: Api, artifact_id: str) -> str:
    agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice"))
    ws = await api.workspaces.open("t1", WORKSPACE, actor=agent)
    commands = [
        AppCommand(command="edit.replaceAll", params={"text": "Clause 2 ", "with": "Article 2 "}),
        AppCommand(command="select.text", params={"text": "Article 2"}),
        AppCommand(command="review.newComment", params={"text": "Renamed"}),
    ]
    proposed = await api.files.edit(ws, artifact_id, base_version=1, commands=commands)
    return proposed.model_dump()["proposal_id"]


async def test_a_proposal_diff_shows_what_accepting_it_would_change(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    proposal_id = await agent_proposal(api, artifact_id)
    response = await api.client.get(
        api.url(f"/{artifact_id}/proposals/{proposal_id}/diff"), headers=BOB
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["before_version"], body["after_version"]) == (1, None)
    assert body["proposal_id"] == proposal_id
    [hunk] = body["text"]["hunks"]
    assert [line["text"] for line in hunk["lines"] if line["op"] != "same"] == [
        "Clause 2 of the agreement.",
        "Article 2 of the agreement.",
    ]
    assert [item["text"] for item in body["review"]["added"]] == ["Renamed"]
    [page] = body["pages"]
    assert page["page"] == 1
    assert page["before_url"].endswith("/versions/1/pages/1?scale=0.5")
    assert f"/proposals/{proposal_id}/pages/1?scale=0.5" in page["after_url"]
    png = await api.client.get(page["after_url"], headers=BOB)
    assert png.status_code == 200
    assert png.content.startswith(PNG)
    again = await api.client.get(
        page["after_url"], headers={**BOB, "if-none-match": png.headers["etag"]}
    )
    assert again.status_code == 304


async def test_a_proposal_is_found_only_pending_and_under_its_own_visible_file(
    api: Api,
) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    other = await api.upload(build_docx(PARAGRAPHS[:3]))
    proposal_id = await agent_proposal(api, artifact_id)

    async def status(artifact: str, proposal: str, who: dict[str, str] = BOB) -> int:
        url = api.url(f"/{artifact}/proposals/{proposal}/diff")
        return (await api.client.get(url, headers=who)).status_code

    assert await status(other, proposal_id) == 404
    assert await status(artifact_id, "prop_missing") == 404
    page = api.url(f"/{other}/proposals/{proposal_id}/pages/1")
    assert (await api.client.get(page, headers=BOB)).status_code == 404
    api.hidden["user:bob"] = {artifact_id}
    assert await status(artifact_id, proposal_id) == 404
    api.hidden.clear()
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="bob"))
    await ws.commit(RespondToProposal(proposal_id=proposal_id, decision="reject"))
    assert await status(artifact_id, proposal_id) == 404


async def test_a_proposal_page_is_refused_out_of_range(api: Api) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    proposal_id = await agent_proposal(api, artifact_id)
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="bob"))
    with pytest.raises(Exception, match="page can't be rendered"):
        await api.files.render_proposal(ws, artifact_id, proposal_id, 0)


# ─── bounds ───────────────────────────────────────────────────────────────────


def test_the_text_diff_is_cut_at_its_size_cap_and_says_so() -> None:
    before = "\n".join(f"paragraph {n}" for n in range(100))
    after = "\n".join(f"paragraph {n}, changed" for n in range(100))
    whole = text_diff(before, after)
    cut = text_diff(before, after, limits=DiffLimits(text_chars=200))
    assert whole.truncated is False
    assert cut.truncated is True
    assert sum(len(line.text) for hunk in cut.hunks for line in hunk.lines) <= 200


def test_the_text_diff_is_cut_after_its_first_hunk_that_overflows() -> None:
    before = "\n".join(f"p{n}" for n in range(40))
    after = before.replace("p5\n", "p5 changed\n").replace("p30\n", "p30 changed\n")
    cut = text_diff(before, after, limits=DiffLimits(text_chars=25))
    assert cut.truncated is True
    assert len(cut.hunks) == 1


def test_the_text_diff_compares_a_bounded_number_of_changed_paragraphs() -> None:
    before = "\n".join(f"old {n}" for n in range(50))
    after = "\n".join(f"new {n}" for n in range(50))
    cut = text_diff(before, after, limits=DiffLimits(paragraphs=10))
    assert cut.truncated is True
    removed = [line for hunk in cut.hunks for line in hunk.lines if line.op == "removed"]
    assert len(removed) == 10


def test_equal_texts_have_no_hunks() -> None:
    assert text_diff("a\nb", "a\nb").hunks == ()


def test_review_lists_are_capped_and_a_changed_item_shows_both_sides() -> None:
    old = [ReviewItem(kind="comment", id=str(n), text="old") for n in range(5)]
    new = [ReviewItem(kind="comment", id=str(n), text="new") for n in range(5)]
    capped = review_diff(old, new, limits=DiffLimits(review=2))
    assert capped.truncated is True
    assert [(c.before.text, c.after.text) for c in capped.changed] == [("old", "new")] * 2
    assert review_diff(old, old).changed == ()


async def test_pages_past_the_cap_are_left_uncompared() -> None:
    rendered: list[int] = []

    async def pages(last: int) -> AsyncGenerator[bytes]:
        for page in range(1, last + 1):
            rendered.append(page)
            yield b"same"

    found, compared = await changed_pages((600, pages(500)), (600, pages(500)), limit=500)
    assert (found, compared) == ([], 500)
    assert max(rendered) == 500
    only_after, _ = await changed_pages((0, pages(0)), (1, pages(0)))
    assert only_after == [ChangedPage(page=1, before=False, after=True)]


async def test_the_first_differing_pages_say_where_they_differ() -> None:
    def png(dot: bool) -> bytes:
        image = Image.new("RGB", (8, 8), "white")
        if dot:
            image.putpixel((3, 5), (0, 0, 0))
        out = io.BytesIO()
        image.save(out, "PNG")
        return out.getvalue()

    async def pages(last: int, dot: bool) -> AsyncGenerator[bytes]:
        for _ in range(last):
            yield png(dot)

    count = MAX_REGIONS + 2
    found, _ = await changed_pages((count, pages(count, False)), (count, pages(count, True)))
    dot = Region(x=3, y=5, width=1, height=1, page_width=8, page_height=8)
    assert [page.region for page in found] == [dot] * MAX_REGIONS + [None, None]


async def test_a_revisions_pages_are_rendered_in_turn_and_a_range_past_the_last_is_refused(
    api: Api,
) -> None:
    artifact_id = await api.upload(build_docx(PARAGRAPHS))
    ws = await api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    with pytest.raises(ValidationFailed):
        await anext(api.files.pages(ws, artifact_id, 1, 2**31, scale=1.0))
    rendered = [png async for png in api.files.pages(ws, artifact_id, 1, 2, scale=0.5)]
    assert [png.startswith(PNG) for png in rendered] == [True, True]
