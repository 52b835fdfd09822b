"""Who may decide a proposal, as the portal offers it, and decided proposals in the history.

artifactr refuses a proposal's author, looking through ``on_behalf_of``: a person's own MCP
client is the person, so someone else decides what it proposed; a thread's agent run for a
person is not, so the person decides it (ADR-0035). The portal offers Accept and Reject only to
whoever may decide, says why not in words, and its history names both who wrote an accepted
revision and who accepted it, and keeps decided proposals in view.
"""

from collections.abc import AsyncIterator

import pytest
from artifactr import AgentActor, ExternalAgentActor, UserActor
from artifactr.core import (
    ArchiveArtifact,
    EvaluatorActor,
    NotFound,
    Proposal,
    ValidationFailed,
)

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import FileTooLarge
from artifactr.files.core.manifests import DOCX
from artifactr.files.fastapi.portal_words import (
    SOMEONE_ELSE,
    YOUR_ASSISTANT,
    YOURS,
    for_people,
    upload_refusal,
    why_not_decide,
)
from tests.documents import build_docx
from tests.fastapi.conftest import AGENT, BOB, RITA, WORKSPACE, Api
from tests.fastapi.test_portal import PARAGRAPHS, Portal, notice, portal_over, technical, words

ALICE_S_ASSISTANT = ExternalAgentActor(
    client_id="mcp", name="Alice's assistant", on_behalf_of=UserActor(id="alice")
)
"""Alice's own MCP client: artifactr counts it as alice."""

ALICE_S_AGENT = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="alice"))
"""A thread's agent run for alice: not alice."""


@pytest.fixture
async def portal(api: Api) -> AsyncIterator[Portal]:
    async with portal_over(api) as opened:
        yield opened


async def proposed_by(
    portal: Portal, artifact_id: str, actor: ExternalAgentActor | AgentActor
) -> str:
    ws = await portal.api.workspaces.open("t1", WORKSPACE, actor=actor)
    commands = [AppCommand(command="edit.replaceAll", params={"text": "Clause", "with": "Art."})]
    outcome = await portal.api.files.edit(ws, artifact_id, base_version=1, commands=commands)
    assert outcome.type == "proposed"
    return outcome.model_dump()["proposal_id"]


async def test_what_a_person_s_assistant_proposed_is_decided_by_someone_else(
    portal: Portal,
) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await proposed_by(portal, artifact_id, ALICE_S_ASSISTANT)
    accept = f"/proposals/{proposal_id}/accept"
    # Alice: no Accept or Reject where it could only be refused, and the words why.
    for page in (
        await portal.get(f"/{artifact_id}"),
        await portal.get(f"/{artifact_id}/proposals/{proposal_id}"),
    ):
        assert accept not in page.text
        assert f"/proposals/{proposal_id}/reject" not in page.text
        assert "Alice's assistant" in words(page)
        assert "someone other than you decides what your assistant proposed" in words(page)
    # A post all the same (an old tab) is refused in the same words, and nothing is decided.
    refused = await portal.post(f"/{artifact_id}{accept}")
    assert notice(refused) == (
        "Someone other than you decides what your assistant proposed. Nothing was decided."
    )
    assert "someone other than its author" in technical(refused)
    assert "None yet." in words(await portal.get(f"/{artifact_id}"))
    # Bob may decide: he is offered Accept, and the history names both.
    assert accept in (await portal.get(f"/{artifact_id}", who=BOB)).text
    accepted = await portal.post(f"/{artifact_id}{accept}", who=BOB)
    assert notice(accepted) == "Accepted: the file is now version 2."
    page = words(await portal.get(f"/{artifact_id}"))
    assert "2 written by Alice's assistant, accepted by Bob" in page
    assert "Decided proposals Written by Decision When Reason" in page
    assert "Alice's assistant accepted by Bob as version 2 just now —" in page


