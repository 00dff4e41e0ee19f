"""The Python shims' stdin reader (shims/pyshim_rpc.py ``_feed_lines``): a pipe is read on the
event loop itself, in whatever pieces the pipe delivers; every line must still arrive whole,
in order, then the end of input. A test's wrapper around ``sys.stdin`` keeps the thread reader."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shims"))

import pyshim_rpc  # noqa: E402

PIECES = [b'{"a": 1}\n{"b"', b': "caf\xc3', b'\xa9"}\n', b"\n", b'{"c": 3}\n{"tail": true}']
WANTED = [b'{"a": 1}', b'{"b": "caf\xc3\xa9"}', b"", b'{"c": 3}', b'{"tail": true}', None]


def _read_all(monkeypatch: pytest.MonkeyPatch, stdin: Any, pieces: list[bytes], write_fd: int) -> list[Any]:
    """Run ``_feed_lines`` on a fresh loop while ``pieces`` are written to the pipe, apart."""
    monkeypatch.setattr(sys, "stdin", stdin)
    received: list[Any] = []

    def writer() -> None:
        for piece in pieces:
            os.write(write_fd, piece)
            time.sleep(0.02)  # each piece its own read
        os.close(write_fd)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def on_line(line: bytes | str | None) -> None:
            received.append(line.encode() if isinstance(line, str) else line)
            if line is None:
                done.set_result(None)

        stop = pyshim_rpc.feed_lines(loop, on_line)
        threading.Thread(target=writer, daemon=True).start()
        await asyncio.wait_for(done, 10)
        stop()

    asyncio.run(main())
    return received


def test_a_pipe_read_on_the_loop_gives_whole_lines_in_order_then_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    read_fd, write_fd = os.pipe()
    stdin = open(read_fd, encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        monkeypatch.setattr(sys, "__stdin__", stdin)  # the process's own stdin: the loop reads it
        monkeypatch.setattr(sys, "stdin", stdin)
        assert pyshim_rpc.stdin_pipe() == read_fd
        received = _read_all(monkeypatch, stdin, PIECES, write_fd)
    finally:
        stdin.close()
    assert received == WANTED


def test_a_replaced_stdin_is_iterated_on_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    read_fd, write_fd = os.pipe()
    real = open(read_fd, encoding="utf-8")  # noqa: SIM115 - closed below

    class Wrapper:  # what a fault-injecting test shim puts in place of sys.stdin
        def __iter__(self) -> Any:
            return iter(real)

    try:
        monkeypatch.setattr(sys, "__stdin__", real)
        monkeypatch.setattr(sys, "stdin", Wrapper())
        assert pyshim_rpc.stdin_pipe() is None, "a wrapper must keep its own reading"
        received = _read_all(monkeypatch, Wrapper(), [b'{"a": 1}\n', b'{"b": 2}\n'], write_fd)
    finally:
        real.close()
    assert received == [b'{"a": 1}\n', b'{"b": 2}\n', None]
