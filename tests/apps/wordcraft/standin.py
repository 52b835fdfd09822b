"""Stand-in for ``wordcraft-cli mcp``: a test double of WordCraft's MCP server, never shipped.

No WordCraft binary can be downloaded here (DESIGN.md), so the adapter's tests run this program
over a real pipe instead. It behaves as ``reference/wordcraft.md`` and WordCraft's own
``crates/mcp`` describe:

- ``mcp [--connect HOST:PORT | --author NAME]``; any other ``--flag`` is refused with
  ``wordcraft-cli: mcp: unknown option --flag`` and exit status 1, before any I/O, as newer
  builds do. ``--author`` is trimmed, and a blank one refused.
- JSON-RPC 2.0 on stdio through the official SDK's low-level server: ``serverInfo``
  ``{name: "wordcraft", version: "0.4.0-standin"}``, WordCraft's protocol versions (it echoes
  2024-11-05, 2025-03-26 and 2025-06-18, and answers 2025-06-18 to anything else), the same tools
  with the same input schemas, and the same replies: pretty JSON in one text item,
  ``isError: true`` with one text item for a tool's failure (a failed ``batch`` answers with its
  steps as compact JSON), and ``render_page`` as an image item then a text item.
- One document per process, edited for real with python-docx and lxml: ``file.open`` (from
  base64 ``data``, or from a path, unconfined, as WordCraft does), ``caret.set``,
  ``select.text``, ``text.insert``, ``edit.replaceAll``, ``para.style``, ``format.bold``,
  ``insert.table``, ``review.newComment``, ``review.trackChanges``, ``review.accept``,
  ``review.reject``, ``review.comments``, ``review.changes``, ``file.info``, ``document.inspect``
  and ``document.text``; any other id is ``unknown command `x```.
- ``save_document`` writes ``<path>.tmp`` then renames it, relative to the working directory,
  stamping ``docProps/core.xml`` on every save (``dcterms:modified``, ``cp:revision`` + 1,
  ``cp:lastModifiedBy``) as WordCraft does. Unlike WordCraft it keeps the other parts as they
  are, where WordCraft regenerates the package.

Where the SDK's server differs from WordCraft's hand-written one (it insists on ``initialize``
before other requests, answers ``server/discover``, and refuses JSON-RPC batches), nothing the
adapter does depends on it.

Test hooks, from the environment: ``STANDIN_PIDS`` names a file each process (and any child it
starts) appends its pid to, so tests can prove none is left behind. ``STANDIN_MODE`` makes it
misbehave: ``hang`` (start a child, ignore SIGTERM, and block on the first tool call),
``child`` (start a child that sleeps in its group, and answer as ever),
``crash`` (exit 3 on the first tool call, with a message on stderr), ``flood`` (write stdout
without end), ``exit_early`` (exit once initialized), ``garbage`` (a line that isn't JSON-RPC),
``odd`` (replies in shapes WordCraft never uses), ``corrupt`` (save bytes that aren't a .docx) or
``nosave`` (say it saved, and write nothing).
"""

from __future__ import annotations

import base64
import copy
import io
import json
import os
import re
import sys
from datetime import UTC, datetime
from typing import Any

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.text.run import Run

VERSION = "0.4.0-standin"
OPTIONS = ("--connect", "--author", "--join", "--as")
DEFAULT_AUTHOR = "WordCraft User"

P, R, T, DELTEXT, INS, DEL = (
    qn("w:p"),
    qn("w:r"),
    qn("w:t"),
    qn("w:delText"),
    qn("w:ins"),
    qn("w:del"),
)
TBL, TR, TC, RPR, BR = qn("w:tbl"), qn("w:tr"), qn("w:tc"), qn("w:rPr"), qn("w:br")
SECTPR, RENDERED_BREAK, TRACK = (
    qn("w:sectPr"),
    qn("w:lastRenderedPageBreak"),
    qn("w:trackRevisions"),
)
COMMENT, COMMENT_START = qn("w:comment"), qn("w:commentRangeStart")
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
SETTINGS_BEFORE = {
    qn(f"w:{name}")
    for name in (
        "writeProtection",
        "view",
        "zoom",
        "removePersonalInformation",
        "removeDateAndTime",
        "proofState",
        "attachedTemplate",
        "linkStyles",
        "documentType",
        "mailMerge",
        "revisionView",
    )
}


class _Usage(Exception):
    pass


def main(argv: list[str]) -> int:
    try:
        author = _arguments(argv)
    except _Usage as error:
        sys.stderr.write(f"wordcraft-cli: {error}\n")
        return 1
    if author is None:
        return 0
    mode = os.environ.get("STANDIN_MODE", "")
    _record(os.getpid())
    if mode in ("hang", "child"):
        _start_a_child(hang=mode == "hang")
    # The SDK takes a while to import: flags are checked first, as WordCraft checks them first.
    import anyio

    anyio.run(_serve, author, mode)
    return 0


