"""HTTP/1.1 wire format of reference_py's plain-HTTP client (``http_plain.py``): no I/O here.

The plain client exists to spend less CPU per provider request than httpx, never to send or
read anything differently: the fake provider records every request, goldens come from this
oracle, so a request must be the very one httpx sends and a response must read the same.
This module owns those facts, each copied from httpx 0.28 / h11 behaviour (the parity tests
in ``tests/reference/test_http_plain_parity.py`` hold them against the installed httpx):

- which URLs the plain client takes (plain ``http://host[:port]/path``; anything else goes
  to httpx, which normalizes and quotes URLs in ways not worth copying);
- the request head: httpx's default headers, then the caller's, then Content-Length and
  Content-Type, ``Host`` first; the JSON body encoded as httpx's ``json=`` encodes it;
- the response head, its body framing, keep-alive, Content-Encoding and charset;
- line splitting exactly as httpx's ``aiter_lines`` (``str.splitlines`` semantics);
- the errors, named as httpx's so a ProviderError reads the same.
"""

from __future__ import annotations

import codecs
import functools
import importlib.util
import json
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


class PlainHTTPError(Exception):
    """Base of the plain client's errors; subclasses carry httpx's class names."""


class ConnectError(PlainHTTPError):
    pass


class ConnectTimeout(PlainHTTPError):
    pass


class ReadTimeout(PlainHTTPError):
    pass


class WriteTimeout(PlainHTTPError):
    pass


class PoolTimeout(PlainHTTPError):
    pass


class ReadError(PlainHTTPError):
    pass


class WriteError(PlainHTTPError):
    pass


class RemoteProtocolError(PlainHTTPError):
    pass


class LocalProtocolError(PlainHTTPError):
    pass


class DecodingError(PlainHTTPError):
    pass


def is_http_error(exc: BaseException) -> bool:
    """An error of the HTTP exchange itself (plain client or httpx), not of the caller."""
    if isinstance(exc, PlainHTTPError):
        return True
    httpx = sys.modules.get("httpx")  # never imported here: an httpx error implies httpx is loaded
    return httpx is not None and isinstance(exc, httpx.HTTPError)


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


def default_headers() -> list[tuple[str, str]]:
    """httpx's client headers, in its order (``Host`` is added per request)."""
    return [
        ("Accept", "*/*"),
        ("Accept-Encoding", "gzip, deflate"),
        ("Connection", "keep-alive"),
        ("User-Agent", f"python-httpx/{httpx_version()}"),
    ]


def encode_json(body: object) -> bytes:
    """The body httpx's ``json=`` sends (compact, UTF-8, NaN refused)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def request_fields(url: PlainURL, headers: dict[str, str], content_length: int) -> list[tuple[bytes, bytes]]:
    """The header fields httpx sends for a ``json=`` POST, in its order: defaults, the
    caller's (replacing a default of the same name), Content-Length and Content-Type
    unless given, Host first. Names and values are ASCII, as httpx requires."""
    given = [(name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()]
    replaced = {name.lower() for name, _ in given}
    fields = [(n.encode("ascii"), v.encode("ascii")) for n, v in default_headers() if n.lower().encode() not in replaced]
    fields += given
    present = {name.lower() for name, _ in fields}
    for name, value in ((b"Content-Length", str(content_length).encode()), (b"Content-Type", b"application/json")):
        if name.lower() not in present:
            fields.append((name, value))
    if b"host" not in present:
        fields.insert(0, (b"Host", url.netloc.encode("ascii")))
    return fields


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
        raise RemoteProtocolError(f"illegal status line: {lines[0]!r}")
    raw: list[tuple[bytes, bytes]] = []
    for line in _unfolded(lines[1:]):
        field = _HEADER_LINE.fullmatch(line)
        if field is None:
            raise RemoteProtocolError(f"illegal header line: {line!r}")
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


class ContentDecoder:
    """Undoes the response's Content-Encoding (gzip, deflate, identity; others are passed
    through undecoded, as httpx does with an encoding it has no decoder for)."""

    def __init__(self, head: ResponseHead) -> None:
        names = [value.strip().lower() for value in head.get_list("content-encoding", split_commas=True)]
        # applied in header order, so undone last-first
        self._steps = [_Decompressor(name) for name in reversed(names) if name in ("gzip", "deflate")]

    def decode(self, data: bytes) -> bytes:
        for step in self._steps:
            data = step.decode(data)
        return data

    def flush(self) -> bytes:
        data = b""
        for step in self._steps:
            data = step.decode(data) + step.flush()
        return data


class _Decompressor:
    def __init__(self, name: str) -> None:
        self._deflate = name == "deflate"
        self._first = True
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16)

    def decode(self, data: bytes) -> bytes:
        first, self._first = self._first, False
        try:
            return self._zlib.decompress(data)
        except zlib.error as exc:
            if self._deflate and first:  # a raw deflate stream without the zlib header
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.decode(data)
            raise DecodingError(str(exc)) from exc

    def flush(self) -> bytes:
        try:
            return self._zlib.flush()
        except zlib.error as exc:
            raise DecodingError(str(exc)) from exc


def text_encoding(head: ResponseHead) -> str:
    """The charset of Content-Type when Python knows it, else UTF-8 (httpx's default)."""
    content_type = head.get("content-type")
    if content_type is None or ";" not in content_type:
        return "utf-8"
    import email.message  # only a Content-Type with parameters needs the parser httpx uses

    message = email.message.Message()
    message["content-type"] = content_type
    charset = message.get_content_charset(failobj=None)
    if charset is None:
        return "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        return "utf-8"
    return charset


def decode_text(content: bytes, encoding: str) -> str:
    """httpx's ``response.text``: undecodable bytes become U+FFFD."""
    return codecs.getincrementaldecoder(encoding)(errors="replace").decode(content, True) if content else ""


# ------------------------------------------------------------------ lines

# The characters str.splitlines breaks on; "\r\n" counts as one break.
_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class LineSplitter:
    """Text pieces in, complete lines out (terminators dropped), as ``str.splitlines`` of
    the whole text: a line is released once its break has arrived; a final ``\\r`` waits
    for the next piece, which may start with the ``\\n`` of a ``\\r\\n``."""

    def __init__(self) -> None:
        self._held: list[str] = []  # the text after the last released break

    def feed(self, text: str) -> list[str]:
        if not text:
            return []
        if not _BREAK.search(text) and not (self._held and self._held[-1].endswith("\r")):
            self._held.append(text)  # no break: nothing to release (and no rescan later)
            return []
        pieces = "".join(self._held + [text]).splitlines(keepends=True)
        last = pieces[-1]
        if _ends_line(last) and not last.endswith("\r"):
            self._held = []
        else:
            self._held = [pieces.pop()]
        return [_strip_break(piece) for piece in pieces]

    def flush(self) -> list[str]:
        """The last line, when the text did not end with a break."""
        rest, self._held = "".join(self._held), []
        return [_strip_break(rest)] if rest else []


def _ends_line(piece: str) -> bool:
    return bool(piece) and _BREAK.fullmatch(piece[-1]) is not None


def _strip_break(piece: str) -> str:
    if piece.endswith("\r\n"):
        return piece[:-2]
    return piece[:-1] if _ends_line(piece) else piece
