"""Proof keys and discovery: Microsoft's published vectors, a hardened parser, a cache.

The vectors (``wopi_proof_keys.json``) are Microsoft's, from their Python sample, MIT: six
requests that verify (with the current key, the old proof with the current key, the proof with
the old key) and two that don't. The host refuses a stale timestamp, a document type
declaration, and a proof signed by anyone else; with discovery configured, a request without
a good proof is answered 500, as the spec asks.
"""

import base64
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.responses import Response
from starlette.routing import Route

from artifactr.files.fastapi.wopi_discovery import (
    MAX_DISCOVERY,
    TICKS_EPOCH,
    DiscoveryCache,
    DiscoveryRefused,
    ProofRefused,
    fetch_discovery,
    parse_discovery,
    proof_bytes,
    ticks_of,
    verify_proof,
)
from tests.clock import Clock
from tests.wopi import Host, build_host, in_process, served

VECTORS = json.loads((Path(__file__).parent / "wopi_proof_keys.json").read_text())


def key_xml(modulus: str, exponent: str, old_modulus: str, old_exponent: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><wopi-discovery><net-zone name="external-https">'
        '<app name="Word"><action name="edit" ext="docx" '
        'urlsrc="https://office.test/we/wordeditorframe.aspx?&lt;ui=UI_LLCC&amp;&gt;"/></app>'
        f'</net-zone><proof-key modulus="{modulus}" exponent="{exponent}" '
        f'oldmodulus="{old_modulus}" oldexponent="{old_exponent}"/></wopi-discovery>'
    ).encode()


