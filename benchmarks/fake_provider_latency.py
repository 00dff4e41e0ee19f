"""Mean per-request latency of the fake provider over keep-alive connections, with and
without TCP_NODELAY (a script, not a test: timings belong in a report, not an assert).

    python benchmarks/fake_provider_latency.py [--requests 200]

Without TCP_NODELAY the stdlib handler's separate header and body sends meet Nagle's
algorithm and the client's delayed ACK, which costs tens of milliseconds per request."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolnexus_conformance.fake_provider import FakeProvider  # noqa: E402

_TURN = {
    "text": "checking",
    "toolCalls": [{"id": "call_1", "name": "lookup", "arguments": '{ "b": 2,  "a": 1 }'}],
    "usage": {"input": 3, "output": 5},
}
_BODY = {"model": "bench", "messages": [{"role": "user", "content": "hi"}]}


def measure(nodelay: bool, requests: int, stream: bool) -> list[float]:
    """Seconds per request, one keep-alive client (SSE closes its connection each time)."""
    with FakeProvider(nodelay=nodelay) as provider:
        session = provider.session([_TURN] * (requests + 1), "openai")
        url = f"{session.base_url}/chat/completions"
        body = {**_BODY, "stream": True} if stream else _BODY
        timings: list[float] = []
        with httpx.Client(headers={"Authorization": "Bearer bench"}) as client:
            client.post(url, json=body).read()  # warm-up: connect outside the timing
            for _ in range(requests):
                started = time.perf_counter()
                response = client.post(url, json=body)
                response.read()
                timings.append(time.perf_counter() - started)
                if response.status_code != 200:
                    raise SystemExit(f"unexpected status {response.status_code}: {response.text}")
        return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    print(f"fake provider latency, {args.requests} requests each (ms per request)")
    for stream in (False, True):
        for nodelay in (True, False):
            timings = measure(nodelay, args.requests, stream)
            label = f"{'sse ' if stream else 'json'} nodelay={'on ' if nodelay else 'off'}"
            print(
                f"  {label}: mean {statistics.mean(timings) * 1000:7.2f}"
                f"  median {statistics.median(timings) * 1000:7.2f}"
                f"  max {max(timings) * 1000:7.2f}"
            )


if __name__ == "__main__":
    main()
