"""Bodies: the file an upload or a check-in sends, raw or in a form, streamed (RFC-0003, RFC 7578).

A client sends the file's bytes as the raw body, typed as the file (a .docx), as
``application/octet-stream`` or not at all; a browser or a portal sends it as a
``multipart/form-data`` form, whose one file part (the part with a ``filename``) holds the
bytes beside text fields. :func:`read_body` answers both as a :class:`Body`: the file's bytes as
a stream, which the service hashes and spools as they arrive, so the size limit that applies to
a raw body applies to the file part alone, and nothing is ever held whole in memory.

A form is parsed by python-multipart's streaming parser as it arrives. The text fields before
the file are read (those the route names, within their length; others are skipped), the parse
stops at the file part's headers, and the file part's bytes are the stream. Once that part
ends, the stream reads the rest of the form before it ends, so a second file, a field the route
reads sent after the file, or a form that breaks off is refused there, before anything is
stored. Everything else is bounded: at most :data:`MAX_PARTS` parts, each text field at most
:data:`MAX_FIELD` bytes, each part's headers as python-multipart bounds them. A browser's empty
file part (a file input left empty) is no file. Refusals::

    Rejection                  (artifactr.core)
    ├── UnsupportedMediaType   a raw body typed as no format the route takes (415)
    ├── MalformedForm          the body is not the multipart/form-data it says it is (400)
    └── FormRefused            a form without its one file, or out of bounds (422)
"""

from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Final, Literal, override

from artifactr.core import Rejection
from pydantic import JsonValue
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from artifactr.files.core.manifests import saved_name

FORM: Final = "multipart/form-data"
"""The media type of a form that carries a file."""

URLENCODED: Final = "application/x-www-form-urlencoded"
"""The media type of a form without ``enctype``: it can't carry a file."""

OCTETS: Final = "application/octet-stream"
"""What a browser or a portal that knows no better calls any file."""

MAX_PARTS: Final = 16
"""The most parts a form may have, its file among them."""

MAX_FIELD: Final = 4_000
"""The most bytes of a text field: a summary's 1,000 characters in any script."""

FormProblem = Literal["no_file", "two_files", "late_field", "too_many_parts", "field_too_large"]
"""What is wrong with a form that parses.

- ``no_file``: no part has a ``filename``, or the only one is empty (a file input left empty),
  or the form is ``application/x-www-form-urlencoded``, which can't carry a file.
- ``two_files``: more than one part has a ``filename``.
- ``late_field``: a field the route reads comes after the file, too late to use.
- ``too_many_parts``: more than :data:`MAX_PARTS` parts.
- ``field_too_large``: a text field over :data:`MAX_FIELD` bytes, or over its route's length.
"""


class MalformedForm(Rejection):
    """A ``multipart/form-data`` body that doesn't parse: no boundary, a broken one, or cut off.

    Its code is ``malformed_form``; the files router answers 400.
    """

    code: ClassVar[str] = "malformed_form"

    def __init__(self, problem: str) -> None:
        super().__init__(f"the body is not the multipart/form-data its type says: {problem}")


class UnsupportedMediaType(Rejection):
    """A raw body whose ``Content-Type`` names no format the route takes (``text/plain``).

    Its code is ``unsupported_media_type`` and its details name the ``media_type`` sent and the
    ``accepted`` ones; the files router answers 415.
    """

    code: ClassVar[str] = "unsupported_media_type"

    def __init__(self, media_type: str, accepted: frozenset[str]) -> None:
        listed = ", ".join(sorted(accepted))
        super().__init__(
            f"{media_type} is not a format taken here: send {listed}, {OCTETS}, or a {FORM} form"
        )
        self.media_type = media_type
        self.accepted = accepted

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the type sent, and the types taken."""
        accepted: list[JsonValue] = [*sorted(self.accepted)]
        return {"media_type": self.media_type, "accepted": accepted}


class FormRefused(Rejection):
    """A form that parses, but doesn't carry one file as the route takes it.

    Its code is ``form_refused`` and its details name the ``problem`` (:data:`FormProblem`);
    the files router answers 422.
    """

    code: ClassVar[str] = "form_refused"

    def __init__(
        self, problem: FormProblem, message: str, *, fields: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.problem: FormProblem = problem
        self.fields: Mapping[str, str] = fields or {}
        """The text fields the route reads that were read before the refusal."""

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return what is wrong with the form."""
        return {"problem": self.problem}


@dataclass(frozen=True)
class Body:
    """The file a request sends: its bytes as a stream, and what the request says of it."""

    chunks: AsyncIterator[bytes]
    """The file's bytes, as they arrive; a form's rest is read, and checked, after them."""
    media_type: str | None
    """The file's media type; None if unsaid or ``application/octet-stream``."""
    filename: str | None = None
    """The form's file name, cleaned to a name the upload takes; None if raw or unnamed."""
    fields: Mapping[str, str] = field(default_factory=dict[str, str])
    """The text fields the route reads, as sent before the file."""


def media_type(content_type: str) -> str | None:
    """Return the media type a ``Content-Type`` names, or None if it says nothing of the file.

    A browser or a portal that knows no better sends ``application/octet-stream``: the bytes
    themselves decide, as with no type at all.
    """
    value = content_type.split(";", 1)[0].strip().lower()
    return None if value in {"", OCTETS} else value


