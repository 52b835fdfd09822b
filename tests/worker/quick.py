"""A quick stand-in for ``wordcraft-cli mcp``: the worker's mechanics, without the SDK's start-up.

The full stand-in (``tests/apps/wordcraft/standin.py``) edits real documents, but importing the SDK
takes seconds a process, and the worker starts one per job. The worker's own tests (its gate,
limits, temporary directories, refusals) need a job, not an edit, so this program answers the same
tools with hand-written JSON-RPC lines and the standard library only:

- ``execute file.open`` keeps the bytes it is given; ``save_document`` writes them back unchanged;
  ``batch`` succeeds, except for a command whose id starts with ``fail.``, which it refuses as
  WordCraft does (its steps, the last one failed); the reads answer an empty document of one
  page; ``render_page`` a 1 x 1 PNG; ``list_commands`` two commands.
- ``QUICK_MODE`` makes the first tool call misbehave: ``sleep`` (for ``QUICK_SLEEP`` seconds, then
  answer), ``gate`` (wait until the file ``QUICK_GATE`` names exists, which the test makes, then
  answer), ``cpu`` (spin), ``memory`` (allocate until refused), ``files`` (open files until
  refused) or ``fsize`` (write a file without end).
- ``STANDIN_PIDS`` names a file it appends its pid to, as the full stand-in does.
"""

import base64
import json
import os
import sys
import time
from typing import Any

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944"
        "4154789c63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082"
    )
).decode()
TOOLS = [
    "list_commands",
    "execute",
    "batch",
    "save_document",
    "get_text",
    "inspect_document",
    "render_page",
]
CATALOG = [
    {"id": "format.bold", "label": "Bold", "params": '{"value"?: bool}', "mutates": True},
    {"id": "file.info", "label": "Info", "params": "", "mutates": False},
]


class Document:
    def __init__(self) -> None:
        self.data = b""
        self.calls = 0

    def tool(self, name: str, arguments: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        self.calls += 1
        if self.calls == 1:
            misbehave(os.environ.get("QUICK_MODE", ""))
        if name == "batch":
            steps: list[dict[str, Any]] = []
            for step in arguments.get("commands", []):
                if step["command"].startswith("fail."):
                    steps.append({"command": step["command"], "ok": False, "error": "refused"})
                    return [text(steps)], True
                steps.append({"command": step["command"], "ok": True, "result": {}})
            return [text(steps)], False
        if name == "render_page":
            return [{"type": "image", "data": PNG, "mimeType": "image/png"}, text({})], False
        return [text(self.value(name, arguments))], False

    def value(self, name: str, arguments: dict[str, Any]) -> Any:
        if name == "execute":
            command, params = arguments["command"], arguments.get("params") or {}
            if command == "file.open":
                self.data = base64.b64decode(params["data"])
                return {"path": params["path"], "paragraphs": 1, "words": 0}
            return {"file.info": {"pages": 1}}.get(command, [])
        if name == "save_document":
            with open(arguments["path"], "wb") as saved:
                saved.write(self.data)
            return {"saved": True}
        if name == "list_commands":
            return CATALOG
        return {"get_text": {"text": ""}, "inspect_document": {"blocks": []}}[name]


def text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json.dumps(value)}


def misbehave(mode: str) -> None:
    if mode == "sleep":
        time.sleep(float(os.environ.get("QUICK_SLEEP", "1")))
    elif mode == "gate":
        while not os.path.exists(os.environ["QUICK_GATE"]):
            time.sleep(0.01)
    elif mode == "cpu":
        while True:
            pass
    elif mode == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))
    elif mode == "files":
        while True:
            os.open(os.devnull, os.O_RDONLY)
    elif mode == "fsize":
        with open("big.bin", "wb") as big:
            while True:
                big.write(bytes(1024 * 1024))


def answer(message: dict[str, Any], document: Document) -> dict[str, Any]:
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "wordcraft", "version": "0.4.0-quick"},
        }
    if method == "tools/list":
        return {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}
    content, failed = document.tool(params["name"], params.get("arguments") or {})
    return {"content": content, "isError": failed}


def main() -> None:
    pids = os.environ.get("STANDIN_PIDS")
    if pids:
        with open(pids, "a") as file:
            file.write(f"{os.getpid()}\n")
    document = Document()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message, document)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
