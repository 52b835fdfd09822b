"""The app's switch: the Integrations port, and the gate that refuses native writes while off."""

from typing import Any

import pytest
from artifactr import MarkdownArtifact, UserActor, Workspaces
from artifactr.core import (
    Actor,
    EditArtifact,
    Forbidden,
    JsonPatch,
    ProposeChange,
    RespondToProposal,
)
from artifactr.workspace import Access, InMemoryStorage, Scope

from artifactr.files import DOCX, Blob, NotEnabled, Provenance, WordDocument
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate

KEY = "files:fake"


class Note(MarkdownArtifact, name="gate_note"):
    """A plain artifact no app governs."""


def key_of(kind: str) -> str | None:
    return KEY if kind == "word_document" else None


def manifest(name: str = "a.docx") -> WordDocument:
    return WordDocument(
        name=name,
        content=Blob(sha256="a" * 64, size=1, media_type=DOCX),
        fingerprint="b" * 64,
        provenance=Provenance(source="upload"),
    )


async def test_a_key_is_on_unless_its_default_or_the_workspace_says_otherwise() -> None:
    integrations = InMemoryIntegrations({"files:off": False})
    assert await integrations.is_enabled("t", "w", KEY)
    assert not await integrations.is_enabled("t", "w", "files:off")
    integrations.set("t", "w", KEY, enabled=False)
    integrations.set("t", "w", "files:off", enabled=True)
    assert not await integrations.is_enabled("t", "w", KEY)
    assert await integrations.is_enabled("t", "w", "files:off")
    assert await integrations.is_enabled("t", "other", KEY)


@pytest.fixture
def switch() -> InMemoryIntegrations:
    return InMemoryIntegrations()


@pytest.fixture
def storage() -> InMemoryStorage:
    return InMemoryStorage()


async def test_an_edit_of_a_native_file_is_refused_on_every_surface_while_the_app_is_off(
    storage: InMemoryStorage, switch: InMemoryIntegrations
) -> None:
    gate = integration_gate(switch, key_of, storage)
    workspaces = Workspaces(storage, types=[WordDocument, Note], authorize=gate)
    ws = await workspaces.open("t", "w", actor=UserActor(id="alice"))
    await ws.create(manifest(), artifact_id="doc")
    await ws.create(Note(text="hello"), artifact_id="note")
    switch.set("t", "w", KEY, enabled=False)
    rename = JsonPatch(ops=({"op": "replace", "path": "/name", "value": "b.docx"},))
    with pytest.raises(NotEnabled) as caught:
        await ws.commit(EditArtifact(artifact_id="doc", base_version=1, patch=rename))
    assert caught.value.payload() == {
        "type": "forbidden",
        "message": "files:fake is not enabled in this workspace",
        "integration": KEY,
    }
    with pytest.raises(NotEnabled):
        await ws.commit(
            ProposeChange(change=EditArtifact(artifact_id="doc", base_version=1, patch=rename))
        )
    with pytest.raises(NotEnabled):
        await ws.commit((await ws.get(WordDocument, "doc")).archive())
    # Reads go on, and other kinds are untouched.
    assert (await ws.get(WordDocument, "doc")).version == 1
    await ws.commit((await ws.get(Note, "note")).edit_text("hello", "hi"))
    switch.set("t", "w", KEY, enabled=True)
    assert (
        await ws.commit(EditArtifact(artifact_id="doc", base_version=1, patch=rename))
    ).type == ("applied")


