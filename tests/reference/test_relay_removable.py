"""Relay is removable and inert: a client built with ``relay=False`` (relay module never
loaded) behaves byte-for-byte like one with relay on, and a declared-but-uncalled relay
tool changes only the tool declarations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from absent_scenarios import SCENARIOS, observe
from scripted import AB_SCHEMA, declaration

import reference_py
from reference_py import relay_tool

rule = pytest.mark.rule
HERE = Path(__file__).resolve().parent
# The child must import the very reference_py this process tests.
REFERENCE_ROOT = Path(reference_py.__file__).resolve().parent.parent

CHILD = """
import json, sys
from absent_scenarios import observe
observed = observe(relay=False)
print(json.dumps({"observed": observed,
                  "relay_loaded": "reference_py.relay" in sys.modules}))
"""


def run_child() -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(REFERENCE_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=REFERENCE_ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"child failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@rule("absent.byte-identical")
def test_relay_off_never_loads_relay_and_changes_nothing() -> None:
    child = run_child()
    assert child["relay_loaded"] is False, "relay=False must not import reference_py.relay"
    with_relay = json.loads(json.dumps(observe(relay=True)))
    assert sorted(child["observed"]) == sorted(with_relay)
    for key in sorted(with_relay):
        assert child["observed"][key] == with_relay[key], f"observable differs in {key}"


@rule("absent.byte-identical")
def test_relay_default_equals_relay_on() -> None:
    assert json.loads(json.dumps(observe(relay=None))) == json.loads(json.dumps(observe(relay=True)))


@rule("relay.uncalled-inert")
def test_uncalled_relay_tool_changes_only_the_declarations() -> None:
    plain = json.loads(json.dumps(observe(relay=True)))
    extra = relay_tool("lookup", "client side", AB_SCHEMA)
    with_lookup = json.loads(json.dumps(observe(relay=True, extra=[extra])))
    for key in sorted(plain):
        style, _, scenario = key.split("/")
        want = plain[key]
        if scenario != "no-tools":
            decl = declaration(style, "lookup", "client side", AB_SCHEMA)
            want = json.loads(json.dumps(want))
            for sent in want["bodies"]:
                sent["tools"] = sent["tools"] + [decl]
        assert with_lookup[key] == want, f"an uncalled relay tool changed more than tools in {key}"
    assert set(SCENARIOS) >= {"tool-loop", "halt", "wait-for"}