async def read_body(
    request: Request,
    *,
    fields: Mapping[str, int] | None = None,
    accept: frozenset[str] | None = None,
) -> Body:
    """Return the file a request sends, raw or in a form; a form is read up to its file part.

    Args:
        request: The upload or check-in.
        fields: The text fields the route reads from a form, each with its most characters.
        accept: The media types a raw body may be typed as (beside octets and none); any if
            None.

    Raises:
        UnsupportedMediaType: If a raw body is typed as none of ``accept``.
        MalformedForm: If a form doesn't parse as far as its file.
        FormRefused: If a form has no file before it ends, or a field out of bounds.
    """
    content_type = request.headers.get("content-type", "")
    kind = media_type(content_type)
    if kind == URLENCODED:
        raise FormRefused(
            "no_file",
            "a form without enctype=multipart/form-data carries no file: send it as "
            "multipart/form-data, or send the file as the body",
        )
    if kind != FORM:
        if kind is not None and accept is not None and kind not in accept:
            raise UnsupportedMediaType(kind, accept)
        return Body(request.stream(), kind)
    return await _Form(request.stream(), content_type, fields or {}).head()


def _file_name(filename: str) -> str | None:
    # A browser sends the name alone; some clients send a path, of which the name is the end.
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return saved_name(name) if name.strip() else None


def _text(value: bytes) -> str:
    # Header parameters and fields arrive as bytes: UTF-8, as browsers send them.
    return value.decode("utf-8", "replace")


# ─── the form ─────────────────────────────────────────────────────────────────

_Event = tuple[Literal["begin", "name", "value", "header", "headers", "data", "end", "done"], bytes]


@dataclass
class _Part:
    headers: dict[str, str]
    name: str
    filename: str | None


class _Form:
    """A form parsed as its body arrives: its events in order, read on demand."""

    def __init__(
        self, body: AsyncIterator[bytes], content_type: str, fields: Mapping[str, int]
    ) -> None:
        self._body = body
        self._fields = fields
        self._events: deque[_Event] = deque()
        self._parts = 0
        boundary = parse_options_header(content_type)[1].get(b"boundary")
        if not boundary:
            raise MalformedForm("its Content-Type names no boundary")
        try:
            self._parser = MultipartParser(
                boundary,
                {
                    "on_part_begin": lambda: self._events.append(("begin", b"")),
                    "on_header_field": lambda data, start, end: self._events.append(
                        ("name", data[start:end])
                    ),
                    "on_header_value": lambda data, start, end: self._events.append(
                        ("value", data[start:end])
                    ),
                    "on_header_end": lambda: self._events.append(("header", b"")),
                    "on_headers_finished": lambda: self._events.append(("headers", b"")),
                    "on_part_data": lambda data, start, end: self._events.append(
                        ("data", data[start:end])
                    ),
                    "on_part_end": lambda: self._events.append(("end", b"")),
                    "on_end": lambda: self._events.append(("done", b"")),
                },
            )
        except FormParserError as error:
            raise MalformedForm(str(error)) from error

    async def head(self) -> Body:
        """Return the form's file, having read the fields before it."""
        found: dict[str, str] = {}
        while (part := await self._part()) is not None:
            if part.filename is None:
                value = await self._value(part)
                if part.name in self._fields:
                    found[part.name] = value
                continue
            first = await self._data()
            if first is None and not part.filename:
                continue  # a file input left empty
            return Body(
                self._chunks(first),
                media_type(part.headers.get("content-type", "")),
                _file_name(part.filename),
                found,
            )
        raise FormRefused(
            "no_file", "the form has no file: send the file as a part with a filename", fields=found
        )

    async def _chunks(self, first: bytes | None) -> AsyncIterator[bytes]:
        data = first
        while data is not None:
            yield data
            data = await self._data()
        while (part := await self._part()) is not None:
            if part.filename is not None:
                raise FormRefused("two_files", "the form has two files: send one at a time")
            if part.name in self._fields:
                raise FormRefused(
                    "late_field",
                    f"the form's {part.name} comes after the file: send it before the file",
                )
            await self._value(part)

    async def _event(self) -> _Event:
        while not self._events:
            chunk = await anext(self._body, None)
            if chunk is None:
                raise MalformedForm("it ends before its closing boundary")
            try:
                self._parser.write(chunk)
            except FormParserError as error:
                raise MalformedForm(str(error)) from error
        return self._events.popleft()

    async def _part(self) -> _Part | None:
        """Return the next part's headers, or None once the form ends."""
        kind, _ = await self._event()
        if kind == "done":
            return None
        self._parts += 1
        if self._parts > MAX_PARTS:
            raise FormRefused("too_many_parts", f"the form has more than {MAX_PARTS} parts")
        headers: dict[str, str] = {}
        name, value = b"", b""
        while (event := await self._event())[0] != "headers":
            match event:
                case ("name", piece):
                    name += piece
                case ("value", piece):
                    value += piece
                case _:
                    headers[_text(name).lower()] = value.decode("latin-1")
                    name, value = b"", b""
        options = parse_options_header(headers.get("content-disposition"))[1]
        filename = options.get(b"filename")
        return _Part(
            headers,
            _text(options.get(b"name", b"")),
            None if filename is None else _text(filename),
        )

    async def _data(self) -> bytes | None:
        """Return the part's next bytes, or None at its end."""
        kind, data = await self._event()
        return data if kind == "data" else None

    async def _value(self, part: _Part) -> str:
        """Return a text field's value, within its bounds."""
        value = b""
        while (data := await self._data()) is not None:
            value += data
            if len(value) > MAX_FIELD:
                raise FormRefused(
                    "field_too_large", f"the form's {part.name} is over {MAX_FIELD:,} bytes"
                )
        text = _text(value)
        most = self._fields.get(part.name)
        if most is not None and len(text) > most:
            raise FormRefused(
                "field_too_large", f"the form's {part.name} is over {most:,} characters"
            )
        return text
