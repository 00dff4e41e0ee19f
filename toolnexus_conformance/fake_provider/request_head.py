"""Reading a request's head for the fake provider: the request line and the header fields.

The stdlib handler reads header fields with the email package, a cost every provider
request of every run pays (benchmarks/README.md). The clients the harness meets send plain
``Name: value`` lines, which are split here. A head with anything else in it (a folded
line, a line without a colon, a name with a space or a control character, a bare CR) goes
to the stdlib's reader as it is, so the stdlib's reading of odd input stays the reference.
"""

from __future__ import annotations

import http.client
import io
import re
from dataclasses import dataclass
from http import HTTPStatus

# The stdlib's limits (http.client): one line, and the number of header lines.
MAX_LINE = 65536
MAX_FIELDS = 100

# A field name as the email package reads one: printable ASCII but the colon, at least one.
_NAME = re.compile(r"[\041-\071\073-\176]+")
_LINE_ENDS = (b"\r\n", b"\n", b"")


@dataclass(frozen=True)
class RequestLine:
    method: str
    target: str
    version: str  # as sent, e.g. "HTTP/1.1"
    version_info: tuple[int, int]


@dataclass(frozen=True)
class Refusal:
    """Why a request line is refused: the status to answer (0: close without answering)."""

    status: int
    message: str = ""


class HeadTooLarge(Exception):
    """A header line or the number of header lines is over the limit (answered 431)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def request_line(text: str) -> RequestLine | Refusal:
    """``METHOD target HTTP/x.y``; HTTP/2 and later are not this server's, and HTTP/0.9's
    two-word form is refused (no client of a provider API sends it)."""
    words = text.split()
    if not words:
        return Refusal(0)
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        return Refusal(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({text!r})")
    version = words[2]
    numbers = version[len("HTTP/"):].split(".")
    if len(numbers) != 2 or not all(n.isdigit() and n.isascii() and len(n) <= 10 for n in numbers):
        return Refusal(HTTPStatus.BAD_REQUEST, f"Bad request version ({version!r})")
    info = (int(numbers[0]), int(numbers[1]))
    if info >= (2, 0):
        return Refusal(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"Invalid HTTP version ({version[len('HTTP/'):]})")
    target = words[1]
    if target.startswith("//"):  # never read as a scheme-less absolute URL
        target = "/" + target.lstrip("/")
    return RequestLine(words[0], target, version, info)


def read_field_lines(rfile: io.BufferedIOBase) -> list[bytes]:
    """The raw header lines up to and including the empty line (or the end of input)."""
    lines: list[bytes] = []
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise HeadTooLarge("Line too long", "header line")
        lines.append(line)
        if len(lines) > MAX_FIELDS:
            raise HeadTooLarge("Too many headers", f"got more than {MAX_FIELDS} headers")
        if line in _LINE_ENDS:
            return lines


class Fields:
    """Header fields in arrival order, looked up by name regardless of case: what the
    server reads of ``http.client.HTTPMessage`` (``get`` and ``items``)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = pairs
        self._first: dict[str, str] = {}  # by lower-case name, the first field of each name
        for key, value in pairs:
            self._first.setdefault(key.lower(), value)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._first.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        return list(self._pairs)


def plain_fields(lines: list[bytes]) -> Fields | None:
    """The fields of ``lines`` when every one is a plain ``Name: value`` line; None otherwise."""
    pairs: list[tuple[str, str]] = []
    for line in lines:
        if line in _LINE_ENDS:
            break
        text = line.decode("iso-8859-1")
        body = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
        name, colon, value = body.partition(":")
        if not colon or "\r" in body or "\n" in body or _NAME.fullmatch(name) is None:
            return None
        pairs.append((name, value.lstrip(" \t")))
    return Fields(pairs)


def parse_fields(lines: list[bytes]) -> Fields | http.client.HTTPMessage:
    """The header fields of ``lines`` (from :func:`read_field_lines`): read here when plain,
    by the stdlib otherwise."""
    plain = plain_fields(lines)
    return plain if plain is not None else http.client.parse_headers(io.BytesIO(b"".join(lines)))
