"""A response body as the §8 loop reads it from the fast HTTP client, each step
as httpx 0.28 does it: Content-Encoding undone (gzip, deflate), the charset of Content-Type
(UTF-8 by default, undecodable bytes replaced), and ``aiter_lines``' line splitting, which
is ``str.splitlines`` of the whole text (``\\n``, ``\\r\\n``, ``\\r`` and the other Unicode
breaks; a final line without a break still counts) released line by line as bytes arrive.
No I/O here; ``tests/reference/test_http_plain_lines.py`` holds it against httpx."""

from __future__ import annotations

import codecs
import re
import zlib

from .errors import DecodingError
from .wire import ResponseHead


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


class TextLines:
    """Body bytes in, lines out: decoded with the response's charset (undecodable bytes
    become U+FFFD), then split by ``LineSplitter`` (httpx's ``aiter_lines``)."""

    def __init__(self, encoding: str) -> None:
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._splitter = LineSplitter()

    def feed(self, data: bytes) -> list[str]:
        return self._splitter.feed(self._decoder.decode(data))

    def close(self) -> list[str]:
        return self._splitter.feed(self._decoder.decode(b"", True)) + self._splitter.flush()


def _ends_line(piece: str) -> bool:
    return bool(piece) and _BREAK.fullmatch(piece[-1]) is not None


def _strip_break(piece: str) -> str:
    if piece.endswith("\r\n"):
        return piece[:-2]
    return piece[:-1] if _ends_line(piece) else piece
