"""reference_py's client transport builds TLS only for an https request (reference_py/transport.py)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from reference_py import new_http_client
from reference_py.transport import LazyTLSTransport, tls_context


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def plain_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_plain_http_never_builds_tls(plain_url: str) -> None:
    transport = LazyTLSTransport()

    async def go() -> str:
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get(plain_url)).text

    assert asyncio.run(go()) == "ok"
    assert transport._tls is None


def test_an_https_request_gets_a_verifying_tls_transport() -> None:
    transport = LazyTLSTransport()

    async def go() -> None:
        async with httpx.AsyncClient(transport=transport, timeout=2) as client:
            await client.get("https://127.0.0.1:9/")  # nothing listens: only the set-up matters

    with pytest.raises(httpx.ConnectError):
        asyncio.run(go())
    assert transport._tls is not None
    assert tls_context().verify_mode == ssl.CERT_REQUIRED and tls_context().check_hostname


def test_the_run_client_uses_it() -> None:
    client = new_http_client()
    assert isinstance(client._transport, LazyTLSTransport)
    asyncio.run(client.aclose())
