"""WOPI access tokens: one person, one file, signed with the deployment's secret (ADR-0016).

An editor (Collabora, OnlyOffice, Office for the web) reaches the WOPI host with nothing but
the ``access_token`` the host gave it. :func:`mint_access_token` makes one for a person and a
file: a JSON Web Token signed with HMAC-SHA256 (PyJWT) over the deployment's secret, carrying
the tenant, workspace and artifact, the person's id and name, and its expiry. WOPI wants that
expiry as ``access_token_ttl``, in milliseconds since the epoch, which :class:`AccessToken`
carries beside the token.

:func:`read_access_token` refuses a token that is malformed, forged (another secret, another
algorithm), expired, or made for another file or by another issuer, with
:class:`AccessTokenRefused` (401); what it names is still decided by the workspace's own
hooks, like every other request. A token is a bearer secret: the package never logs one, and
no refusal repeats it.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Final

import jwt
from artifactr import UserActor
from artifactr.core import Rejection

from artifactr.files.core.clock import Clock, utc_now

ISSUER: Final = "artifactr.files/wopi"
"""Who signs the tokens, checked on every read: a token for anything else is refused."""

ALGORITHM: Final = "HS256"
"""The one algorithm a token may be signed with."""

MIN_SECRET: Final = 32
"""The fewest bytes a deployment's secret may have (RFC 7518 §3.2: a key as long as the hash)."""

TOKEN_LIFETIME: Final = timedelta(hours=10)
"""How long a token lasts by default: a working day in the editor."""

MAX_TOKEN: Final = 4096
"""The most characters a token may have: a longer one is refused unread."""


class AccessTokenRefused(Rejection):
    """An access token that is malformed, forged, expired, or for another file (401).

    Its code is ``access_token_refused``; the message says why, never the token.
    """

    code: ClassVar[str] = "access_token_refused"


@dataclass(frozen=True)
class AccessToken:
    """A minted token and when it lapses, as an editor's form posts them."""

    token: str
    """The ``access_token``."""
    ttl: int
    """The ``access_token_ttl``: its expiry, in milliseconds since the epoch."""


@dataclass(frozen=True)
class TokenGrant:
    """What a valid token names: where, which file, and who."""

    tenant_id: str
    """The tenant."""
    workspace_id: str
    """The workspace."""
    artifact_id: str
    """The file."""
    person: UserActor
    """The person it was minted for."""
    expires_at: datetime
    """When it lapses."""


def _key(secret: str | bytes) -> bytes:
    key = secret.encode() if isinstance(secret, str) else secret
    if len(key) < MIN_SECRET:
        raise ValueError(f"a WOPI secret has at least {MIN_SECRET} bytes")
    return key


def mint_access_token(
    secret: str | bytes,
    *,
    tenant_id: str,
    workspace_id: str,
    artifact_id: str,
    person: UserActor,
    lifetime: timedelta = TOKEN_LIFETIME,
    clock: Clock = utc_now,
) -> AccessToken:
    """Return an access token for ``person`` to edit or view one file, and its ``ttl``.

    Whether the person may view or edit is decided on each request by the workspace's hooks,
    not by the token: a token only says who and which file.

    Raises:
        ValueError: If the secret is shorter than :data:`MIN_SECRET` bytes.
    """
    now = clock()
    expires = now + lifetime
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": person.id,
        "name": person.name or person.id,
        "tid": tenant_id,
        "wid": workspace_id,
        "aid": artifact_id,
        "iat": int(now.timestamp()),
        "exp": int(expires.timestamp()),
    }
    token = jwt.encode(claims, _key(secret), algorithm=ALGORITHM)
    return AccessToken(token=token, ttl=int(expires.timestamp()) * 1000)


def read_access_token(
    secret: str | bytes, token: str, *, artifact_id: str, clock: Clock = utc_now
) -> TokenGrant:
    """Return what a token names, if it is ours, current and for ``artifact_id``.

    Raises:
        AccessTokenRefused: If it is missing, malformed, forged, expired or for another file.
    """
    if not token or len(token) > MAX_TOKEN:
        raise AccessTokenRefused("the access token is missing or too long")
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            _key(secret),
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            options={"require": ["exp", "iss", "sub", "tid", "wid", "aid"], "verify_exp": False},
        )
    except jwt.InvalidTokenError as error:
        raise AccessTokenRefused(f"the access token is refused: {type(error).__name__}") from None
    try:
        expires = datetime.fromtimestamp(claims["exp"], tz=UTC)
    except (OverflowError, ValueError, TypeError):
        raise AccessTokenRefused("the access token's expiry is not a time") from None
    if expires <= clock():
        raise AccessTokenRefused("the access token has expired")
    if claims["aid"] != artifact_id:
        raise AccessTokenRefused("the access token is for another file")
    fields = (claims["sub"], claims.get("name", claims["sub"]), claims["tid"], claims["wid"])
    if not all(isinstance(field, str) and field for field in fields):
        raise AccessTokenRefused("the access token names no one")
    user, name, tenant_id, workspace_id = fields
    return TokenGrant(
        tenant_id=tenant_id,
        workspace_id=workspace_id,
        artifact_id=artifact_id,
        person=UserActor(id=user, name=name),
        expires_at=expires,
    )