async def test_accepting_a_proposal_on_a_native_file_is_refused_while_the_app_is_off(
    storage: InMemoryStorage, switch: InMemoryIntegrations
) -> None:
    gate = integration_gate(switch, key_of, storage)
    workspaces = Workspaces(storage, types=[WordDocument], authorize=gate)
    alice = await workspaces.open("t", "w", actor=UserActor(id="alice"))
    await alice.create(manifest(), artifact_id="doc")
    rename = JsonPatch(ops=({"op": "replace", "path": "/name", "value": "b.docx"},))
    proposed = await alice.commit(
        ProposeChange(change=EditArtifact(artifact_id="doc", base_version=1, patch=rename))
    )
    switch.set("t", "w", KEY, enabled=False)
    bob = alice.as_actor(UserActor(id="bob"))
    with pytest.raises(NotEnabled):
        await bob.commit(RespondToProposal(proposal_id=proposed.proposal_id, decision="accept"))


async def test_the_gate_asks_the_wrapped_authorize_first(
    storage: InMemoryStorage, switch: InMemoryIntegrations
) -> None:
    asked: list[str] = []

    async def only_reads(tenant: str, workspace: str | None, actor: Actor, access: Access) -> bool:
        asked.append(access.action)
        return access.action != "artifactr:edit_artifact"

    gate = integration_gate(switch, key_of, storage, authorize=only_reads)
    switch.set("t", "w", KEY, enabled=False)
    ws = await Workspaces(storage, types=[WordDocument], authorize=gate).open(
        "t", "w", actor=UserActor(id="alice")
    )
    await ws.create(manifest(), artifact_id="doc")
    rename = JsonPatch(ops=({"op": "replace", "path": "/name", "value": "b.docx"},))
    with pytest.raises(Forbidden) as caught:
        await ws.commit(EditArtifact(artifact_id="doc", base_version=1, patch=rename))
    assert not isinstance(caught.value, NotEnabled)
    assert "artifactr:edit_artifact" in asked


async def test_a_create_and_the_listing_of_workspaces_pass_the_gate(
    storage: InMemoryStorage, switch: InMemoryIntegrations
) -> None:
    gate = integration_gate(switch, key_of, storage)
    switch.set("t", "w", KEY, enabled=False)
    workspaces = Workspaces(storage, types=[WordDocument], authorize=gate)
    ws = await workspaces.open("t", "w", actor=UserActor(id="alice"))
    assert (await ws.create(manifest(), artifact_id="doc")).type == "applied"
    assert await gate("t", None, UserActor(id="alice"), Access(action="artifactr:read_workspaces"))
    lease = Access(action="artifactr:edit_artifact", artifact_id="missing")
    assert await gate("t", "w", UserActor(id="alice"), lease)


class CountedStorage(InMemoryStorage):
    """The in-memory storage, counting the gate's reads of an artifact."""

    def __init__(self) -> None:
        super().__init__()
        self.looked_up: list[str] = []

    async def artifact(self, scope: Scope, artifact_id: str) -> Any:
        self.looked_up.append(artifact_id)
        return await super().artifact(scope, artifact_id)


async def test_the_gate_reads_a_kind_once_keeps_the_last_few_and_asks_the_switch_each_time(
    switch: InMemoryIntegrations,
) -> None:
    storage = CountedStorage()
    gate = integration_gate(switch, key_of, storage, kept=2)
    ws = await Workspaces(storage, types=[WordDocument], authorize=gate).open(
        "t", "w", actor=UserActor(id="alice")
    )
    for name in ("one", "two", "three"):
        await ws.create(manifest(f"{name}.docx"), artifact_id=name)
    alice = UserActor(id="alice")

    async def edit(artifact_id: str) -> bool:
        access = Access(action="artifactr:edit_artifact", artifact_id=artifact_id)
        return await gate("t", "w", alice, access)

    storage.looked_up.clear()
    for artifact_id in ("one", "one", "two", "two", "missing", "missing"):
        assert await edit(artifact_id)
    assert storage.looked_up == ["one", "two", "missing", "missing"]  # a missing id is never kept
    assert await edit("three")  # the third kept lets the oldest go
    assert await edit("one")
    assert storage.looked_up[-2:] == ["three", "one"]
    switch.set("t", "w", KEY, enabled=False)
    with pytest.raises(NotEnabled):
        await edit("one")  # a kind kept still asks the switch
