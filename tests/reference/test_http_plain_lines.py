"""The plain client's ``aiter_lines`` splits a body into lines exactly as httpx's does — the
same lines, each released after the same number of received pieces — for ``\\n``, ``\\r\\n``,
``\\r``, the other Unicode breaks, bytes split inside a character or a ``\\r\\n``, undecodable
bytes and a final line without a break; and over a real socket for a split of an SSE stream
at every byte offset. A splitter broken on purpose fails both checks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from fast_http.text import LineSplitter, TextLines
from hypothesis import given, settings
from hypothesis import strategies as st
from plainkit import Action, assert_same
from rawserver import sse_reply

Released = list[tuple[int, str]]  # (pieces received so far, line)
SSE = b'data: {"a":1}\r\n\r\nevent: x\r\ndata: {"b":"\xc3\xa9"}\r\n\rdata: [DONE]\n\nlast line'


def httpx_lines(pieces: list[bytes]) -> Released:
    """httpx's ``aiter_lines`` over a body arriving in ``pieces``."""
    received = 0

    async def source() -> AsyncIterator[bytes]:
        nonlocal received
        for piece in pieces:
            received += 1
            yield piece

    async def read() -> Released:
        response = httpx.Response(200, content=source())
        return [(received, line) async for line in response.aiter_lines()]

    return asyncio.run(read())


def plain_lines(pieces: list[bytes]) -> Released:
    lines = TextLines("utf-8")
    released: Released = []
    for count, piece in enumerate(pieces, 1):
        released += [(count, line) for line in lines.feed(piece)]
    return released + [(len(pieces), line) for line in lines.close()]


def assert_lines_match(pieces: list[bytes]) -> None:
    expected, got = httpx_lines(pieces), plain_lines(pieces)
    assert got == expected, f"pieces {pieces!r}:\nhttpx {expected!r}\nplain {got!r}"


ATOMS = [b"a", b"bc", b" ", b"\n", b"\r", b"\r\n", b"\n\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e",
         b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc3\xa9", b"\xc3", b"\xa9", b"\xff", b"data: {}"]


@st.composite
def split_bodies(draw: st.DrawFn) -> list[bytes]:
    body = b"".join(draw(st.lists(st.sampled_from(ATOMS), max_size=14)))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    bounds = [0, *cuts, len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]  # empty pieces included


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(split_bodies())
def test_lines_match_httpx_for_any_body_and_split(pieces: list[bytes]) -> None:
    assert_lines_match(pieces)


CORNERS = [
    [SSE[:i], SSE[i:]] for i in range(len(SSE) + 1)
] + [
    [b"a\r", b"\nb"], [b"a\r", b"", b"\n"], [b"a\r", b"\r", b"\n"], [b"\r"], [b"a\n\r"], [b"a\r\r\n"],
    [b"last"], [b""], [], [b"x\xe2\x80", b"\xa8y"], [b"\xc3", b"\xa9\r", b"\n"], [b"\xff\r\n\xfe"],
]


@pytest.mark.parametrize("pieces", CORNERS, ids=[repr(p)[:40] for p in CORNERS])
def test_lines_match_httpx_at_the_corners(pieces: list[bytes]) -> None:
    assert_lines_match(pieces)
    assert [line for _, line in plain_lines(pieces)] == b"".join(pieces).decode(errors="replace").splitlines()


def test_an_sse_stream_split_at_every_byte_offset_reads_the_same_over_a_socket() -> None:
    replies = [sse_reply(SSE[:i], SSE[i:], pause_s=0.003) for i in range(1, len(SSE))]
    seen = assert_same(replies, [Action("stream")] * len(replies))
    expected = SSE.decode().splitlines()
    assert all(outcome["lines"] == expected for outcome in seen.outcomes), seen.outcomes


def _split_on_newline_only(self: LineSplitter, text: str) -> list[str]:
    """A plausible wrong splitter: ``\\n`` ends a line, a ``\\r`` before it is dropped."""
    held = "".join(self._held) + text
    *lines, rest = held.split("\n")
    self._held = [rest] if rest else []
    return [line.removesuffix("\r") for line in lines]


def test_the_line_checks_fail_a_broken_splitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LineSplitter, "feed", _split_on_newline_only)
    with pytest.raises(AssertionError, match="httpx"):
        assert_lines_match([SSE[:16], SSE[16:]])
    with pytest.raises(AssertionError, match="different"):
        test_an_sse_stream_split_at_every_byte_offset_reads_the_same_over_a_socket()
