"""Log: one structured record for each state change and each refusal, through ``logging``.

Loggers are under ``artifactr.files``, which has a ``NullHandler`` only, so records go where the
application sends them. A record's message is the event and its fields (``checked_in
artifact_id=art_1 ...``), and the fields are its attributes too. A state change is INFO, a
refusal INFO with its ``code``, an app's failure WARNING with its ``kind``. Records never carry a
file's content, text or a command's parameters.
"""

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Concatenate, Final

from artifactr.core import Rejection
from artifactr.workspace import Workspace

from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import AppFailure

LOGGER: Final = logging.getLogger("artifactr.files")
"""The package's logger: every other one is its child."""
if not any(isinstance(handler, logging.NullHandler) for handler in LOGGER.handlers):
    # Once, however often the module is loaded again (a test's reload, runpy).
    LOGGER.addHandler(logging.NullHandler())

NATIVE: Final = logging.getLogger("artifactr.files.native")
"""The logger of :class:`~artifactr.files.NativeFiles`' state changes and refusals."""

Field = str | int | None
"""A record's field: an id, a version, a count, a time (as RFC 3339) or nothing."""

_FIELDS: Final = (
    "type",
    "status",
    "artifact_id",
    "version",
    "proposal_id",
    "id",
    "base_version",
    "holder",
    "expires_at",
)
"""The fields a result may give a record, as its model names them."""


def record(
    event: str, ws: Workspace, fields: Mapping[str, Field], *, level: int = logging.INFO
) -> None:
    """Log one event as the handle's actor, in its tenant and workspace, with ``fields``."""
    if not NATIVE.isEnabledFor(level):
        return
    given = {
        "event": event,
        "tenant_id": ws.tenant_id,
        "workspace_id": ws.workspace_id,
        "actor": ws.actor.participant,
        **{key: value for key, value in fields.items() if value is not None},
    }
    text = " ".join(f"{key}={value}" for key, value in given.items() if key != "event")
    NATIVE.log(level, "%s %s", event, text, extra=given)


def fields_of(result: object) -> dict[str, Field]:
    """Return what a result says about the change: ids, versions, outcome, expiry.

    A result that carries a ``checkout`` (a lock operation's) says what its check-out says.
    """
    if isinstance(result, int):
        return {"removed": result}
    result = getattr(result, "checkout", result)
    found: dict[str, Field] = {}
    for name in _FIELDS:
        value = getattr(result, name, None)
        key = {"id": "checkout_id", "type": "outcome", "status": "outcome"}.get(name, name)
        if isinstance(value, datetime):
            found[key] = rfc3339(value)
        elif isinstance(value, str | int):
            found[key] = value
    return found


def logged[**P, R](
    event: str,
) -> Callable[
    [Callable[Concatenate[Any, Workspace, P], Awaitable[R]]],
    Callable[Concatenate[Any, Workspace, P], Awaitable[R]],
]:
    """Return a decorator that logs a method's outcome as ``event``, or its refusal or failure.

    The method takes the caller's handle first; the argument after it (a file's name, an
    artifact or a check-out) is the record's ``target``. A method that returns nothing logs its
    own record when it succeeds, since only it knows what it changed.
    """

    def decorate(
        method: Callable[Concatenate[Any, Workspace, P], Awaitable[R]],
    ) -> Callable[Concatenate[Any, Workspace, P], Awaitable[R]]:
        @functools.wraps(method)
        async def wrapper(self: Any, ws: Workspace, /, *args: P.args, **kwargs: P.kwargs) -> R:
            target: Field = str(args[0]) if args else None
            try:
                result = await method(self, ws, *args, **kwargs)
            except Rejection as refusal:
                record("refused", ws, {"action": event, "target": target, "code": refusal.code})
                raise
            except AppFailure as failure:
                fields = {"action": event, "target": target, "kind": failure.kind}
                record("app_failed", ws, fields, level=logging.WARNING)
                raise
            if result is not None:
                record(event, ws, {"target": target, **fields_of(result)})
            return result

        return wrapper

    return decorate
