"""CPU per request of reference_py's HTTP client, httpx (``reference_py.transport.httpx_client``),
and of the fast client the forked reference shims run on (``shims/reference/fast_http``,
``PlainHTTPClient``), against a bare
asyncio HTTP/1.1 exchange (a script, not a test: it prints figures and asserts none).

    python benchmarks/http_client_cost.py [--requests 500]

All POST the same JSON body over one keep-alive connection to a loopback server running
in another process, so only the client's CPU is counted (``time.process_time``). The gaps
are what the plain client saves per provider request against httpx, and what it still
spends over the bare floor (the reference shim makes ~1.8 per variant; the differential
runs two shims per scenario).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "shims" / "reference"))

from fast_http import PlainHTTPClient  # noqa: E402

from reference_py.transport import httpx_client as new_http_client  # noqa: E402

SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Reply(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        body = b'{"choices":[{"message":{"role":"assistant","content":"hi"}}]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Reply).serve_forever()
"""

BODY = {"model": "m", "messages": [{"role": "user", "content": "x" * 500}]}
HEADERS = {"Authorization": "Bearer k", "Content-Type": "application/json"}  # what the openai adapter sends


async def through_reference_client(url: str, count: int) -> None:
    async with new_http_client() as client:
        for _ in range(count):
            (await client.post(url, json=BODY, headers=HEADERS)).json()


async def through_plain_client(url: str, count: int) -> None:
    async with PlainHTTPClient() as client:
        for _ in range(count):
            (await client.post(url, json=BODY, headers=HEADERS)).json()


async def bare_asyncio(url: str, count: int) -> None:
    host, port = url.split("//")[1].split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    for _ in range(count):
        data = json.dumps(BODY).encode()
        head = f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        writer.write(f"{head}content-length: {len(data)}\r\n\r\n".encode() + data)
        await writer.drain()
        await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        json.loads(await reader.readexactly(length))
    writer.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(name: str, client: Callable[[str, int], Awaitable[None]], url: str, count: int) -> float:
    asyncio.run(client(url, 20))  # warm: imports, first connection
    started = time.process_time()
    asyncio.run(client(url, count))
    per_request_ms = 1000 * (time.process_time() - started) / count
    print(f"{name:<28} {per_request_ms:5.2f} ms of client CPU per request ({count} requests)")
    return per_request_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        for _ in range(50):  # until the server listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        httpx_ms = measure("reference_py (httpx)", through_reference_client, url, args.requests)
        plain_ms = measure("reference_py (plain)", through_plain_client, url, args.requests)
        bare_ms = measure("bare asyncio HTTP/1.1", bare_asyncio, url, args.requests)
        print(f"plain saves {httpx_ms - plain_ms:.2f} ms of CPU per request against httpx; "
              f"{plain_ms - bare_ms:.2f} ms over the bare exchange")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
