"""HTTP/1.1 framing of the fast HTTP client (``plain.py``): no I/O here.

The plain client exists to spend less CPU per provider request than httpx, never to send or
read anything differently: the fake provider records every request and the goldens come
from reference_py, so a request must be the very one httpx sends and a response must be read
as httpx reads it. This module owns the message framing, each fact as httpx 0.28 / h11 has
it (``tests/reference/test_http_plain_parity.py`` holds them against the installed httpx):

- which URLs the plain client takes (plain ``http://host[:port]/path``; anything else goes
  to httpx, which normalizes and quotes URLs in ways not worth copying);
- the request head: httpx's default headers, then the caller's, then Content-Length and
  Content-Type, ``Host`` first; the JSON body encoded as httpx's ``json=`` encodes it;
- the response head, its body framing and whether the connection stays open.

The body's decoding and line splitting are ``text.py``'s.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import LocalProtocolError, RemoteProtocolError

# ------------------------------------------------------------------ URLs

_HOST = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")
_PATH = re.compile(r"[A-Za-z0-9._~/-]*")


@dataclass(frozen=True)
class PlainURL:
    host: str
    port: int
    target: str  # the request target: the path

    @property
    def netloc(self) -> str:
        """The Host header value, as httpx writes it (the default port left out)."""
        return self.host if self.port == 80 else f"{self.host}:{self.port}"


@functools.lru_cache(maxsize=64)  # a client posts to one or two URLs, again and again
def plain_url(url: str) -> PlainURL | None:
    """The URL when the plain client can send it exactly as httpx would, else None: a
    plain ``http://`` URL with a lower-case-able DNS name or IPv4 host, no user info, query
    or fragment, and a path of unreserved characters without dot segments."""
    if not plain_path_available() or "?" in url or "#" in url:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.scheme != "http" or "@" in parts.netloc or not _HOST.fullmatch(host):
        return None
    path = parts.path or "/"
    if not _PATH.fullmatch(path) or any(seg in (".", "..") for seg in path.split("/")):
        return None
    return PlainURL(host, 80 if port is None else port, path)


# ------------------------------------------------------------------ the request


@functools.lru_cache(maxsize=1)
def plain_path_available() -> bool:
    """httpx advertises ``br``/``zstd`` when their optional decoders are installed; the
    plain client decodes gzip and deflate only, so then every request goes to httpx."""
    optional = ("brotli", "brotlicffi", "zstandard")
    return not any(importlib.util.find_spec(name) is not None for name in optional)


@functools.lru_cache(maxsize=1)
def httpx_version() -> str:
    """The installed httpx's version, for its User-Agent, read without importing httpx
    (importing it is what the plain path saves); importing it is the fallback."""
    spec = importlib.util.find_spec("httpx")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(folder) / "__version__.py").read_text(encoding="utf-8")
        except OSError:
            continue
        found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
        if found:
            return found.group(1)
    import httpx

    return str(httpx.__version__)


@functools.lru_cache(maxsize=1)
def default_fields() -> tuple[tuple[bytes, bytes], ...]:
    """httpx's client headers, in its order (``Host`` is added per request)."""
    return (
        (b"Accept", b"*/*"),
        (b"Accept-Encoding", b"gzip, deflate"),
        (b"Connection", b"keep-alive"),
        (b"User-Agent", f"python-httpx/{httpx_version()}".encode("ascii")),
    )


