"""The Python shims' line codec (shims/pyshim_rpc.py ``encode_message``/``decode_line``):
compact JSON lines out, any JSON line in, and a NaN the port hands over left as a line the
harness refuses (never quietly turned into something else)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shims"))

import pyshim_rpc  # noqa: E402

LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"client.run","params":{"prompt":"Z\xc3\xbcrich \xe2\x98\x95"}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551616}}',  # beyond 64 bits: an int
    b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}',  # the last key wins, as in json.loads
    b'{ "jsonrpc": "2.0", "id": 1, "result": 1e5 }',
]
MESSAGES: list[Any] = [
    {"jsonrpc": "2.0", "id": "h1", "method": "host.waitFor", "params": {"t": "é\n\"\\", "n": None}},
    {"jsonrpc": "2.0", "id": 1, "result": {"big": 2**70, "ok": True}},
    {"jsonrpc": "2.0", "id": 1, "result": {1: "a non-string key"}},
]


@pytest.mark.parametrize("line", LINES)
def test_decode_reads_a_line_as_json_loads_does(line: bytes) -> None:
    got = pyshim_rpc.decode_line(line)
    assert got == json.loads(line) and repr(got) == repr(json.loads(line))
    assert pyshim_rpc.decode_line(line + b"\n") == got


@pytest.mark.parametrize("message", MESSAGES)
def test_encode_writes_compact_json_dumps(message: Any) -> None:
    assert pyshim_rpc.encode_message(message) == json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_nan_stays_a_line_the_harness_refuses() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"x": float("nan")}}
    assert pyshim_rpc.encode_message(message) == b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}'


def test_decode_raises_value_error_on_a_line_that_is_not_json() -> None:
    with pytest.raises(ValueError):
        pyshim_rpc.decode_line(b"{oops")
