"""The Python shims' line codec (shims/pyshim_rpc.py ``_encode``/``_decode``): orjson where
the interpreter has it, the stdlib where it has not (the python port's venv), and the same
answer either way."""

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


@pytest.fixture(params=["orjson", "stdlib"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "stdlib":
        monkeypatch.setattr(pyshim_rpc, "_orjson", None)
    elif pyshim_rpc._orjson is None:
        pytest.skip("orjson is not installed in this interpreter")
    return str(request.param)


@pytest.mark.parametrize("line", LINES)
def test_decode_reads_a_line_as_json_loads_does(codec: str, line: bytes) -> None:
    got = pyshim_rpc._decode(line)
    assert got == json.loads(line) and repr(got) == repr(json.loads(line))
    assert pyshim_rpc._decode(line + b"\n") == got


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("message", MESSAGES)
def test_encode_writes_compact_json_dumps(codec: str, message: Any, fast: bool) -> None:
    assert pyshim_rpc._encode(message, fast) == json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def test_only_a_fast_channel_may_write_a_nan_as_null(codec: str) -> None:
    # The python port's shim is not fast: a NaN its port hands over stays a line the harness refuses.
    message = {"jsonrpc": "2.0", "id": 1, "result": {"x": float("nan")}}
    assert pyshim_rpc._encode(message, False) == b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}'


def test_decode_raises_value_error_on_a_line_that_is_not_json(codec: str) -> None:
    with pytest.raises(ValueError):
        pyshim_rpc._decode(b"{oops")