def vectors_discovery() -> bytes:
    keys = VECTORS["discovery"]
    return key_xml(keys["modulus"], keys["exponent"], keys["oldmodulus"], keys["oldexponent"])


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_microsoft_s_vectors_verify_exactly_when_they_should(case: dict[str, Any]) -> None:
    discovery = parse_discovery(vectors_discovery())
    when = TICKS_EPOCH + timedelta(microseconds=case["timestamp"] // 10)
    assert ticks_of(when) // 10 == case["timestamp"] // 10

    def check() -> None:
        verify_proof(
            discovery,
            access_token=case["access_token"],
            url=case["url"],
            timestamp=str(case["timestamp"]),
            proof=case["proof"],
            proof_old=case["proof_old"],
            now=when,
        )

    if case["valid"]:
        check()
    else:
        with pytest.raises(ProofRefused):
            check()


def test_a_stale_missing_or_malformed_timestamp_is_refused() -> None:
    discovery = parse_discovery(vectors_discovery())
    case = VECTORS["cases"][0]
    when = TICKS_EPOCH + timedelta(microseconds=case["timestamp"] // 10)
    for stamp, now in (
        (str(case["timestamp"]), when + timedelta(minutes=21)),
        (str(case["timestamp"]), when - timedelta(minutes=21)),
        (None, when),
        ("yesterday", when),
        ("9" * 21, when),
        (str(2**64), when),
    ):
        with pytest.raises(ProofRefused):
            verify_proof(
                discovery,
                access_token=case["access_token"],
                url=case["url"],
                timestamp=stamp,
                proof=case["proof"],
                proof_old=case["proof_old"],
                now=now,
            )
    with pytest.raises(ProofRefused):  # signatures that are no base64, or none at all
        verify_proof(
            discovery,
            access_token=case["access_token"],
            url=case["url"],
            timestamp=str(case["timestamp"]),
            proof="not base64!",
            proof_old=None,
            now=when,
        )


def test_discovery_gives_the_actions_urls_and_refuses_what_it_should_not_parse() -> None:
    discovery = parse_discovery(vectors_discovery())
    assert discovery.action_url("edit") == "https://office.test/we/wordeditorframe.aspx?"
    assert discovery.action_url("edit", ".DOCX") == "https://office.test/we/wordeditorframe.aspx?"
    assert discovery.action_url("view") is None
    bare = parse_discovery(
        b"<wopi-discovery><app name='x'><action name='edit'/></app></wopi-discovery>"
    )
    assert (bare.actions, bare.proof, bare.proof_old) == ({}, None, None)
    entity = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>'
        b"<wopi-discovery>&lol;</wopi-discovery>"
    )
    for refused in (
        entity,
        b"<wopi-discovery>",
        b" " * (MAX_DISCOVERY + 1),
        key_xml("not base64!", "AQAB", "", ""),
        key_xml("AAAA", "AQAB", "", ""),
    ):
        with pytest.raises(DiscoveryRefused):
            parse_discovery(refused)
    half = parse_discovery(key_xml(VECTORS["discovery"]["modulus"], "AQAB", "", ""))
    assert half.proof is not None
    assert half.proof_old is None


async def test_the_cache_fetches_once_per_ttl_and_keeps_its_copy_when_a_fetch_fails() -> None:
    clock = Clock()
    answers: list[bytes | Exception] = [vectors_discovery(), OSError("down"), b"<broken"]
    fetched: list[str] = []

    async def fetch(url: str) -> bytes:
        fetched.append(url)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    cache = DiscoveryCache("https://office.test/hosting/discovery", fetch=fetch, clock=clock)
    first = await cache.get()
    assert await cache.get() is first
    clock.advance(timedelta(hours=2))
    assert await cache.get() is first  # the editor is down: the copy stays
    assert await cache.get() is first  # its XML is broken: the copy stays
    assert len(fetched) == 3
    empty = DiscoveryCache("https://office.test/hosting/discovery", fetch=fetch, clock=clock)
    answers.append(OSError("down"))
    with pytest.raises(OSError, match="down"):
        await empty.get()


async def test_discovery_is_fetched_over_http(engine: AsyncEngine) -> None:
    async def discovery(_request: object) -> Response:
        return Response(vectors_discovery(), media_type="text/xml")

    host = await build_host(engine)
    host.app.router.routes.append(Route("/hosting/discovery", discovery))
    async with served(host) as running:
        url = str(running.http.base_url.join("/hosting/discovery"))
        assert await fetch_discovery(url) == vectors_discovery()


# ─── the host, with discovery configured ──────────────────────────────────────


class Editor:
    """An editor's two proof keys, signing requests as Office and Collabora do."""

    def __init__(self) -> None:
        self.current = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.old = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def discovery(self) -> bytes:
        def b64(number: int) -> str:
            return base64.b64encode(number.to_bytes((number.bit_length() + 7) // 8)).decode()

        now, old = (
            self.current.public_key().public_numbers(),
            self.old.public_key().public_numbers(),
        )
        return key_xml(b64(now.n), b64(now.e), b64(old.n), b64(old.e))

    def sign(self, key: rsa.RSAPrivateKey, token: str, url: str, ticks: int) -> str:
        signature = key.sign(proof_bytes(token, url, ticks), padding.PKCS1v15(), hashes.SHA256())
        return base64.b64encode(signature).decode()


@pytest.fixture
async def proven(engine: AsyncEngine) -> AsyncIterator[tuple[Host, Editor]]:
    editor = Editor()

    async def fetch(_url: str) -> bytes:
        return editor.discovery()

    cache = DiscoveryCache("https://office.test/hosting/discovery", fetch=fetch)
    async with in_process(await build_host(engine, discovery=cache)) as host:
        yield host, editor


async def test_a_request_with_a_good_proof_passes_and_any_other_is_500(
    proven: tuple[Host, Editor],
) -> None:
    host, editor = proven
    artifact_id = await host.upload()
    token = host.token(artifact_id)
    url = f"http://host.test/wopi/files/{artifact_id}?access_token={token}"
    ticks = ticks_of(host.clock())
    good = editor.sign(editor.current, token, url, ticks)
    bad = editor.sign(editor.current, token, url + "x", ticks)
    old = editor.sign(editor.old, token, url, ticks)
    for proof, proof_old, status in (
        (good, old, 200),
        (good, bad, 200),
        (bad, good, 200),
        (old, bad, 200),
        (bad, old, 500),
        (bad, bad, 500),
    ):
        response = await host.call(
            artifact_id,
            token=token,
            X_WOPI_Proof=proof,
            X_WOPI_ProofOld=proof_old,
            X_WOPI_TimeStamp=str(ticks),
        )
        assert response.status_code == status
        assert token not in response.text
    stale = ticks_of(host.clock() - timedelta(minutes=21))
    response = await host.call(
        artifact_id,
        token=token,
        X_WOPI_Proof=editor.sign(editor.current, token, url, stale),
        X_WOPI_TimeStamp=str(stale),
    )
    assert response.status_code == 500
    assert response.json()["detail"]["type"] == "proof_refused"