def _arguments(argv: list[str]) -> str | None:
    command, rest = (argv[0] if argv else ""), argv[1:]
    if command in ("--version", "-V"):
        sys.stdout.write(f"wordcraft-cli {VERSION}\n")
        return None
    if command != "mcp":
        raise _Usage(f"unknown command `{command}`")
    index = 0
    while index < len(rest):
        argument = rest[index]
        if argument.startswith("--") and argument not in OPTIONS:
            raise _Usage(f"mcp: unknown option {argument}")
        takes_value = argument in OPTIONS and index + 1 < len(rest)
        index += 2 if takes_value and not rest[index + 1].startswith("--") else 1

    def value(name: str) -> str | None:
        if name in rest and rest.index(name) + 1 < len(rest):
            return rest[rest.index(name) + 1]
        return None

    if value("--connect") is not None:
        raise _Usage("the stand-in is headless only: it can't reach a WordCraft app")
    author = value("--author")
    if author is None:
        return DEFAULT_AUTHOR
    if not author.strip():
        raise _Usage("--author: bad parameters: `name` is blank")
    return author.strip()


def _record(pid: int) -> None:
    path = os.environ.get("STANDIN_PIDS")
    if path:
        with open(path, "a") as pids:
            pids.write(f"{pid}\n")


def _start_a_child(hang: bool) -> None:
    import signal
    import subprocess

    if hang:
        # Ignored signals stay ignored across exec: neither process stops for SIGTERM.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    _record(child.pid)


# ─── the server ───────────────────────────────────────────────────────────────


async def _serve(author: str, mode: str) -> None:
    import dataclasses

    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    session = Session(author, mode)
    versions = ("2025-06-18", "2025-03-26", "2024-11-05")

    async def wordcraft_versions(ctx: Any, call_next: Any) -> Any:
        # WordCraft echoes the three versions it knows, and answers 2025-06-18 to any other.
        params = dict(ctx.params or {})
        if ctx.method == "initialize" and params.get("protocolVersion") not in versions:
            params["protocolVersion"] = versions[0]
            ctx = dataclasses.replace(ctx, params=params)
        return await call_next(ctx)

    async def initialized(ctx: Any, params: Any) -> None:
        if mode == "exit_early":
            os._exit(0)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        content, failed = session.tool(params.name, params.arguments or {})
        items: list[Any] = []
        for item in content:
            if isinstance(item, bytes):
                data = base64.b64encode(item).decode()
                items.append(types.ImageContent(type="image", data=data, mime_type="image/png"))
            else:
                items.append(types.TextContent(type="text", text=item))
        return types.CallToolResult(content=items, is_error=failed)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri="wordcraft://document", name="document", mime_type="application/json"
                ),
                types.Resource(
                    uri="wordcraft://commands", name="commands", mime_type="application/json"
                ),
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        value = session.inspect() if str(params.uri) == "wordcraft://document" else CATALOG
        text = json.dumps(value, indent=2, ensure_ascii=False)
        contents = types.TextResourceContents(
            uri=params.uri, mime_type="application/json", text=text
        )
        return types.ReadResourceResult(contents=[contents])

    server = Server(
        "wordcraft",
        version=VERSION,
        title="WordCraft",
        website_url="https://github.com/storytold/wordcraft",
        instructions="WordCraft is a word processor. Every action is a command. (stand-in)",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    server.middleware.append(wordcraft_versions)
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, initialized
    )
    # Our own handles on fds 0 and 1 (the SDK would divert fd 1 otherwise): the misbehaving modes
    # write raw bytes to the wire.
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(0, "rb", closefd=False), encoding="utf-8"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8"))
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


# ─── tools and commands ───────────────────────────────────────────────────────


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _number(description: str) -> dict[str, str]:
    return {"type": "number", "description": description}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def _tool(
    name: str, title: str, description: str, schema: dict[str, Any], read_only: bool
) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "annotations": {"title": title, "readOnlyHint": read_only, "openWorldHint": False},
    }


