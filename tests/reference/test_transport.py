"""reference_py's client transport builds TLS only for an https request (reference_py/transport.py),
and a warm run imports nothing: an import that fails is not cached by Python, so one inside
the HTTP stack (httpcore's `import sniffio` when sniffio is missing) rescans sys.path on
every request."""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from reference_py import create_client, create_toolkit, new_http_client
from reference_py.transport import LazyTLSTransport, tls_context


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the fake provider serves

    def do_GET(self) -> None:
        self._send(b"ok")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self._send(json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}).encode())

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

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


class _ImportWatch:
    """A meta path finder that only records: a module already imported never reaches it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        self.asked.append(name)


def test_a_warm_run_imports_nothing(plain_url: str) -> None:
    async def runs(count: int) -> None:
        async with new_http_client() as http:
            client = create_client(base_url=plain_url + "v1", model="m", api_key="k", http_client=http)
            toolkit = await create_toolkit()
            for _ in range(count):
                assert (await client.run("hello", toolkit)).text == "hi"

    asyncio.run(runs(1))  # the first run may import what it needs
    watch = _ImportWatch()
    sys.meta_path.insert(0, watch)
    try:
        asyncio.run(runs(3))
    finally:
        sys.meta_path.remove(watch)
    assert watch.asked == [], f"a warm run imported (and failed to keep) {sorted(set(watch.asked))}"
