"""A file's decided proposals, read from the log (ADR-0035): the SQL port and the workspace's.

Who wrote each proposal, who accepted or rejected it, when, and the version accepting it made,
newest first; those a page of revisions was accepted from, by their ids; another file's never.
"""

from artifactr import UserActor
from artifactr.core import RespondToProposal
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.history import WorkspaceHistory
from artifactr.files.sql import SqlHistory
from tests.scale import proposals
from tests.world import world_on

BOB = UserActor(id="bob", name="Bob")


async def test_decided_proposals_say_who_wrote_and_who_decided_each_newest_first(
    engine: AsyncEngine,
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    doc = await world.upload()
    other = await world.upload(name="other.docx")
    first, second, waiting = await proposals(ws, doc, 3)
    elsewhere = (await proposals(ws, other, 1))[0]
    bob = await world.ws(BOB)
    await bob.commit(RespondToProposal(proposal_id=first, decision="accept"))
    await bob.commit(RespondToProposal(proposal_id=second, decision="reject", reason="no"))
    await bob.commit(RespondToProposal(proposal_id=elsewhere, decision="reject"))
    sql, through = world.files.history, WorkspaceHistory()
    assert isinstance(sql, SqlHistory)

    for history in (sql, through):
        decided = await history.decisions(ws, doc)
        assert [d.proposal_id for d in decided] == [second, first]  # newest first, this file's
        rejected, accepted = decided
        assert (rejected.decision, rejected.version, rejected.reason) == ("reject", None, "no")
        assert (accepted.decision, accepted.version) == ("accept", 2)
        assert accepted.proposed_by.participant == ws.actor.participant
        assert accepted.decided_by.participant == "user:bob"
        assert accepted.at <= rejected.at
        assert [d.proposal_id for d in await history.decisions(ws, doc, limit=1)] == [second]
        named = await history.decisions(ws, doc, [first, waiting, elsewhere])
        assert [d.proposal_id for d in named] == [first]
        assert await history.decisions(ws, doc, []) == []
    assert await sql.decisions(ws, doc) == await through.decisions(ws, doc)
