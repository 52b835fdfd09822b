"""Walkthrough: a client of ``examples/contracts.py`` that tells the whole story over HTTP.

Alice uploads a contract. She asks the assistant, in a thread, to add a review note; its edit
arrives as a proposal, which Bob accepts. Alice checks the file out, downloads it, edits it as
her word processor would, and checks it in. Anyone downloads the final revision.

``python -m examples.walkthrough`` serves the application on a free port of 127.0.0.1, walks
through it, writes the final .docx into ``out/`` and stops (``make example``). With ``--url``
it walks through an application that is already serving (``python -m examples.contracts``).
"""

import argparse
import asyncio
import socket
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import httpx2
import uvicorn

from artifactr.files import DOCX, AppCommand, FakeApp
from artifactr.files.core.documents import build_docx
from examples.contracts import TENANT, WORKSPACE, create_app

ALICE: Final = {"x-user": "alice"}
"""Alice's requests: she uploads, asks the assistant, and checks the file out and in."""

BOB: Final = {"x-user": "bob"}
"""Bob's requests: he reviews the assistant's proposal."""

W: Final = f"/workspaces/{WORKSPACE}"
"""The workspace's routes, artifactr's and the files router's alike."""

Say = Callable[[str], None]
"""Where each step is told."""


async def command(client: httpx2.AsyncClient, who: dict[str, str], **body: Any) -> dict[str, Any]:
    """Send one of artifactr's commands as ``who``; return its outcome, or fail with its refusal."""
    frame = {"type": "command", "command_id": uuid.uuid4().hex, "command": body}
    answer = await client.post(f"{W}/commands", json=frame, headers=who)
    result = answer.json()
    if not result["ok"]:
        raise RuntimeError(f"{body['type']} was refused ({answer.status_code}): {result}")
    return result["outcome"]


async def finished(client: httpx2.AsyncClient, run_id: str, *, within: float = 30) -> str:
    """Wait for a run to end; return how it ended (``completed``, ``failed``...).

    A run is recorded once it starts, a moment after the message that started it: until then
    its route answers 404.
    """
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = await client.get(f"{W}/runs/{run_id}", headers=ALICE)
        if answer.status_code == 200 and answer.json()["status"] != "running":
            return answer.json()["status"]
        await asyncio.sleep(0.05)
    return "still running"


async def walk(client: httpx2.AsyncClient, out: Path, say: Say = print) -> Path:
    """Tell the story against the application ``client`` reaches; return the final .docx."""
    files = f"{W}/files"

    document = build_docx([("Title", "Contract"), "Draft terms for review."])
    uploaded = await client.post(
        files,
        params={"name": "contract.docx"},
        content=document,
        headers={**ALICE, "content-type": DOCX},
    )
    uploaded.raise_for_status()
    artifact_id = uploaded.json()["artifact_id"]
    say(f"1. Alice uploads contract.docx: {uploaded.status_code}, {artifact_id} v1")

    thread_id = f"thr_{uuid.uuid4().hex[:16]}"
    await command(client, ALICE, type="create_thread", thread_id=thread_id, title="the contract")
    asked = f"Please add a review note at the end of {artifact_id} v1."
    posted = await command(client, ALICE, type="post_message", thread_id=thread_id, content=asked)
    ended = await finished(client, posted["run_id"])
    proposals = (await client.get(f"{W}/proposals", headers=BOB)).json()
    proposal = proposals[0]["id"]
    say(f"2. Alice asks the assistant; its run {ended}, with proposal {proposal}")
    accepted = await command(
        client, BOB, type="respond_to_proposal", proposal_id=proposal, decision="accept"
    )
    say(f"   Bob accepts it: v{accepted['version']}")

    checked_out = await client.post(f"{files}/{artifact_id}/checkouts", headers=ALICE)
    checkout = checked_out.json()
    busy = await client.post(f"{files}/{artifact_id}/checkouts", headers=BOB)
    say(
        f"3. Alice checks it out: {checkout['id']}, v{checkout['base_version']}, until "
        f"{checkout['expires_at']}; Bob's check-out is refused ({busy.status_code})"
    )
    base = await client.get(checkout["download_url"], headers=ALICE)
    # Her word processor saves the file; FakeApp stands in for it here.
    saved = await FakeApp().apply(
        base.content,
        [
            AppCommand(command="caret.docEnd"),
            AppCommand(command="text.newParagraph"),
            AppCommand(command="text.insert", params={"text": "Approved by Alice."}),
        ],
        author="Alice",
    )
    checked_in = await client.post(
        f"{files}/{artifact_id}/checkouts/{checkout['id']}/check-in",
        params={"summary": "approve"},
        content=saved.content,
        headers={**ALICE, "content-type": DOCX},
    )
    result = checked_in.json()
    say(f"4. Alice checks it in: {result['status']}, v{result['version']}")

    final = await client.get(f"{files}/{artifact_id}/versions/{result['version']}/content")
    final.raise_for_status()
    path = await asyncio.to_thread(_save, out / "contract-final.docx", final.content)
    text = (await FakeApp().inspect(final.content)).text
    say(f"5. The final revision, {len(final.content)} bytes, ETag {final.headers['etag']}: {path}")
    say("   " + " / ".join(line for line in text.splitlines() if line))
    return path


def _save(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _fresh(database: Path) -> Path:
    database.parent.mkdir(parents=True, exist_ok=True)
    database.unlink(missing_ok=True)
    return database


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def serve_and_walk(out: Path, say: Say = print) -> Path:
    """Serve the application on a free port, walk through it, and stop it."""
    database = await asyncio.to_thread(_fresh, out / "contracts.db")
    port = _free_port()
    native = FakeApp()
    config = uvicorn.Config(
        create_app(database, app=native),
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                raise RuntimeError("the application did not start") from serving.exception()
            await asyncio.sleep(0.02)
        say(f"serving the contracts application at http://127.0.0.1:{port} ({TENANT})")
        say(
            f"app: FakeApp ({native.name}), in process: contracts.create_app(app=...) takes "
            "WordCraft's or LibreOffice's adapter instead"
        )
        base_url = f"http://127.0.0.1:{port}"
        async with httpx2.AsyncClient(base_url=base_url, headers=ALICE, timeout=30) as client:
            return await walk(client, out, say)
    finally:
        server.should_exit = True
        await serving


async def walk_to(url: str, out: Path, say: Say = print) -> Path:
    """Walk through an application that is already serving at ``url``."""
    async with httpx2.AsyncClient(base_url=url, headers=ALICE, timeout=30) as client:
        return await walk(client, out, say)


def main(argv: Sequence[str] | None = None) -> None:
    """Walk through the application: served here, or at ``--url``."""
    parser = argparse.ArgumentParser(prog="python -m examples.walkthrough")
    parser.add_argument("--url", help="an application already serving, such as :8000")
    parser.add_argument("--out", type=Path, default=Path("out"))
    options = parser.parse_args(argv)
    if options.url:
        asyncio.run(walk_to(options.url, options.out))
    else:
        asyncio.run(serve_and_walk(options.out))


if __name__ == "__main__":
    main(sys.argv[1:])
