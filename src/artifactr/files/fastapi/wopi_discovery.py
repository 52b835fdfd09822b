"""WOPI discovery and proof keys: where the editor is, and proof a request came from it (ADR-0016).

An editor publishes its discovery XML (Collabora: ``https://<host>/hosting/discovery``): for
each kind of file, the ``urlsrc`` of its ``edit`` and ``view`` actions, and its RSA proof keys,
current and old. :func:`parse_discovery` reads it with the standard library's parser after
refusing any document type declaration, so no entity is ever expanded, and bounded in size.
:class:`DiscoveryCache` fetches it once and keeps it for an hour (``ttl``); a failed fetch
keeps the last copy.

:func:`verify_proof` checks a request's ``X-WOPI-Proof`` and ``X-WOPI-ProofOld`` against the
keys, over the spec's bytes (:func:`proof_bytes`: the token's length and bytes, the upper-cased
URL's length and bytes, the timestamp's length and eight big-endian bytes), signed with
RSA PKCS#1 v1.5 and SHA-256. A request passes if the proof verifies with the current key, the
old proof with the current key, or the proof with the old key; it is refused with
:class:`ProofRefused` otherwise, or when its ``X-WOPI-TimeStamp`` is more than 20 minutes off.
"""

import asyncio
import base64
import binascii
import re
import struct
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import ClassVar, Final

from artifactr.core import Rejection
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from artifactr.files.core.clock import Clock, utc_now

MAX_DISCOVERY: Final = 1024 * 1024
"""The most bytes of discovery XML read: Office's is about 300 KB."""

DISCOVERY_TTL: Final = timedelta(hours=1)
"""How long a fetched discovery is kept before it is fetched again."""

MAX_AGE: Final = timedelta(minutes=20)
"""How far a request's ``X-WOPI-TimeStamp`` may be from now."""

TICKS_EPOCH: Final = datetime(1, 1, 1, tzinfo=UTC)
"""Where .NET's ticks (100 ns each), which ``X-WOPI-TimeStamp`` counts, begin."""

DOCX_TYPE: Final = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
"""The media type Collabora names its Writer app by in discovery."""

_PLACEHOLDER: Final = re.compile(r"<[^<>]*>")
"""An optional query parameter in a ``urlsrc`` (``<ui=UI_LLCC&>``), which the host may drop."""


class DiscoveryRefused(Rejection):
    """Discovery XML that is malformed, too large, declares a document type, or has bad keys."""

    code: ClassVar[str] = "discovery_refused"


class ProofRefused(Rejection):
    """A request whose proof doesn't verify with the editor's keys, or whose time is stale.

    Its code is ``proof_refused``; the WOPI router answers 500, as the spec asks.
    """

    code: ClassVar[str] = "proof_refused"


@dataclass(frozen=True)
class Discovery:
    """An editor's discovery: the actions' URLs by (extension, action), and its proof keys."""

    actions: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    """The ``urlsrc`` of each action, by lower-case extension (``docx``) and action name."""
    proof: rsa.RSAPublicKey | None = None
    """The current proof key, if discovery gives one."""
    proof_old: rsa.RSAPublicKey | None = None
    """The old proof key, if discovery gives one."""

    def action_url(self, action: str, extension: str = "docx") -> str | None:
        """Return the URL to post a file's form to for an action, its placeholders dropped."""
        urlsrc = self.actions.get((extension.lower().lstrip("."), action))
        if urlsrc is None:
            return None
        return _PLACEHOLDER.sub("", urlsrc)


def parse_discovery(xml: bytes) -> Discovery:
    """Return the actions and proof keys of discovery XML.

    Raises:
        DiscoveryRefused: If it is too large, declares a document type, doesn't parse, or its
            proof keys are not base64 numbers.
    """
    if len(xml) > MAX_DISCOVERY:
        raise DiscoveryRefused(f"the discovery is larger than {MAX_DISCOVERY} bytes")
    if b"<!doctype" in xml.lower():
        raise DiscoveryRefused("the discovery declares a document type: entities are refused")
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise DiscoveryRefused(f"the discovery is not XML: {error}") from None
    actions: dict[tuple[str, str], str] = {}
    for app in root.iter("app"):
        by_type = app.get("name", "") == DOCX_TYPE
        for action in app.iter("action"):
            name, ext, urlsrc = action.get("name"), action.get("ext", ""), action.get("urlsrc")
            if name is None or urlsrc is None:
                continue
            ext = ext.lower() or ("docx" if by_type else "")
            actions.setdefault((ext, name), urlsrc)
    key = root.find("proof-key")
    if key is None:
        return Discovery(actions=actions)
    return Discovery(
        actions=actions,
        proof=_public_key(key.get("modulus"), key.get("exponent")),
        proof_old=_public_key(key.get("oldmodulus"), key.get("oldexponent")),
    )


