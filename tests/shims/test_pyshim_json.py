"""The Python shims' line codec (shims/pyshim_rpc.py ``_encode``/``_decode``): orjson where
the interpreter has it, the stdlib where it has not (the python port's venv), and the same
answer either way."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "shims"))

import pyshim_rpc  # noqa: E402

SHIMS = Path(__file__).resolve().parents[2] / "shims"

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


def _loaded_without_orjson(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh copy of pyshim_rpc, loaded as in the python port's venv, which has no orjson."""
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson now raises ImportError
    spec = importlib.util.spec_from_file_location("pyshim_rpc_stdlib", SHIMS / "pyshim_rpc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["orjson", "stdlib"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The module as the reference shim's interpreter has it (orjson) and as the python port's has it."""
    if request.param == "stdlib":
        return _loaded_without_orjson(monkeypatch)
    if importlib.util.find_spec("orjson") is None:
        pytest.skip("orjson is not installed in this interpreter")
    return pyshim_rpc


@pytest.mark.parametrize("line", LINES)
def test_decode_reads_a_line_as_json_loads_does(codec: ModuleType, line: bytes) -> None:
    got = codec.decode_line(line)
    assert got == json.loads(line) and repr(got) == repr(json.loads(line))
    assert codec.decode_line(line + b"\n") == got


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("message", MESSAGES)
def test_encode_writes_compact_json_dumps(codec: ModuleType, message: Any, fast: bool) -> None:
    assert codec.encode_message(message, fast) == json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def test_only_a_fast_channel_may_write_a_nan_as_null(codec: ModuleType) -> None:
    # The python port's shim is not fast: a NaN its port hands over stays a line the harness refuses.
    message = {"jsonrpc": "2.0", "id": 1, "result": {"x": float("nan")}}
    assert codec.encode_message(message, False) == b'{"jsonrpc":"2.0","id":1,"result":{"x":NaN}}'


def test_decode_raises_value_error_on_a_line_that_is_not_json(codec: ModuleType) -> None:
    with pytest.raises(ValueError):
        codec.decode_line(b"{oops")
