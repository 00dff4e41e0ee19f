"""harness/fast_json.py: orjson's answers where they are the stdlib's, the stdlib's elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import fast_json


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
