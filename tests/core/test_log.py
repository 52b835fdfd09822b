"""Logging: one structured record for each state change and refusal, and none by default.

NativeFiles logs on ``artifactr.files.native``: an upload, an edit, a check-out, its extension,
who ended whose check-out, a check-in and its outcome, a collection, each refusal with its code
and each app failure with its kind. The fields are attributes of the record too; no record
carries a file's text. Unconfigured, the package's logger has only a NullHandler.
"""

import importlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from artifactr import UserActor
from artifactr.core import SystemActor

from artifactr.files import (
    AppCommand,
    ArtifactBusy,
)
from artifactr.files.core import log
from artifactr.files.core.errors import AppTimeout
from artifactr.files.core.log import LOGGER
from tests.documents import build_docx
from tests.world import world_in_memory

SECRET = "Confidential wording nobody logs."


async def once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def events(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "artifactr.files.native"]


def test_the_package_is_quiet_until_the_application_configures_logging() -> None:
    assert [type(handler) for handler in LOGGER.handlers] == [logging.NullHandler]
    importlib.reload(log)  # loaded again, as runpy or a test's reload does: still one handler
    assert [type(handler) for handler in LOGGER.handlers] == [logging.NullHandler]


async def test_each_state_change_and_refusal_is_one_record_with_its_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="artifactr.files")
    world = world_in_memory()
    app, files = world.app, world.files
    alice = await world.ws(UserActor(id="alice"))
    bob = alice.as_actor(UserActor(id="bob"))

    uploaded = await files.upload(alice, "contract.docx", once(build_docx([SECRET])))
    artifact_id = uploaded.artifact_id if uploaded.type == "applied" else ""
    replace = AppCommand(command="edit.replaceAll", params={"text": "nobody", "with": "no one"})
    await files.edit(alice, artifact_id, base_version=1, commands=[replace])
    checkout = await files.check_out(alice, artifact_id)
    await files.extend(alice, checkout.id)
    with pytest.raises(ArtifactBusy):
        await files.check_out(bob, artifact_id)
    await files.discard(bob, checkout.id)
    again = await files.check_out(alice, artifact_id)
    await files.check_in(alice, again.id, once(build_docx(["Signed."])))
    app.fail_next("timeout", "apply")
    with pytest.raises(AppTimeout):
        await world.with_deadline(0.01).edit(alice, artifact_id, base_version=3, commands=[replace])
    await files.collect(alice.as_actor(SystemActor()), grace=timedelta(0))

    found = events(caplog)
    assert [r.event for r in found] == [
        "uploaded",
        "edited",
        "checked_out",
        "extended",
        "refused",
        "discarded",
        "checked_out",
        "checked_in",
        "app_failed",
        "collected",
    ]
    (
        uploaded_record,
        edited,
        checked_out,
        _,
        refused,
        discarded,
        _,
        checked_in,
        failed,
        collected,
    ) = found
    assert (uploaded_record.artifact_id, uploaded_record.outcome) == (artifact_id, "applied")
    assert uploaded_record.actor == "user:alice"
    assert (edited.version, edited.outcome) == (2, "applied")
    assert checked_out.checkout_id == checkout.id
    assert checked_out.expires_at.endswith("Z")
    assert (refused.action, refused.code, refused.actor) == (
        "checked_out",
        "artifact_busy",
        "user:bob",
    )
    assert (discarded.actor, discarded.holder) == ("user:bob", checkout.holder)
    assert (checked_in.outcome, checked_in.version) == ("applied", 3)
    assert (failed.levelno, failed.kind, failed.action) == (logging.WARNING, "timeout", "edited")
    assert collected.removed >= 0
    assert checked_in.target == again.id
    assert f"checked_in tenant_id=t1 workspace_id=w1 actor=user:alice target={again.id}" in (
        checked_in.getMessage()
    )
    assert all(SECRET not in r.getMessage() and "nobody" not in r.getMessage() for r in found)