TOOLS = [
    _tool(
        "list_commands",
        "List commands",
        "Every WordCraft command: id, label, ribbon location, shortcut and params.",
        _schema({"query": _string("Case-insensitive filter on id/label/location")}, []),
        True,
    ),
    _tool(
        "execute",
        "Run a command",
        'Run one command by id with params, e.g. {command:"format.bold"}.',
        _schema(
            {
                "command": _string("Command id"),
                "params": {"type": "object", "description": "Command parameters"},
            },
            ["command"],
        ),
        False,
    ),
    _tool(
        "batch",
        "Run several commands",
        "Run commands in order; stops at the first error unless keepGoing.",
        _schema(
            {
                "commands": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"command": {"type": "string"}, "params": {"type": "object"}},
                        "required": ["command"],
                    },
                },
                "keepGoing": {"type": "boolean"},
            },
            ["commands"],
        ),
        False,
    ),
    _tool(
        "new_document",
        "New document",
        "Start a document: blank, sample, letter, resume or report.",
        _schema({"template": _string("blank|sample|letter|resume|report")}, []),
        False,
    ),
    _tool(
        "open_document",
        "Open",
        "Open a .docx file.",
        _schema({"path": _string("File path")}, ["path"]),
        False,
    ),
    _tool(
        "save_document",
        "Save",
        "Save (format from the extension).",
        _schema({"path": _string("File path; omit to save in place")}, []),
        False,
    ),
    _tool(
        "type_text",
        "Type text",
        "Type at the caret (replacing the selection).",
        _schema({"text": _string("Text"), "paragraphs": {"type": "boolean"}}, ["text"]),
        False,
    ),
    _tool(
        "select_text",
        "Select text",
        "Select the n-th occurrence of some text.",
        _schema({"text": _string("Text to find"), "occurrence": _number("1-based")}, ["text"]),
        False,
    ),
    _tool("get_text", "Document text", "Plain text of the document body.", _schema({}, []), True),
    _tool(
        "inspect_document",
        "Inspect document",
        "Structure: blocks with text and styles.",
        _schema({}, []),
        True,
    ),
    _tool(
        "render_page",
        "Render page",
        "Render a page to PNG to look at the result.",
        _schema(
            {"page": _number("1-based page"), "scale": _number("Pixels per point (default 1)")}, []
        ),
        True,
    ),
    _tool("parity", "Feature parity", "WordCraft's command coverage.", _schema({}, []), True),
    _tool("screenshot", "Screenshot app", "Desktop app only.", _schema({}, []), True),
    _tool(
        "click",
        "Click",
        "Desktop app only.",
        _schema({"x": _number("x"), "y": _number("y"), "count": _number("1-3 clicks")}, ["x", "y"]),
        False,
    ),
    _tool(
        "key",
        "Press key",
        "Desktop app only.",
        _schema({"key": _string("Key name")}, ["key"]),
        False,
    ),
    _tool("ui_inspect", "Inspect UI", "Desktop app only.", _schema({}, []), True),
]


def _entry(
    id: str, label: str, location: str, params: str = "", mutates: bool = True
) -> dict[str, Any]:
    return {
        "id": id,
        "label": label,
        "location": location,
        "shortcut": "",
        "params": params,
        "mutates": mutates,
    }


CATALOG = [
    _entry("file.new", "New", "File", '{"template"?: "blank|sample|letter|resume|report"}', False),
    _entry("file.open", "Open", "File", '{"path": string}', False),
    _entry("file.save", "Save", "File", '{"path"?: string}', False),
    _entry("file.info", "Info", "File", "", False),
    _entry("file.setAuthor", "User Name", "File > Options > General", '{"name": string}', False),
    _entry("caret.set", "Set Caret", "Navigation", '{"pos": Pos, "extend"?: bool}', False),
    _entry("select.text", "Select Text", "Navigation", '{"text": string, "occurrence"?: n}', False),
    _entry("text.insert", "Insert Text", "Typing", '{"text": string, "raw"?: bool}'),
    _entry(
        "edit.replaceAll",
        "Replace All",
        "Home > Editing",
        '{"text": string, "with": string, "matchCase"?: bool}',
    ),
    _entry("para.style", "Style", "Home > Styles", '{"style": string}'),
    _entry("format.bold", "Bold", "Home > Font", '{"value"?: bool}'),
    _entry("insert.table", "Table", "Insert > Tables", '{"rows": n, "cols": n, "style"?: string}'),
    _entry("insert.picture", "Pictures", "Insert > Illustrations", '{"path": string}'),
    _entry("review.newComment", "New Comment", "Review > Comments", '{"text": string}'),
    _entry("review.comments", "Show Comments", "Review > Comments", "", False),
    _entry("review.trackChanges", "Track Changes", "Review > Tracking", '{"value"?: bool}'),
    _entry("review.accept", "Accept", "Review > Changes"),
    _entry("review.reject", "Reject", "Review > Changes"),
    _entry("review.changes", "Reviewing Pane", "Review > Tracking", "", False),
    _entry("document.inspect", "Inspect Document", "Agents", '{"text"?: bool}', False),
    _entry("document.text", "Document Text", "Agents", "", False),
]