def _public_key(modulus: str | None, exponent: str | None) -> rsa.RSAPublicKey | None:
    if not modulus or not exponent:
        return None
    try:
        n = int.from_bytes(base64.b64decode(modulus, validate=True))
        e = int.from_bytes(base64.b64decode(exponent, validate=True))
        return rsa.RSAPublicNumbers(e, n).public_key()
    except (binascii.Error, ValueError) as error:
        raise DiscoveryRefused(f"the discovery's proof key is not an RSA key: {error}") from None


def proof_bytes(access_token: str, url: str, timestamp: int) -> bytes:
    """Return the bytes an editor signs for a request (the WOPI spec's proof layout)."""
    token = access_token.encode()
    upper = url.upper().encode()
    stamp = struct.pack(">Q", timestamp)
    return b"".join(
        (
            struct.pack(">I", len(token)),
            token,
            struct.pack(">I", len(upper)),
            upper,
            struct.pack(">I", len(stamp)),
            stamp,
        )
    )


def ticks_of(moment: datetime) -> int:
    """Return a time as .NET ticks, as ``X-WOPI-TimeStamp`` carries it."""
    delta = moment - TICKS_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def _verifies(key: rsa.RSAPublicKey | None, signature: str | None, signed: bytes) -> bool:
    if key is None or not signature:
        return False
    try:
        key.verify(
            base64.b64decode(signature, validate=True), signed, padding.PKCS1v15(), hashes.SHA256()
        )
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def verify_proof(
    discovery: Discovery,
    *,
    access_token: str,
    url: str,
    timestamp: str | None,
    proof: str | None,
    proof_old: str | None,
    now: datetime,
) -> None:
    """Refuse a request the editor didn't sign, or signed more than 20 minutes from ``now``.

    Raises:
        ProofRefused: If the timestamp is missing, malformed or stale, or no proof verifies.
    """
    if timestamp is None or not timestamp.isdigit() or len(timestamp) > 20:
        raise ProofRefused("the request has no X-WOPI-TimeStamp")
    ticks = int(timestamp)
    if ticks >= 2**64 or abs(ticks - ticks_of(now)) > ticks_of(TICKS_EPOCH + MAX_AGE):
        raise ProofRefused("the request's X-WOPI-TimeStamp is more than 20 minutes off")
    signed = proof_bytes(access_token, url, ticks)
    if not (
        _verifies(discovery.proof, proof, signed)
        or _verifies(discovery.proof, proof_old, signed)
        or _verifies(discovery.proof_old, proof, signed)
    ):
        raise ProofRefused("the request's proof doesn't verify with the editor's keys")


async def fetch_discovery(url: str) -> bytes:
    """Return an editor's discovery XML from its URL, at most :data:`MAX_DISCOVERY` + 1 bytes."""

    def fetch() -> bytes:
        with urllib.request.urlopen(url, timeout=10) as answer:  # the deployment's own URL
            data: bytes = answer.read(MAX_DISCOVERY + 1)
            return data

    return await asyncio.to_thread(fetch)


class DiscoveryCache:
    """An editor's discovery, fetched on first use and again once ``ttl`` passed.

    A fetch that fails keeps the copy it has, if any, so an editor's brief outage doesn't stop
    requests that carry proofs its keys still verify.

    Args:
        url: The discovery URL (Collabora: ``https://<host>/hosting/discovery``).
        ttl: How long a copy is kept.
        fetch: How the XML is fetched; :func:`fetch_discovery` if omitted.
        clock: The current time.
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: timedelta = DISCOVERY_TTL,
        fetch: Callable[[str], Awaitable[bytes]] = fetch_discovery,
        clock: Clock = utc_now,
    ) -> None:
        self.url = url
        """Where discovery is fetched from."""
        self._ttl = ttl
        self._fetch = fetch
        self._clock = clock
        self._copy: tuple[datetime, Discovery] | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Discovery:
        """Return the discovery, fetching it if there is no copy or the copy is old.

        Raises:
            DiscoveryRefused: If the XML is refused and there is no copy.
            OSError: If it can't be fetched and there is no copy.
        """
        async with self._lock:
            now = self._clock()
            if self._copy is not None and now - self._copy[0] < self._ttl:
                return self._copy[1]
            try:
                discovery = parse_discovery(await self._fetch(self.url))
            except (OSError, DiscoveryRefused):
                if self._copy is None:
                    raise
                return self._copy[1]
            self._copy = (now, discovery)
            return discovery
