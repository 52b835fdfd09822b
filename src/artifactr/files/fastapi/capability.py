"""Capability links: a short-lived token per person and file, carried in a URL (ADR-0018).

Desktop Word and LibreOffice open a URL and can send no header an application chooses, so the
portal hands a person a link whose path carries a token naming them, the tenant, the workspace
and the one file it opens, until when. :class:`Capabilities` mints and reads them: a JSON Web
Token (PyJWT, HMAC-SHA-256 with the application's secret) with its own audience, so a token
minted for another purpose never opens a file here. A token is never logged: the routes that
take one answer its refusal without it.

The token decides only *who is asking*: each request still opens the workspace as that person,
so the application's ``authorize`` and ``hidden`` hooks and the switch decide what they may do,
exactly as on every other route. A token that is forged, expired, for another purpose, or read
against another workspace or file is refused with :class:`~artifactr.fastapi.Unauthorized`.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import jwt
from artifactr.core import UserActor
from artifactr.fastapi import Unauthorized

from artifactr.files.core.clock import Clock, utc_now

LINK_TTL: Final = timedelta(hours=10)
"""How long a link opens its file: a working day, so a document left open is saved at evening."""

MIN_SECRET: Final = 32
"""The fewest bytes a signing secret may have (HMAC-SHA-256's output)."""

ALGORITHM: Final = "HS256"
"""The one algorithm a token is signed and read with; any other is refused."""

AUDIENCE: Final = "dav"
"""The audience a WebDAV link's token names: short, as every claim is (see :meth:`mint`)."""


@dataclass(frozen=True)
class Capability:
    """What a token says: who may open which file, until when."""

    tenant_id: str
    """The tenant."""
    workspace_id: str
    """The workspace the file is in."""
    artifact_id: str
    """The one file it opens."""
    actor: UserActor
    """The person it acts as."""
    expires_at: datetime
    """When it stops opening the file."""


class Capabilities:
    """Mints and reads capability tokens with one secret.

    Args:
        secret: The application's signing secret, at least :data:`MIN_SECRET` bytes; keep it
            out of the code and the log.
        ttl: How long a minted token lasts.
        audience: The purpose its tokens name; a token for another is refused.
        clock: The current time; UTC now if omitted.

    Raises:
        ValueError: If the secret is too short.
    """

    def __init__(
        self,
        secret: str | bytes,
        *,
        ttl: timedelta = LINK_TTL,
        audience: str = AUDIENCE,
        clock: Clock = utc_now,
    ) -> None:
        key = secret.encode() if isinstance(secret, str) else secret
        if len(key) < MIN_SECRET:
            raise ValueError(f"a signing secret needs at least {MIN_SECRET} bytes")
        self._key = key
        self._ttl = ttl
        self._audience = audience
        self._clock = clock

    def mint(self, tenant_id: str, workspace_id: str, artifact_id: str, actor: UserActor) -> str:
        """Return a token that opens one file as one person until the ttl runs out."""
        now = self._clock()
        # Short claims: the token is one segment of every URL the desktop app sends.
        claims = {
            "aud": self._audience,
            "sub": actor.id,
            "t": tenant_id,
            "w": workspace_id,
            "a": artifact_id,
            "exp": int((now + self._ttl).timestamp()),
        }
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def read(self, token: str) -> Capability:
        """Return what a token says, if this secret signed it and it has not expired.

        Raises:
            Unauthorized: If it is malformed, forged, for another audience, or expired.
        """
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=[ALGORITHM],
                audience=self._audience,
                options={
                    "verify_exp": False,
                    "require": ["aud", "sub", "t", "w", "a", "exp"],
                },
            )
        except jwt.PyJWTError as error:
            raise Unauthorized("the link's token is not valid: ask for a new link") from error
        expires_at = datetime.fromtimestamp(_number(claims["exp"]), self._clock().tzinfo)
        if expires_at <= self._clock():
            raise Unauthorized("the link has expired: ask for a new link")
        return Capability(
            tenant_id=str(claims["t"]),
            workspace_id=str(claims["w"]),
            artifact_id=str(claims["a"]),
            actor=UserActor(id=str(claims["sub"]), name=str(claims["sub"]).title()),
            expires_at=expires_at,
        )


def _number(value: object) -> float:
    if isinstance(value, int | float):
        return float(value)
    raise Unauthorized("the link's token is not valid: ask for a new link")
