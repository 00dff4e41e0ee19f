"""The differential's derandomized stream of scenarios depends on the seed alone, not on which
local modules happen to be imported (hypothesis would otherwise draw their literals), and
drawing it leaves hypothesis as it was for every other draw in the process."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, find, settings
from hypothesis.errors import NoSuchExample
from hypothesis.internal.conjecture import providers

from toolnexus_conformance.differential import hypothesis_isolation
from toolnexus_conformance.differential.search import Features, scenarios


def _first_twenty() -> list[str]:
    seen: list[str] = []

    def twentieth(scenario: dict[str, Any]) -> bool:
        seen.append(json.dumps(scenario, sort_keys=True))
        return len(seen) >= 20

    find(scenarios(Features(relay=True, hooks=True)), twentieth,
         settings=settings(max_examples=40, derandomize=True, database=None, phases=[Phase.generate]))
    return seen


def test_importing_a_module_full_of_literals_changes_no_generated_scenario(tmp_path: Path) -> None:
    assert hypothesis_isolation.HOOKS_FOUND, "hypothesis no longer has the hooks this module switches off"
    before = _first_twenty()
    source = tmp_path / "literal_heavy.py"
    source.write_text("VALUES = [" + ", ".join(str(n) for n in range(200)) + "]\n"
                      "WORDS = [" + ", ".join(repr(f"w{n}") for n in range(200)) + "]\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("literal_heavy", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["literal_heavy"] = module
    try:
        spec.loader.exec_module(module)
        assert _first_twenty() == before
    finally:
        del sys.modules["literal_heavy"]


def test_a_draw_puts_hypothesis_s_hooks_back_as_they_were() -> None:
    hooks = (providers._get_local_constants, providers.CONSTANTS_CACHE)
    _first_twenty()
    assert (providers._get_local_constants, providers.CONSTANTS_CACHE) == hooks
    # and the host's own draws still see its local constants
    assert providers._get_local_constants() is hooks[0]()


# The generator's option tables are cached (toolnexus_conformance/differential/search.py, wire.py, contract.py):
# a scenario built from them must be what a fresh interpreter builds, whatever was drawn, imported or edited before.
# A fresh interpreter computes the same digest with the very function below.
STREAM_SCRIPT = "import sys; sys.path.insert(0, 'tests'); from test_hypothesis_isolation import _stream_digest; print(_stream_digest())"


def _stream_digest() -> str:
    seen: list[str] = []

    def record(scenario: dict[str, Any]) -> bool:
        seen.append(json.dumps(scenario, sort_keys=True))
        return False

    try:
        find(scenarios(Features(relay=True, resume=True, hooks=True, store=True)), record,
             settings=settings(max_examples=60, derandomize=True, database=None, phases=[Phase.generate]))
    except NoSuchExample:
        pass
    return f"{hashlib.sha256(chr(10).join(seen).encode()).hexdigest()} {len(seen)}"


@pytest.mark.slow
def test_a_fresh_interpreter_and_a_warm_one_draw_the_same_stream() -> None:
    """The option tables warmed by other draws (other features, judged scenarios, mutated
    results) change nothing: this process's stream equals a fresh interpreter's."""
    fresh = subprocess.run([sys.executable, "-c", STREAM_SCRIPT], cwd=Path(__file__).resolve().parents[1],
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr[-2000:]

    def mangle(scenario: dict[str, Any]) -> bool:  # a consumer that edits what it was given
        for tool in scenario["toolkit"]["tools"]:
            tool.setdefault("behaviour", {})["reply"] = "edited"
            tool["schema"]["properties"].clear()
        scenario.get("host", {}).get("waitFor", {}).get("answers", {}).clear()
        return False

    for features, judged in ((Features(), False), (Features(relay=True, hooks=True), True)):
        try:
            find(scenarios(features, judged=judged), mangle,
                 settings=settings(max_examples=30, derandomize=True, database=None, phases=[Phase.generate]))
        except NoSuchExample:
            pass
    assert _stream_digest() == fresh.stdout.strip(), (
        "the generated stream changed after earlier draws (another feature set, judged scenarios, a consumer "
        "editing its scenarios): a cached option table hands out state shared between scenarios")
