"""A shim forked from the reference shim's zygote imports nothing on its runs: the zygote
(toolnexus_conformance/shim/zygote.py) loaded the shim and applied its tunings (the fast
HTTP client installed into reference_py) before forking, so every fork's first run finds
what it needs loaded. Checked in a fresh interpreter that prepares as the zygote does and
drives the shim's ``Shim.run`` for a run and a stream against a loopback server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rawserver import json_reply, serving, sse_reply

ROOT = Path(__file__).resolve().parents[2]
REPLY = json_reply(b'{"choices":[{"message":{"role":"assistant","content":"hi"}}]}')
STREAM = sse_reply(b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n')

DRIVER = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[3])
from toolnexus_conformance.shim import zygote
shim = zygote.load_shim(sys.argv[1])
zygote.tune(sys.argv[1], [])

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
    await runs(s)

sys.meta_path.insert(0, Watch())
asyncio.run(main())
print(json.dumps({"client": type(shim.tn.new_http_client()).__name__, "asked": Watch.asked}))
"""


def test_a_forked_shims_first_runs_import_nothing() -> None:
    with serving([REPLY, STREAM]) as server:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(ROOT / "shims" / "reference" / "shim.py"), f"{server.url}/v1", str(ROOT)],
            capture_output=True, text=True, timeout=60,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["client"] == "PlainHTTPClient", "the zygote did not install the fast client"
    assert seen["asked"] == [], f"a forked shim's runs imported {sorted(set(seen['asked']))}"