class Failed(Exception):
    """A command's failure, in WordCraft's words."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Session:
    """One document, its selection and its author: one per process, as WordCraft has."""

    def __init__(self, author: str, mode: str) -> None:
        self.author = author
        self.mode = mode
        self.calls = 0
        self.document = docx.Document()
        self.path: str | None = None
        self.selection = Selection(self, self.paragraphs()[0][1], 0, 0)

    # ─── tools ───

    def tool(self, name: str, arguments: dict[str, Any]) -> tuple[list[str | bytes], bool]:
        self.calls += 1
        if self.calls == 1:
            self._misbehave()
        try:
            return self._tool(name, arguments), False
        except Failed as error:
            return [str(error)], True

    def _misbehave(self) -> None:
        if self.mode == "hang":
            import time

            time.sleep(3600)
        elif self.mode == "crash":
            sys.stderr.write("wordcraft-cli: panicked at 'the stand-in was told to crash'\n")
            sys.stderr.flush()
            os._exit(3)
        elif self.mode == "flood":
            while True:
                os.write(1, b"x" * 65536)
        elif self.mode == "garbage":
            os.write(1, b"this is not JSON-RPC\n")

    def _tool(self, name: str, a: dict[str, Any]) -> list[str | bytes]:
        if name == "render_page":
            return self.render(int(a.get("page", 1)), float(a.get("scale", 1.0)))
        if name == "get_text" and self.mode == "odd":
            return ["this is not JSON"]
        if name == "batch":
            return [self.batch(a.get("commands") or [], bool(a.get("keepGoing", False)))]
        value = self._value(name, a)
        return [json.dumps(value, indent=2, ensure_ascii=False)]

    def _value(self, name: str, a: dict[str, Any]) -> Any:
        if name == "list_commands":
            query = str(a.get("query", "")).lower()
            return [
                entry
                for entry in CATALOG
                if not query
                or any(query in entry[key].lower() for key in ("id", "label", "location"))
            ]
        if name == "execute":
            if not isinstance(a.get("command"), str):
                raise Failed("missing `command`")
            return self.run(a["command"], a.get("params") or {})
        if name == "new_document":
            return self.run("file.new", {"template": a.get("template", "blank")})
        if name == "open_document":
            return self.run("file.open", {"path": a.get("path", "")})
        if name == "save_document":
            return self.run("file.save", {"path": a["path"]} if "path" in a else {})
        if name == "type_text":
            return self.run("text.insert", {"text": a.get("text", ""), "raw": True})
        if name == "select_text":
            return self.run(
                "select.text", {"text": a.get("text", ""), "occurrence": a.get("occurrence", 1)}
            )
        if name == "get_text":
            return self.run("document.text", {})
        if name == "inspect_document":
            return self.run("document.inspect", {})
        if name == "parity":
            return {"live": len(CATALOG), "total": len(CATALOG), "percent": 100}
        if name in ("screenshot", "click", "key", "ui_inspect"):
            raise Failed("not available: the headless server has no window")
        raise Failed(f"unknown tool `{name}`")

    def batch(self, commands: list[dict[str, Any]], keep_going: bool) -> str:
        steps: list[dict[str, Any]] = []
        for command in commands:
            name = command.get("command", "")
            try:
                steps.append(
                    {
                        "command": name,
                        "ok": True,
                        "result": self.run(name, command.get("params") or {}),
                    }
                )
            except Failed as error:
                steps.append({"command": name, "ok": False, "error": str(error)})
                if not keep_going:
                    raise Failed(
                        json.dumps(steps, separators=(",", ":"), ensure_ascii=False)
                    ) from None
        return json.dumps(steps, indent=2, ensure_ascii=False)

    def render(self, page: int, scale: float) -> list[str | bytes]:
        if self.mode == "odd":
            return [json.dumps({"width": 0, "height": 0, "pages": 0})]
        from PIL import Image, ImageDraw

        pages = self.pages()
        if not 1 <= page <= pages:
            raise Failed(f"no page {page}")
        scale = min(max(scale, 0.1), 4.0)
        image = Image.new("RGB", (round(612 * scale), round(792 * scale)), "white")
        draw = ImageDraw.Draw(image)
        for line, (_, paragraph) in enumerate(self.paragraphs()[:40]):
            draw.text(
                (72 * scale, (72 + 16 * line) * scale), visible_text(paragraph)[:90], fill="black"
            )
        png = io.BytesIO()
        image.save(png, format="PNG")
        info = {"width": image.width, "height": image.height, "pages": pages}
        return [png.getvalue(), json.dumps(info, separators=(",", ":"))]

    # ─── commands ───

    def run(self, command: str, params: dict[str, Any]) -> Any:
        handler = COMMANDS.get(command)
        if handler is None:
            raise Failed(f"unknown command `{command}`")
        return handler(self, params)

    def file_new(self, params: dict[str, Any]) -> Any:
        self._load(docx.Document())
        self.path = None
        return self.selection.result()

    def file_open(self, params: dict[str, Any]) -> Any:
        import io

        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise Failed("bad parameters: `path` required")
        try:
            if "data" in params:
                data = base64.b64decode(params["data"], validate=True)
            else:
                with open(path, "rb") as file:
                    data = file.read()
            self._load(docx.Document(io.BytesIO(data)))
        except Exception as error:
            raise Failed(f"can't open {path}: {error}") from None
        self.path = path
        return {"path": path, "paragraphs": len(self.paragraphs()), "words": self.words()}

    def file_save(self, params: dict[str, Any]) -> Any:
        path = params.get("path") or self.path
        if not path:
            return {"saved": False}
        if not str(path).lower().endswith(".docx"):
            raise Failed(f"not available: the stand-in saves only .docx, not {path}")
        core = self.document.core_properties
        now = datetime.now(UTC).replace(microsecond=0)
        core.modified = now
        if core.created is None:
            core.created = now
        core.last_modified_by = self.author
        core.revision = core.revision + 1
        if self.mode == "corrupt":
            with open(path, "wb") as file:
                file.write(b"this is not a zip file")
        elif self.mode != "nosave":
            self.document.save(f"{path}.tmp")
            os.replace(f"{path}.tmp", path)
        self.path = str(path)
        return {"saved": True, "path": str(path)}

    def file_set_author(self, params: dict[str, Any]) -> Any:
        name = params.get("name")
        if not isinstance(name, str):
            raise Failed("bad parameters: `name` required")
        self.author = name
        return self.selection.result()

    def file_info(self, params: dict[str, Any]) -> Any:
        return {
            "path": self.path,
            "dirty": False,
            "pages": self.pages(),
            "words": self.words(),
            "paragraphs": len(self.paragraphs()),
            "properties": self.properties(),
            "trackChanges": self.tracking(),
            "comments": len(self.comment_elements()),
            "sections": len(self.body().findall(f".//{SECTPR}")),
        }

    def document_text(self, params: dict[str, Any]) -> Any:
        return {"text": "\n".join(visible_text(p) for _, p in self.paragraphs())}

    def document_inspect(self, params: dict[str, Any]) -> Any:
        return self.inspect()

    def caret_set(self, params: dict[str, Any]) -> Any:
        pos = params.get("pos")
        if not isinstance(pos, dict):
            raise Failed("bad parameters: `pos` or `page`/`x`/`y` required")
        path = pos.get("path", [pos.get("block", 0)])
        for candidate, paragraph in self.paragraphs():
            if candidate == path:
                offset = char_offset(paragraph_text(paragraph), int(pos.get("off", 0)))
                self.selection = Selection(self, paragraph, offset, offset)
                return self.selection.result()
        raise Failed("bad parameters: bad `pos`")

    def select_text(self, params: dict[str, Any]) -> Any:
        needle = params.get("text")
        if not isinstance(needle, str):
            raise Failed("bad parameters: `text` required")
        if not needle:
            raise Failed("bad parameters: `text` is empty")
        wanted = max(int(params.get("occurrence", 1) or 1), 1)
        count = 0
        for _, paragraph in self.paragraphs():
            text = paragraph_text(paragraph)
            start = text.find(needle)
            while start >= 0:
                count += 1
                if count == wanted:
                    self.selection = Selection(self, paragraph, start, start + len(needle))
                    return self.selection.result()
                start = text.find(needle, start + 1)
        raise Failed(f"`{needle}` not found")

    def text_insert(self, params: dict[str, Any]) -> Any:
        text = params.get("text")
        if not isinstance(text, str):
            raise Failed("bad parameters: `text` required")
        selection = self.selection
        end = self.replace(selection.paragraph, selection.start, selection.end, text)
        self.selection = Selection(self, selection.paragraph, end, end)
        return self.selection.result()

    def edit_replace_all(self, params: dict[str, Any]) -> Any:
        find, replacement = params.get("text"), params.get("with")
        if not isinstance(find, str) or not find or not isinstance(replacement, str):
            raise Failed("bad parameters: `text` and `with` required")
        pattern = find if params.get("regex") else re.escape(find)
        if params.get("wholeWord"):
            pattern = rf"\b{pattern}\b"
        try:
            compiled = re.compile(pattern, 0 if params.get("matchCase") else re.IGNORECASE)
        except re.error as error:
            raise Failed(f"bad parameters: {error}") from None
        replaced = 0
        for _, paragraph in self.paragraphs():
            for match in reversed(list(compiled.finditer(paragraph_text(paragraph)))):
                if match.end() > match.start():
                    self.replace(paragraph, match.start(), match.end(), replacement)
                    replaced += 1
        self.selection = Selection(self, self.selection.paragraph, 0, 0)
        return {"replaced": replaced}

    def para_style(self, params: dict[str, Any]) -> Any:
        wanted = params.get("style")
        if not isinstance(wanted, str):
            raise Failed("bad parameters: `style` required")
        squeeze = wanted.replace(" ", "").lower()
        for style in self.document.styles:
            if squeeze in (str(style.name).replace(" ", "").lower(), str(style.style_id).lower()):
                self.selection.paragraph.style = style.style_id
                return self.selection.result()
        raise Failed(f"no style `{wanted}`")

    def format_bold(self, params: dict[str, Any]) -> Any:
        selection = self.selection
        runs = [Run(r, None) for r in isolate(selection.paragraph, selection.start, selection.end)]
        value = params.get("value")
        if value is None:
            value = not all(run.bold for run in runs)
        for run in runs:
            run.bold = bool(value)
        return selection.result()

    def insert_table(self, params: dict[str, Any]) -> Any:
        rows, cols = params.get("rows"), params.get("cols")
        if not isinstance(rows, int) or not isinstance(cols, int) or rows < 1 or cols < 1:
            raise Failed("bad parameters: `rows` and `cols` required")
        table = self.document.add_table(rows=rows, cols=cols)
        if isinstance(params.get("style"), str):
            try:
                table.style = params["style"]
            except Exception:
                table._tbl.getparent().remove(table._tbl)
                raise Failed(f"no style `{params['style']}`") from None
        top = self.selection.paragraph
        while top.getparent() is not self.body():
            top = top.getparent()
        top.addnext(table._tbl)
        first = table._tbl.find(f".//{P}")
        self.selection = Selection(self, first, 0, 0)
        return self.selection.result()

    def review_new_comment(self, params: dict[str, Any]) -> Any:
        text = params.get("text", "")
        selection = self.selection
        start, end = selection.start, selection.end
        if start == end:
            start, end = word_at(paragraph_text(selection.paragraph), start)
        runs = isolate(selection.paragraph, start, end)
        if not runs:
            raise Failed("not available: there is no text here to comment on")
        initials = "".join(word[0] for word in self.author.split())
        comment = self.document.add_comment(
            [Run(r, None) for r in runs], text=str(text), author=self.author, initials=initials
        )
        for element in self.comment_elements():
            if element.get(qn("w:id")) == str(comment.comment_id):
                element.set(qn("w:date"), _now())
        return {"id": comment.comment_id, "story": comment.comment_id + 1}

    def review_comments(self, params: dict[str, Any]) -> Any:
        anchors: dict[str, dict[str, Any]] = {}
        for path, paragraph in self.paragraphs():
            for marker in paragraph.iter(COMMENT_START):
                offset = offset_before(paragraph, marker)
                anchors.setdefault(marker.get(qn("w:id")), position(path, paragraph, offset))
        found = []
        for element in self.comment_elements():
            id = element.get(qn("w:id"))
            text = "\n".join("".join(t.text or "" for t in p.iter(T)) for p in element.iter(P))
            found.append(
                {
                    "id": int(id),
                    "author": element.get(qn("w:author")),
                    "date": element.get(qn("w:date")),
                    "resolved": False,
                    "parent": None,
                    "text": text,
                    "anchor": anchors.get(id),
                }
            )
        found.sort(
            key=lambda c: (
                c["anchor"] is None,
                c["anchor"] and (c["anchor"]["path"], c["anchor"]["off"]),
            )
        )
        return found

    def review_track_changes(self, params: dict[str, Any]) -> Any:
        value = params.get("value")
        value = not self.tracking() if value is None else bool(value)
        settings = self.document.settings.element
        for flag in settings.findall(TRACK):
            settings.remove(flag)
        if value:
            earlier = [
                index for index, child in enumerate(settings) if child.tag in SETTINGS_BEFORE
            ]
            settings.insert(max(earlier, default=-1) + 1, OxmlElement("w:trackRevisions"))
        return {"value": value}

    def review_accept(self, params: dict[str, Any]) -> Any:
        return self.resolve(accept=True)

    def review_reject(self, params: dict[str, Any]) -> Any:
        return self.resolve(accept=False)

    def review_changes(self, params: dict[str, Any]) -> Any:
        return [
            {
                "kind": "insert" if change.element.tag == INS else "delete",
                "start": position(change.path, change.paragraph, change.start),
                "end": position(change.path, change.paragraph, change.end),
                "text": paragraph_text(change.paragraph)[change.start : change.end],
                "author": change.element.get(qn("w:author")),
                "date": change.element.get(qn("w:date")),
            }
            for change in self.changes()
        ]

    # ─── the document ───

    def _load(self, document: Any) -> None:
        self.document = document
        self.selection = Selection(self, self.paragraphs()[0][1], 0, 0)

    def body(self) -> Any:
        return self.document.element.body

    def paragraphs(self) -> list[tuple[list[int], Any]]:
        """Every paragraph of the body, with its path: ``[block]`` or ``[t, r, c, block]``."""
        found: list[tuple[list[int], Any]] = []
        blocks = [child for child in self.body() if child.tag in (P, TBL)]
        for index, block in enumerate(blocks):
            if block.tag == P:
                found.append(([index], block))
                continue
            for r, row in enumerate(block.findall(TR)):
                for c, cell in enumerate(row.findall(TC)):
                    for k, paragraph in enumerate(cell.findall(P)):
                        found.append(([index, r, c, k], paragraph))
        if not found:
            paragraph = OxmlElement("w:p")
            self.body().insert(0, paragraph)
            found.append(([0], paragraph))
        return found

    def words(self) -> int:
        return sum(len(visible_text(p).split()) for _, p in self.paragraphs())

    def pages(self) -> int:
        body = self.body()
        breaks = len([br for br in body.iter(BR) if br.get(qn("w:type")) == "page"])
        rendered = len(list(body.iter(RENDERED_BREAK)))
        characters = sum(len(visible_text(p)) for _, p in self.paragraphs())
        return 1 + max(breaks, rendered) + characters // 3000

    def tracking(self) -> bool:
        try:
            settings = self.document.part.part_related_by(RT.SETTINGS)
        except KeyError:
            return False
        return settings.element.find(TRACK) is not None

    def comment_elements(self) -> list[Any]:
        try:
            part = self.document.part.part_related_by(RT.COMMENTS)
        except KeyError:
            return []
        return list(part.element.iter(COMMENT))

    def properties(self) -> dict[str, Any]:
        core = self.document.core_properties
        return {
            "title": core.title,
            "subject": core.subject,
            "creator": core.author,
            "keywords": core.keywords,
            "description": core.comments,
            "lastModifiedBy": core.last_modified_by,
            "revision": core.revision,
            "category": core.category,
        }

    def inspect(self) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        for index, block in enumerate(child for child in self.body() if child.tag in (P, TBL)):
            if block.tag == P:
                text = paragraph_text(block)
                blocks.append(
                    {
                        "index": index,
                        "type": "paragraph",
                        "style": block.style or "Normal",
                        "len": len(text.encode()),
                        "text": visible_text(block),
                    }
                )
                continue
            rows = block.findall(TR)
            cells = [
                ["\n".join(visible_text(p) for p in cell.findall(P)) for cell in row.findall(TC)]
                for row in rows
            ]
            style = block.find(f"{qn('w:tblPr')}/{qn('w:tblStyle')}")
            blocks.append(
                {
                    "index": index,
                    "type": "table",
                    "rows": len(rows),
                    "cols": max((len(row) for row in cells), default=0),
                    "style": None if style is None else style.get(qn("w:val")),
                    "cells": cells,
                }
            )
        return {
            "blocks": blocks[:2000],
            "parts": [],
            "selection": {**self.selection.result(), "text": self.selection.text()},
            "pages": self.pages(),
            "words": self.words(),
            "sections": [],
            "comments": len(self.comment_elements()),
            "trackChanges": self.tracking(),
            "properties": self.properties(),
            "canUndo": False,
            "canRedo": False,
        }

    def replace(self, paragraph: Any, start: int, end: int, text: str) -> int:
        """Replace characters ``[start, end)`` of a paragraph, tracked if tracking is on."""
        track = self.tracking()
        targets = isolate(paragraph, start, end)
        spans = run_spans(paragraph)
        template = next(
            (r.find(RPR) for r, s, e in spans if s <= start < e or e == start > s), None
        )
        new = make_run(text, template)
        holder = new
        if track and text:
            holder = self.mark(OxmlElement("w:ins"))
            holder.append(new)
        if track:
            for target in targets:
                if target.getparent().tag != DEL:
                    deletion = self.mark(OxmlElement("w:del"))
                    target.addprevious(deletion)
                    deletion.append(target)
                    for t in target.findall(T):
                        t.tag = DELTEXT
        if text:
            if targets:
                last = targets[-1]
                (last.getparent() if last.getparent().tag in (INS, DEL) else last).addnext(holder)
            else:
                place(paragraph, start, holder)
        if not track:
            for target in targets:
                target.getparent().remove(target)
        return start + len(text) + (end - start if track else 0)

    def mark(self, element: Any) -> Any:
        used = [
            int(e.get(qn("w:id"), "0"))
            for e in self.body().iter(INS, DEL)
            if e.get(qn("w:id"), "").isdigit()
        ]
        element.set(qn("w:id"), str(max(used, default=0) + 1))
        element.set(qn("w:author"), self.author)
        element.set(qn("w:date"), _now())
        return element

    def changes(self) -> list[Change]:
        found: list[Change] = []
        for path, paragraph in self.paragraphs():
            spans = {r: (s, e) for r, s, e in run_spans(paragraph)}
            for element in paragraph.iter(INS, DEL):
                runs = [spans[r] for r in element.findall(R) if r in spans]
                if runs:
                    found.append(Change(path, paragraph, element, runs[0][0], runs[-1][1]))
        return found

    def resolve(self, accept: bool) -> Any:
        selection = self.selection
        start, end = selection.start, selection.end
        changes = self.changes()
        here = [
            change
            for change in changes
            if change.paragraph is selection.paragraph
            and (
                change.start < end and start < change.end
                if start < end
                else change.start <= start <= change.end
            )
        ]
        if not here:
            after = [c for c in changes if (c.path, c.start) >= (selection.path(), end)] or changes
            if after:
                self.selection = Selection(self, after[0].paragraph, after[0].start, after[0].end)
            return self.selection.result()
        for change in here:
            element = change.element
            keep = (element.tag == INS) == accept
            if keep:
                for t in element.iter(DELTEXT):
                    t.tag = T
                for child in list(element):
                    element.addprevious(child)
            element.getparent().remove(element)
        self.selection = Selection(self, selection.paragraph, start, start)
        return self.selection.result()


class Change:
    def __init__(self, path: list[int], paragraph: Any, element: Any, start: int, end: int) -> None:
        self.path, self.paragraph, self.element, self.start, self.end = (
            path,
            paragraph,
            element,
            start,
            end,
        )


class Selection:
    def __init__(self, session: Session, paragraph: Any, start: int, end: int) -> None:
        self.session, self.paragraph, self.start, self.end = session, paragraph, start, end

    def path(self) -> list[int]:
        return next(path for path, p in self.session.paragraphs() if p is self.paragraph)

    def text(self) -> str:
        return paragraph_text(self.paragraph)[self.start : self.end]

    def result(self) -> dict[str, Any]:
        path = self.path()
        return {
            "anchor": position(path, self.paragraph, self.start),
            "focus": position(path, self.paragraph, self.end),
        }


# ─── paragraphs as WordCraft's text model ─────────────────────────────────────


def owner(element: Any) -> Any:
    return next(element.iterancestors(P), None)


def runs_of(paragraph: Any) -> list[Any]:
    return [r for r in paragraph.iter(R) if owner(r) is paragraph]


def run_text(run: Any) -> str:
    return "".join(child.text or "" for child in run if child.tag in (T, DELTEXT))


def run_spans(paragraph: Any) -> list[tuple[Any, int, int]]:
    spans, offset = [], 0
    for run in runs_of(paragraph):
        length = len(run_text(run))
        spans.append((run, offset, offset + length))
        offset += length
    return spans


def paragraph_text(paragraph: Any) -> str:
    """The paragraph's text as WordCraft's model has it: deleted text included."""
    return "".join(run_text(r) for r in runs_of(paragraph))


def visible_text(paragraph: Any) -> str:
    return "".join(run_text(r) for r in runs_of(paragraph) if r.getparent().tag != DEL)


def char_offset(text: str, byte_offset: int) -> int:
    return len(text.encode()[:byte_offset].decode(errors="ignore"))


def position(path: list[int], paragraph: Any, offset: int) -> dict[str, Any]:
    return {"story": "body", "path": path, "off": len(paragraph_text(paragraph)[:offset].encode())}


def offset_before(paragraph: Any, marker: Any) -> int:
    order = {element: index for index, element in enumerate(paragraph.iter())}
    return sum(e - s for r, s, e in run_spans(paragraph) if order[r] < order[marker])


def word_at(text: str, offset: int) -> tuple[int, int]:
    for match in re.finditer(r"\w+", text):
        if match.start() <= offset <= match.end():
            return match.start(), match.end()
    return offset, offset


def split_run(run: Any, at: int) -> None:
    """Split a run in two at a character offset inside it."""
    right = copy.deepcopy(run)
    trim(run, 0, at)
    trim(right, at, None)
    run.addnext(right)


def trim(run: Any, start: int, end: int | None) -> None:
    offset = 0
    for child in list(run):
        if child.tag == RPR:
            continue
        if child.tag in (T, DELTEXT):
            text = child.text or ""
            low = max(start - offset, 0)
            high = len(text) if end is None else max(min(end - offset, len(text)), 0)
            offset += len(text)
            if text[low:high]:
                child.text = text[low:high]
                child.set(XML_SPACE, "preserve")
            else:
                run.remove(child)
        elif not (start <= offset and (end is None or offset < end)):
            run.remove(child)


def isolate(paragraph: Any, start: int, end: int) -> list[Any]:
    """Split runs so ``[start, end)`` is whole runs; return them (none for an empty range)."""
    for at in (start, end):
        for run, s, e in run_spans(paragraph):
            if s < at < e:
                split_run(run, at - s)
                break
    return [r for r, s, e in run_spans(paragraph) if start <= s and e <= end and e > s]


def place(paragraph: Any, offset: int, element: Any) -> None:
    spans = run_spans(paragraph)
    before = [r for r, s, e in spans if e == offset and e > s]
    after = [r for r, s, e in spans if s >= offset]
    if before:
        run = before[-1]
        (run.getparent() if run.getparent().tag in (INS, DEL) else run).addnext(element)
    elif after:
        run = after[0]
        (run.getparent() if run.getparent().tag in (INS, DEL) else run).addprevious(element)
    else:
        paragraph.append(element)


def make_run(text: str, template: Any) -> Any:
    run = OxmlElement("w:r")
    if template is not None:
        run.append(copy.deepcopy(template))
    t = OxmlElement("w:t")
    t.text = text
    t.set(XML_SPACE, "preserve")
    run.append(t)
    return run


COMMANDS: dict[str, Any] = {
    "file.new": Session.file_new,
    "file.open": Session.file_open,
    "file.save": Session.file_save,
    "file.setAuthor": Session.file_set_author,
    "file.info": Session.file_info,
    "document.text": Session.document_text,
    "document.inspect": Session.document_inspect,
    "caret.set": Session.caret_set,
    "select.text": Session.select_text,
    "text.insert": Session.text_insert,
    "edit.replaceAll": Session.edit_replace_all,
    "para.style": Session.para_style,
    "format.bold": Session.format_bold,
    "insert.table": Session.insert_table,
    "review.newComment": Session.review_new_comment,
    "review.comments": Session.review_comments,
    "review.trackChanges": Session.review_track_changes,
    "review.accept": Session.review_accept,
    "review.reject": Session.review_reject,
    "review.changes": Session.review_changes,
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
