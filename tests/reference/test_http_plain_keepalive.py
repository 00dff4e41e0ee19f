"""The plain client's connection reuse: a connection the server closed while idle is not
reused (as httpx); a request whose reused connection closes before any byte of the response
is sent once more on a new connection, and only then (a new connection's silence, a second
silence, or a response cut halfway is an error, in httpx's words); idle connections expire
after 5 s and at most 20 are kept; concurrent requests each get a connection. Each check is
also run against a client broken on purpose and must fail."""

from __future__ import annotations

import asyncio

import pytest
from fast_http import PlainHTTPClient
from fast_http import connection as http_connection
from fast_http import plain as http_plain
from plainkit import BODY, OPENAI_HEADERS, PATH, Action, assert_same, retry_again, run_client
from rawserver import DROP, Reply, json_reply, serving

pytestmark = pytest.mark.usefixtures("each_event_loop")

OK = json_reply(b'{"ok":true}')
CLOSED_AFTER = Reply(OK.pieces, then="close")  # keep-alive by its headers, closed right after
POST, PAUSE = Action("post"), Action("pause")
DISCONNECTED = "RemoteProtocolError: Server disconnected without sending a response."


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a request was written to some connection."""
    count: list[int] = []
    original = http_connection.Connection.send

    async def counted(self: http_connection.Connection, data: bytes, timeout: float) -> None:
        count.append(1)
        await original(self, data, timeout)

    monkeypatch.setattr(http_connection.Connection, "send", counted)
    return count


def test_a_connection_closed_while_idle_is_not_reused(sends: list[int]) -> None:
    seen = assert_same([CLOSED_AFTER, OK], [POST, PAUSE, POST])
    assert [n for n, _ in seen.requests] == [0, 1]
    assert len(sends) == 2, "the closed connection was written to (and the request sent again)"


def test_a_reused_connection_closed_before_the_response_is_retried_once_on_a_new_one() -> None:
    seen = run_client(PlainHTTPClient, [OK, DROP, OK], [POST, POST])
    assert seen.outcomes == [{"status": 200, "success": True, "text": '{"ok":true}', "json": {"ok": True}}] * 2
    assert [n for n, _ in seen.requests] == [0, 0, 1]
    assert seen.requests[1][1] == seen.requests[2][1], "the retry must send the same request"


def test_the_retry_happens_once() -> None:
    seen = run_client(PlainHTTPClient, [OK, DROP, DROP, OK], [POST, POST])
    assert seen.outcomes[1] == {"error": DISCONNECTED}
    assert [n for n, _ in seen.requests] == [0, 0, 1]


def test_a_response_cut_halfway_on_a_reused_connection_is_not_retried() -> None:
    cut = Reply((b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",), then="close")
    seen = assert_same([OK, cut, OK], [POST, POST])
    assert len(seen.requests) == 2 and "received 2 bytes, expected 10" in seen.outcomes[1]["error"]


def _connections_with_expiry(monkeypatch: pytest.MonkeyPatch, expiry_s: float) -> list[int]:
    """Two requests at once apart, then one after a 50 ms pause."""
    monkeypatch.setattr(http_connection, "KEEPALIVE_EXPIRY_S", expiry_s)
    seen = run_client(PlainHTTPClient, [OK, OK, OK], [POST, POST, PAUSE, POST])
    return [n for n, _ in seen.requests]


def test_an_idle_connection_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _connections_with_expiry(monkeypatch, 0.02) == [0, 0, 1]


def _concurrent_rounds(count: int, rounds: int) -> list[int]:
    """Connection numbers of ``rounds`` rounds of ``count`` requests sent at once."""
    with serving([OK] * (count * rounds)) as server:
        async def go() -> None:
            async with PlainHTTPClient() as client:
                for _ in range(rounds):
                    responses = await asyncio.gather(
                        *[client.post(server.url + PATH, json=BODY, headers=OPENAI_HEADERS) for _ in range(count)]
                    )
                    assert [r.status_code for r in responses] == [200] * count

        asyncio.run(go())
        return [n for n, _ in server.requests]


def test_concurrent_requests_each_get_a_connection_and_keep_it() -> None:
    numbers = _concurrent_rounds(3, 2)
    assert sorted(set(numbers[:3])) == [0, 1, 2] and set(numbers[3:]) <= {0, 1, 2}


def test_at_most_twenty_idle_connections_are_kept() -> None:
    numbers = _concurrent_rounds(22, 2)
    assert len(set(numbers[:22])) == 22 and len(set(numbers[22:]) - set(numbers[:22])) == 2


# ------------------------------------------------------------- the checks catch a broken client

def test_the_idle_check_catches_a_client_that_reuses_closed_connections(
    monkeypatch: pytest.MonkeyPatch, sends: list[int]
) -> None:
    monkeypatch.setattr(http_connection.Connection, "reusable", lambda self, now: True)
    with pytest.raises(AssertionError, match="written to"):
        test_a_connection_closed_while_idle_is_not_reused(sends)


def test_the_retry_check_catches_a_client_without_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_plain, "NoResponse", type("NeverRaised", (Exception,), {}))
    with pytest.raises(AssertionError):
        test_a_reused_connection_closed_before_the_response_is_retried_once_on_a_new_one()


def test_the_once_check_catches_a_client_retrying_again(monkeypatch: pytest.MonkeyPatch) -> None:
    retry_again(monkeypatch)
    with pytest.raises(AssertionError):
        test_the_retry_happens_once()


def test_the_expiry_check_catches_a_client_that_never_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _connections_with_expiry(monkeypatch, 1e9) != [0, 0, 1]


def test_the_idle_cap_check_catches_a_client_keeping_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_plain, "MAX_IDLE_CONNECTIONS", 1000)
    with pytest.raises(AssertionError):
        test_at_most_twenty_idle_connections_are_kept()
