"""Broken shims through the whole plugin: each breakage gives the variant it hit a readable
failure carrying the shim's stderr tail (never a harness traceback), the shim is restarted,
and every following variant still runs and passes. A null shim fails every scenario.

Each case is one ``pytest --port-cmd`` run of the plugin (in-process; the broken shim is
the subprocess) over a small relay-free scenario (12 variants), with the broken shim
(``broken_shim.py``) misbehaving on one variant only.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from inprocess import PluginRunner

from toolnexus_conformance.scenario.model import load_scenario, scenario_files

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).with_name("broken_shim.py")
SCENARIO = "loop-plain-answer"
TARGET = f"{SCENARIO}[anthropic-stream]"


@dataclass(frozen=True)
class Outcome:
    returncode: int
    output: str

    def count(self, word: str) -> int:
        found = re.search(rf"(\d+) {word}", self.output.splitlines()[-1] if self.output else "")
        return int(found.group(1)) if found else 0

    def harness_tracebacks(self) -> list[str]:
        # Lines quoted from the shim's stderr start with "|"; anything else is the harness's.
        return [line for line in self.output.splitlines()
                if "Traceback (most recent call last)" in line and not line.lstrip().startswith("|")]


def run_suite(run_plugin: PluginRunner, shim_args: list[str], *paths: str, timeout_s: float = 5.0) -> Outcome:
    shim = shlex.join([sys.executable, str(BROKEN), *shim_args])
    run = run_plugin("-q", *paths, "--port-cmd", shim, "--port-timeout", str(timeout_s))
    return Outcome(run.code, run.output)


# ``pytest --co ARGS`` -> how many variants it collected: each listing is the same for every
# test of this process that asks (eight tests ask for the scenario's), so it is run once.
_COLLECTED: dict[tuple[str, ...], int] = {}


def collected(run_plugin: PluginRunner, *args: str) -> int:
    """How many variants ``pytest --co ARGS`` collects."""
    if args not in _COLLECTED:
        listing = run_plugin("-q", "--co", *args)
        _COLLECTED[args] = len([line for line in listing.output.splitlines() if "::" in line])
    return _COLLECTED[args]


def scenario_path() -> str:
    path = ROOT / "fixtures" / "scenarios" / f"{SCENARIO}.json"
    assert path.exists(), f"the broken-shim tests run {path.name}; it is gone — pick another relay-free scenario"
    return str(path.relative_to(ROOT))


@pytest.fixture
def variants(run_plugin: PluginRunner) -> int:
    count = collected(run_plugin, scenario_path(), "--port=reference")
    assert count >= 2, f"{SCENARIO} expands to {count} variant(s); the restart proof needs a following one"
    return count


# mode -> text the failure of the hit variant must show (besides the shim's stderr tail)
ONE_VARIANT_BREAKAGES = {
    "crash-mid-run": "shim exited with code 7",
    "hang": "did not answer client.run within 2 s",
    "non-json": "line is not JSON",
    "wrong-id": "unknown id",
    "oversized": "longer than the 8388608 byte limit",
}


@pytest.mark.parametrize("mode", sorted(ONE_VARIANT_BREAKAGES))
def test_one_broken_variant_fails_readably_and_the_run_goes_on(run_plugin: PluginRunner, mode: str, variants: int) -> None:
    outcome = run_suite(run_plugin, [mode, TARGET], scenario_path(), timeout_s=2)
    assert outcome.returncode == 1, outcome.output
    assert (outcome.count("failed"), outcome.count("passed")) == (1, variants - 1), outcome.output
    assert f"FAILED fixtures/scenarios/{SCENARIO}.json::{TARGET}" in outcome.output
    assert ONE_VARIANT_BREAKAGES[mode] in outcome.output
    assert f"| broken shim: {mode} during client.run of {TARGET}" in outcome.output, "the stderr tail is missing"
    assert "(normative, transport)" in outcome.output
    assert not outcome.harness_tracebacks(), outcome.output


def test_crash_at_start_once_fails_the_first_variant_then_restarts(run_plugin: PluginRunner, tmp_path: Path, variants: int) -> None:
    outcome = run_suite(run_plugin, ["crash-at-start", "--once", str(tmp_path / "crashed")], scenario_path())
    assert (outcome.count("failed"), outcome.count("passed")) == (1, variants - 1), outcome.output
    assert "| broken shim: fatal: cannot load the port library" in outcome.output
    assert "exited with code 3" in outcome.output
    assert not outcome.harness_tracebacks(), outcome.output


def test_a_shim_that_never_starts_stops_the_session_once_with_its_stderr(run_plugin: PluginRunner) -> None:
    """Its first handshakes fail: the first variant fails with the shim's stderr, the second
    handshake stops the session (not one failure per variant of the whole suite)."""
    outcome = run_suite(run_plugin, ["crash-at-start"])
    assert outcome.returncode == 1
    assert re.search(r"^1 failed in ", outcome.output, re.MULTILINE), outcome.output[-3000:]
    assert "failed its first 2 handshakes; no variant can run, so the session stops here" in outcome.output
    assert "| broken shim: fatal: cannot load the port library" in outcome.output.split("stops here", 1)[1]
    assert not outcome.harness_tracebacks(), outcome.output


def defined_variants() -> int:
    """How many variants the suite's scenario files define (read from the files, not from a
    collection by the plugin under test)."""
    return sum(len(list(load_scenario(path).variants())) for path in scenario_files(ROOT / "fixtures" / "scenarios"))


@pytest.mark.slow
def test_the_null_shim_fails_every_scenario(run_plugin: PluginRunner) -> None:
    total = defined_variants()
    assert total > 0, "the whole suite collects no variant"
    outcome = run_suite(run_plugin, ["null"])
    assert outcome.returncode == 1
    assert (outcome.count("failed"), outcome.count("passed")) == (total, 0), outcome.output[-3000:]
    assert not outcome.harness_tracebacks(), outcome.output[-3000:]


def test_broken_shim_refuses_unknown_modes() -> None:
    done = subprocess.run([sys.executable, str(BROKEN), "explode"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "modes: crash-at-start" in done.stderr


def test_validate_shim_catches_a_result_that_breaks_its_schema(run_plugin: PluginRunner, variants: int) -> None:
    plain = run_suite(run_plugin, ["invalid-result", TARGET], scenario_path())
    assert plain.returncode == 0, "without --validate-shim a missing optional-looking key goes unnoticed"
    validated = run_suite(run_plugin, ["invalid-result", TARGET], scenario_path(), "--validate-shim")
    assert (validated.count("failed"), validated.count("passed")) == (1, variants - 1), validated.output
    assert "the shim's client.run result break shim/client-run.schema.json: $.executions: missing required key" in validated.output
    assert not validated.harness_tracebacks(), validated.output


def test_a_crash_leaves_its_jsonrpc_lines_and_full_stderr_in_the_artifacts(run_plugin: PluginRunner, tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    outcome = run_suite(run_plugin, ["crash-mid-run", TARGET], scenario_path(), f"--artifacts={artifacts}", timeout_s=2)
    assert outcome.returncode == 1, outcome.output
    saved = [p.name for p in artifacts.iterdir()] if artifacts.exists() else []
    assert saved == [f"{SCENARIO}__anthropic-stream.json"], f"one artifact for the crashed variant, got {saved}"
    data = json.loads((artifacts / saved[0]).read_text(encoding="utf-8"))
    assert data["phases"] == [], "a run that crashed has no phases to record"
    assert any('"client.run"' in entry["line"] for entry in data["jsonrpc"]), data["jsonrpc"]
    assert f"broken shim: crash-mid-run during client.run of {TARGET}" in data["stderr"]
