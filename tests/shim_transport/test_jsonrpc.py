"""The JSON-RPC 2.0 message layer: serialization, the strict line parser, the error table."""

from __future__ import annotations

import json

import pytest

from toolnexus_conformance.helpers.errors import ProtocolError
from toolnexus_conformance.helpers.jsonrpc import (
    ErrorCode,
    ErrorObject,
    Notification,
    Request,
    Response,
    describe,
    is_port_error,
    parse_message,
)


@pytest.mark.parametrize(
    "message",
    [
        Request(1, "client.run", {"entry": "run"}),
        Request("abc", "host.waitFor", [1, 2]),
        Request(7, "shutdown"),
        Notification("$/cancel", {"id": 3}),
        Response(4, result=None),
        Response(4, result={"ünï": "cödé"}),
        Response(5, error=ErrorObject(-32001, "collision", {"kind": "toolkit"})),
        Response(None, error=ErrorObject(-32700, "parse error")),
    ],
)
def test_round_trip(message: object) -> None:
    line = message.to_line()  # type: ignore[attr-defined]
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert parse_message(line) == message


def test_to_line_is_compact_utf8_and_omits_absent_members() -> None:
    assert Request(1, "shutdown").to_line() == b'{"jsonrpc":"2.0","id":1,"method":"shutdown"}\n'
    assert Response(2, result="é").to_line() == '{"jsonrpc":"2.0","id":2,"result":"é"}\n'.encode()
    assert b'"data"' not in Response(3, error=ErrorObject(-32601, "nope")).to_line()


def test_embedded_newlines_are_escaped_so_framing_holds() -> None:
    line = Request(1, "x", {"text": "a\nb"}).to_line()
    assert line.count(b"\n") == 1


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (b"this is not json {", "not JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"", "empty line"),
        (b"[1, 2]", "JSON array, not an object"),
        (b'{"id": 1, "result": 2}', 'lacks "jsonrpc"'),
        (b'{"jsonrpc": "1.0", "id": 1, "result": 2}', '"jsonrpc" must be "2.0"'),
        (b'{"jsonrpc": "2.0", "id": 1, "result": 2, "error": {"code": 1, "message": "m"}}', "both"),
        (b'{"jsonrpc": "2.0", "id": 1}', "neither"),
        (b'{"jsonrpc": "2.0", "id": true, "result": 1}', '"id" must be an integer or a string, got boolean'),
        (b'{"jsonrpc": "2.0", "id": 1.5, "result": 1}', "got number"),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "m"}', "got array"),
        (b'{"jsonrpc": "2.0", "id": null, "result": 1}', "got null"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "m"}', "got null"),
        (b'{"jsonrpc": "2.0", "method": 5}', '"method" must be a non-empty string'),
        (b'{"jsonrpc": "2.0", "method": "m", "params": "x"}', '"params" must be an object or array'),
        (b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}', '"error" must be an object'),
        (b'{"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}}', '"error.code" must be an integer'),
        (b'{"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}', '"error.message" must be a string'),
        (b'{"jsonrpc": "2.0", "id": 1, "result": 1, "extra": 0}', "unexpected member(s) 'extra'"),
        (b'{"jsonrpc": "2.0", "id": 1, "id": 2, "result": 1}', "duplicate key 'id'"),
        # written compactly, as a line is parsed first in C (fast_json.canonical)
        (b'{"jsonrpc":"2.0","id":1,"id":2,"result":1}', "duplicate key 'id'"),
        (b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"b":{"c":2,"c":2}}}', "duplicate key 'c'"),
        (b'{"jsonrpc":"2.0","id":1,"result":NaN}', "NaN is not JSON"),
        (b'{"jsonrpc":"2.0","id":1,"result":1,"extra":0}', "unexpected member(s) 'extra'"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": NaN}', "NaN is not JSON"),
        (b'{"result": 1}', 'lacks "jsonrpc"'),
        (b'{"jsonrpc": "2.0"}', 'neither "method" nor "id"'),
    ],
)
def test_parse_rejects_with_one_readable_line(line: bytes, complaint: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_message(line)
    text = str(info.value)
    assert complaint in text
    assert "\n" not in text


def test_error_message_carries_a_bounded_excerpt_of_the_line() -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": 1, "junk": "z" * 5000}).encode()
    text = str(pytest.raises(ProtocolError, parse_message, line).value)
    assert '{"jsonrpc": "2.0"' in text
    assert f"({len(line)} chars)" in text
    assert len(text) < 400


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551616}}',  # beyond 64 bits
        b'{"jsonrpc":"2.0","id":1,"result":"\\ud800"}',  # a lone surrogate
        b'{"jsonrpc":"2.0","id":1,"result":1e5}',  # a number spelt unlike its compact form
        b'{ "jsonrpc" : "2.0" , "id" : 1 , "result" : [ ] }',
    ],
)
def test_a_valid_line_the_fast_parser_passes_on_reads_as_the_stdlib_reads_it(line: bytes) -> None:
    assert parse_message(line) == Response(1, result=json.loads(line)["result"])


def test_trailing_newline_and_crlf_are_accepted() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"result":1}\r\n') == Response(1, result=1)


def test_error_table_and_describe() -> None:
    assert ErrorCode(-32001) is ErrorCode.PORT_ERROR
    assert describe(-32001).startswith("-32001 port error")
    assert describe(-32003) == "-32003 protocol version mismatch"
    assert describe(-32050) == "-32050 implementation-defined server error"
    assert describe(42) == "42 application-defined error"
    for code in ErrorCode:
        assert describe(code).startswith(str(int(code)))


def test_is_port_error() -> None:
    assert is_port_error(ErrorObject(ErrorCode.PORT_ERROR, "refused", {"kind": "resume"}))
    assert not is_port_error(ErrorObject(ErrorCode.INVALID_PARAMS, "bad"))
    assert not is_port_error(None)