def encode_json(body: object) -> bytes:
    """The body httpx's ``json=`` sends (compact, UTF-8, NaN refused; ``json=None`` sends none)."""
    if body is None:
        return b""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def request_fields(
    url: PlainURL, headers: dict[str, str], content_length: int, is_json: bool = True, *, typed: bool = True
) -> list[tuple[bytes, bytes]]:
    """The header fields httpx sends for a ``json=`` POST, in its order: defaults, the
    caller's (replacing a default of the same name), Content-Length and Content-Type
    unless given; first Host and, without ``json``, Content-Length 0. Names and values are
    ASCII, as httpx requires. ``typed`` false: a ``content=`` POST of bytes, for which httpx
    adds Content-Length only."""
    given = [(name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()]
    replaced = {name.lower() for name, _ in given}
    fields = [(name, value) for name, value in default_fields() if name.lower() not in replaced]
    fields += given
    present = {name.lower() for name, _ in fields}
    if is_json:  # the body's own headers come last, each unless given
        own = ((b"Content-Length", str(content_length).encode()), (b"Content-Type", b"application/json"))
        for name, value in own if typed else own[:1]:
            if name.lower() not in present:
                fields.append((name, value))
                present.add(name.lower())
    auto = [] if b"host" in present else [(b"Host", url.netloc.encode("ascii"))]
    if not present & {b"content-length", b"transfer-encoding"}:  # a POST without a body says so
        auto.append((b"Content-Length", b"0"))
    return auto + fields


_FIELD_NAME = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FIELD_VALUE = re.compile(rb"([^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")


def request_head(method: str, url: PlainURL, fields: list[tuple[bytes, bytes]]) -> bytes:
    """The request line and header block; refuses what h11 refuses to send."""
    lines = [f"{method} {url.target} HTTP/1.1".encode("ascii")]
    for name, value in fields:
        if not _FIELD_NAME.fullmatch(name):
            raise LocalProtocolError(f"Illegal header name {name!r}")
        if not _FIELD_VALUE.fullmatch(value):
            raise LocalProtocolError(f"Illegal header value {value!r}")
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


# ------------------------------------------------------------------ the response

_STATUS_LINE = re.compile(rb"HTTP/(\d\.\d) (\d{3})(?: ([^\r\n]*))?")
_HEADER_LINE = re.compile(rb"([-!#$%&'*+.^_`|~0-9a-zA-Z]+):[ \t]*(.*?)[ \t]*")
HEAD_END = re.compile(rb"\r?\n\r?\n")


@dataclass(frozen=True)
class ResponseHead:
    status: int
    http_version: str  # "HTTP/1.1"
    fields: tuple[tuple[str, str], ...]  # lower-case names, decoded values, in order

    def get_list(self, name: str, split_commas: bool = False) -> list[str]:
        values = [value for key, value in self.fields if key == name]
        if not split_commas:
            return values
        return [item.strip() for value in values for item in value.split(",")]

    def get(self, name: str) -> str | None:
        """All values of ``name`` joined with ", " (httpx's ``headers.get``), or None."""
        values = self.get_list(name)
        return ", ".join(values) if values else None


def parse_head(block: bytes) -> ResponseHead:
    """A response's status line and header fields (the block without its blank line)."""
    lines = re.split(rb"\r?\n", block)
    status_line = _STATUS_LINE.fullmatch(lines[0])
    if status_line is None:
        raise RemoteProtocolError(f"illegal status line: {bytearray(lines[0])!r}")  # h11's words
    raw: list[tuple[bytes, bytes]] = []
    for line in _unfolded(lines[1:]):
        field = _HEADER_LINE.fullmatch(line)
        if field is None:
            raise RemoteProtocolError(f"illegal header line: {bytearray(line)!r}")
        raw.append((field.group(1).lower(), field.group(2)))
    encoding = _header_encoding(raw)
    fields = tuple((name.decode("ascii"), value.decode(encoding)) for name, value in raw)
    return ResponseHead(int(status_line.group(2)), "HTTP/" + status_line.group(1).decode(), fields)


def _unfolded(lines: list[bytes]) -> list[bytes]:
    """Header lines with obsolete line folding undone (a line starting with a space or tab
    continues the previous one, joined by one space), as h11 reads them."""
    joined: list[bytes] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if not joined:
                raise RemoteProtocolError("continuation line at start of headers")
            joined[-1] += b" " + line.lstrip(b" \t")
        else:
            joined.append(line)
    return joined


def _header_encoding(raw: list[tuple[bytes, bytes]]) -> str:
    """httpx decodes header values as ASCII, else UTF-8, else Latin-1, all alike."""
    for encoding in ("ascii", "utf-8"):
        try:
            for _, value in raw:
                value.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return "iso-8859-1"


@dataclass(frozen=True)
class Framing:
    """How the body ends: ``none``, ``length`` (``length`` bytes), ``chunked`` or ``close``."""

    kind: str
    length: int = 0


def framing(head: ResponseHead) -> Framing:
    """The body framing of a response to a POST, as h11 reads it."""
    if head.status in (204, 304) or 100 <= head.status < 200:
        return Framing("none")
    encodings = head.get_list("transfer-encoding", split_commas=True)
    if encodings:
        if [e.lower() for e in encodings] != ["chunked"]:
            raise RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
        return Framing("chunked")
    lengths = set(head.get_list("content-length", split_commas=True))
    if not lengths:
        return Framing("close")
    if len(lengths) > 1 or not next(iter(lengths)).isdigit():
        raise RemoteProtocolError("bad Content-Length")
    return Framing("length", int(next(iter(lengths))))


def keeps_alive(head: ResponseHead, body: Framing) -> bool:
    """Whether the connection may carry another request once this body is read."""
    if head.http_version < "HTTP/1.1" or body.kind == "close" or head.status == 101:
        return False
    return "close" not in [token.lower() for token in head.get_list("connection", split_commas=True)]


