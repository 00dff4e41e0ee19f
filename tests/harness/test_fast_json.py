"""toolnexus_conformance/helpers/fast_json.py: orjson's answers where they are the stdlib's, the stdlib's elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolnexus_conformance.helpers import fast_json


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"t": "Zürich ☕\n\t\"\\", "ok": True, "none": None}},
        [1, -2, 3.5, "é", [], {}],
        {"big": 2**70},  # orjson refuses it: the stdlib writes it
        {1: "a non-string key"},  # orjson refuses it: the stdlib writes it as "1"
    ],
)
def test_dumps_writes_what_compact_json_dumps_writes(value: Any) -> None:
    want = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert fast_json.dumps(value) == want


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'{"a":1,"b":["x"]}\n', {"a": 1, "b": ["x"]}),
        (b'{"a":1,"b":["x"]}\r\n', {"a": 1, "b": ["x"]}),
        (b'{"a": 1}', None),  # not compact
        (b'{"a":1,"a":1}', None),  # a duplicate key: the decoded object writes back shorter
        (b'{"a":{"b":1,"b":2}}', None),
        (b'{"a":1e5}', None),
        (b'{"a":18446744073709551616}', None),  # orjson reads it as a float
        (b"{oops", None),
        (b"\xff", None),
    ],
)
def test_canonical_is_the_value_only_of_a_line_written_as_it_would_write_it(line: bytes, value: Any) -> None:
    assert fast_json.canonical(line) == value


@pytest.mark.parametrize(
    "data",
    [
        b'{"model": "m", "messages": [{"role": "user", "content": "Z\xc3\xbcrich \xe2\x98\x95"}], "n": 1.5}',
        b'{"a":1,"a":2}',  # the last key wins, in both
        b'{"n": 18446744073709551616}',  # beyond 64 bits: orjson would read a float
        b'{"n": -9223372036854775809}',
        b'{"n": 12345678901234567890, "s": "1234567890123456789"}',  # 19 digits and more: the stdlib reads it
        b'{"n": NaN}',  # the stdlib reads the constants orjson refuses
        b'{"n": -Infinity}',
        b'{"n": 1e400}',  # an overflow: the stdlib reads inf
        b'{"s": "\\ud800"}',  # a lone surrogate escape
        b' [1, 2] \n',
    ],
)
def test_loads_reads_what_json_loads_reads(data: bytes) -> None:
    want = json.loads(data.decode("utf-8"))
    got = fast_json.loads(data)
    assert repr(got) == repr(want) and type(got) is type(want)


@pytest.mark.parametrize("data", [b"{oops", b'{"a": 1} x', b"\xff", b"\xef\xbb\xbf{}", b"", b'{"a": "\x01"}'])
def test_loads_refuses_what_json_loads_refuses(data: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(data.decode("utf-8"))
    with pytest.raises(ValueError):
        fast_json.loads(data)