async def test_someone_the_workspace_refuses_the_decision_is_told_so(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await proposed_by(portal, artifact_id, ALICE_S_AGENT)
    page = await portal.get(f"/{artifact_id}", who=RITA)
    assert "you may not decide proposals on this file" in words(page)
    refused = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept", who=RITA)
    assert notice(refused) == "You may not do that to this file: ask someone who may, or its owner."


async def test_a_person_decides_what_their_thread_s_agent_proposed(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await proposed_by(portal, artifact_id, ALICE_S_AGENT)
    page = await portal.get(f"/{artifact_id}")
    assert f"/proposals/{proposal_id}/accept" in page.text
    assert "someone other than" not in words(page)
    accepted = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/accept")
    assert notice(accepted) == "Accepted: the file is now version 2."
    history = words(await portal.get(f"/{artifact_id}", who=BOB))
    assert "accepted by Alice as version 2" in history


async def test_a_rejected_proposal_stays_in_the_history_with_who_and_why(portal: Portal) -> None:
    artifact_id = await portal.api.upload(build_docx(PARAGRAPHS))
    proposal_id = await proposed_by(portal, artifact_id, ALICE_S_ASSISTANT)
    rejected = await portal.post(f"/{artifact_id}/proposals/{proposal_id}/reject", who=BOB)
    assert notice(rejected) == "Rejected: the file is as it was."
    page = words(await portal.get(f"/{artifact_id}"))
    assert "Pending proposals None." in page
    assert "Alice's assistant rejected by Bob just now —" in page
    assert "written by" not in page.split("Decided proposals")[0]  # version 1 is alice's own


def test_the_words_why_not_come_from_artifactr_s_own_rule() -> None:
    alice = UserActor(id="alice")

    def by(author: UserActor | ExternalAgentActor | AgentActor) -> Proposal:
        return Proposal(
            id="prp_1",
            change=ArchiveArtifact(artifact_id="art_1", base_version=1),
            proposed_by=author,
        )

    assert why_not_decide(alice, by(alice)) == YOURS
    assert why_not_decide(alice, by(ALICE_S_ASSISTANT)) == YOUR_ASSISTANT
    assert why_not_decide(alice, by(ALICE_S_AGENT)) == ""
    assert why_not_decide(UserActor(id="bob"), by(ALICE_S_ASSISTANT)) == ""
    # Anyone else artifactr counts as the author: an agent run for her, on her own proposal.
    assert why_not_decide(ALICE_S_AGENT, by(alice)) == SOMEONE_ELSE
    assert why_not_decide(EvaluatorActor(name="judge", version="1"), by(alice)) == SOMEONE_ELSE


# ─── adding a file ────────────────────────────────────────────────────────────


async def test_a_person_adds_a_file_from_the_file_list_named_and_kinded_by_itself(
    portal: Portal,
) -> None:
    listing = await portal.get()
    assert 'enctype="multipart/form-data"' in listing.text
    assert "Upload" in words(listing)
    added = await portal.post("", files={"file": ("terms.docx", build_docx(PARAGRAPHS))})
    assert notice(added) == "Added terms.docx, a Word document (.docx), as version 1."
    assert "<h1>terms.docx</h1>" in added.text
    # A viewer may not add files: no form is offered.
    assert "Add a file" not in (await portal.get(who=RITA)).text


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        ({"file": ("notes.txt", b"plain words", "text/plain")}, "That file can't be added: "),
        ({"file": ("bad.docx", b"not a zip at all")}, "That file isn't one this can read"),
        ({"file": ("empty.docx", b"")}, "The file you chose is empty: nothing was added."),
        ({}, "Choose a file to add, then Upload."),
    ],
)
async def test_a_refused_upload_says_why_on_the_file_list_and_adds_nothing(
    portal: Portal, sent: dict[str, tuple[str, bytes] | tuple[str, bytes, str]], said: str
) -> None:
    form = {"files": sent} if sent else {"data": {"other": "x"}}
    refused = await portal.post("", **form)
    assert notice(refused).startswith(said), notice(refused)
    assert technical(refused)
    assert "No files yet." in words(refused)


async def test_an_agent_s_upload_through_the_portal_is_kept_as_a_proposal(portal: Portal) -> None:
    kept = await portal.post("", who=AGENT, files={"file": ("a.docx", build_docx(PARAGRAPHS))})
    assert notice(kept) == "Kept as a proposal: someone decides whether to add it."


def test_an_upload_too_large_or_of_another_kind_is_said_for_a_person() -> None:
    kinds = {DOCX}
    assert upload_refusal(FileTooLarge(2 * 1024 * 1024), kinds).words == (
        "That file is too large: this takes files up to 2 MiB. Nothing was added: choose a Word "
        "document (.docx)."
    )
    assert upload_refusal(ValidationFailed("odd", []), kinds).words.startswith(
        "That file can't be added: odd."
    )
    assert upload_refusal(NotFound("artifact", "x"), kinds) == for_people(NotFound("artifact", "x"))
