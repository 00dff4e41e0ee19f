"""The reference shim on its plain-HTTP path never imports httpx (nor httpcore, h11, anyio,
certifi): its runs go through reference_py's PlainHTTPClient, and a warm run imports
nothing at all. Checked in a fresh interpreter that loads ``shims/reference/shim.py`` and
drives its ``Shim.run`` for a run and a stream against a loopback server; the same check
against a provider URL the plain client hands to httpx (a query string) must fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rawserver import json_reply, serving, sse_reply

ROOT = Path(__file__).resolve().parents[2]
HTTPX_STACK = ("httpx", "httpcore", "h11", "anyio", "certifi")
REPLY = json_reply(b'{"choices":[{"message":{"role":"assistant","content":"hi"}}]}')
STREAM = sse_reply(b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n')

DRIVER = """
import asyncio, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("reference_shim", sys.argv[1])
shim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shim)
shim.warm_up(True)

class Watch:
    asked = []
    def find_spec(self, name, path=None, target=None):
        self.asked.append(name)

async def runs(s):
    for entry in ("run", "stream"):
        p = {"toolkit": {"tools": []}, "baseUrl": sys.argv[2], "style": "openai", "model": "m",
             "apiKey": "k", "entry": entry, "prompt": "hi"}
        assert (await s.run(p))["result"]["text"] == "hi"

async def main():
    s = shim.Shim(None, True)
    await runs(s)  # the first runs may import what they need
    sys.meta_path.insert(0, Watch())
    await runs(s)

asyncio.run(main())
stack = sys.argv[3].split(",")
print(json.dumps({"stack": sorted(m for m in sys.modules if m.split(".")[0] in stack), "warm": Watch.asked}))
"""


def shim_imports(query: str = "") -> dict[str, list[str]]:
    with serving([REPLY, STREAM, REPLY, STREAM]) as server:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(ROOT / "shims" / "reference" / "shim.py"),
             f"{server.url}/v1{query}", ",".join(HTTPX_STACK)],
            capture_output=True, text=True, timeout=60,
        )
    assert done.returncode == 0, done.stderr
    seen: dict[str, list[str]] = json.loads(done.stdout)
    return seen


def assert_plain_path(seen: dict[str, list[str]]) -> None:
    assert seen["stack"] == [], f"the shim imported the httpx stack: {seen['stack']}"
    assert seen["warm"] == [], f"a warm run imported {sorted(set(seen['warm']))}"


def test_the_reference_shim_never_imports_httpx_and_a_warm_run_imports_nothing() -> None:
    assert_plain_path(shim_imports())


def test_the_check_fails_when_the_runs_go_through_httpx() -> None:
    seen = shim_imports(query="?through=httpx")
    try:
        assert_plain_path(seen)
    except AssertionError as exc:
        assert "imported the httpx stack: ['anyio" in str(exc)
    else:
        raise AssertionError(f"a run through httpx passed the plain-path check: {seen}")
