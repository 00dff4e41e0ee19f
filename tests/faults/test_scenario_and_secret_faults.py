"""Two faults that are not the shim's transport: a scenario too large to send, and a shim
that echoes the API key the harness handed it.

A prompt larger than the protocol's line limit is refused by the harness once its line is
built, as the scenario's problem (named), not blamed on the shim; and nothing a failing run
writes with ``--artifacts`` holds the API key.
"""

from __future__ import annotations

import json
import re
import resource
from pathlib import Path

import pytest
from faultkit import (
    SCENARIO,
    TARGET,
    VARIANTS,
    fault_command,
    our_leftovers,
    run_conformance,
)

from toolnexus_conformance.helpers.jsonrpc import MAX_MESSAGE_BYTES
from toolnexus_conformance.run.runner import API_KEY

HUGE_PROMPT_BYTES = 50 * 1024 * 1024
MEMORY_BUDGET_KB = 600 * 1024  # the run may add this much to the process's peak (it was ~2 GB)


def huge_scenario(folder: Path) -> Path:
    data = json.loads(SCENARIO.read_text(encoding="utf-8"))
    data["id"] = "loop-plain-answer-huge"
    data["prompt"] = "p" * HUGE_PROMPT_BYTES
    path = folder / f"{data['id']}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.usefixtures("needs_proc")
def test_a_scenario_too_large_to_send_is_refused_as_a_scenario_problem(pytester: pytest.Pytester) -> None:
    huge = huge_scenario(pytester.path)
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = run_conformance(pytester, str(huge), str(SCENARIO), "--port=reference", "--port-timeout=10")
    added_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    # Every variant of the huge scenario fails, every variant of the normal one (run after it,
    # on the same shim) passes.
    assert run.outcome == {"passed": VARIANTS, "failed": VARIANTS, "error": 0}, run.text[-3000:]
    refusal = f"scenario file {huge.name}: the harness refused to send client.run to the shim: the encoded line would be "
    sizes = [int(m) for m in re.findall(re.escape(refusal) + r"(\d+) bytes", run.text)]
    assert len(sizes) == VARIANTS and all(size > HUGE_PROMPT_BYTES for size in sizes), run.text[-3000:]
    assert f"over the {MAX_MESSAGE_BYTES} byte line limit" in run.text
    assert "(normative, scenario)" in run.text and "(normative, transport)" not in run.text, "the shim is blamed"
    assert "shim broke the protocol" not in run.text and "restart" not in run.text.replace("stays usable", "")
    assert not run.harness_tracebacks(), run.text[-3000:]
    assert run.seconds < 60, f"the run took {run.seconds:.1f} s"
    assert added_kb < MEMORY_BUDGET_KB, f"the run added {added_kb // 1024} MiB to the peak memory"
    assert our_leftovers() == []


@pytest.mark.usefixtures("needs_proc")
def test_the_api_key_is_in_nothing_a_failing_run_writes(pytester: pytest.Pytester, tmp_path: Path) -> None:
    written = tmp_path / "written"
    artifacts, junit, report = written / "artifacts", written / "junit.xml", written / "report.json"
    run = run_conformance(
        pytester, str(SCENARIO), f"--port-cmd={fault_command('api-key-leak')}", "--port-timeout=30",
        f"--artifacts={artifacts}", f"--junitxml={junit}", f"--conformance-report={report}",
    )
    assert run.outcome == {"passed": VARIANTS - 1, "failed": 1, "error": 0}, run.text
    files = [p for p in (*written.rglob("*"), *pytester.path.rglob("*")) if p.is_file()]
    saved = sorted(p.name for p in artifacts.iterdir())
    assert saved == [f"{TARGET.replace('[', '__').rstrip(']')}.json"], saved
    artifact = json.loads((artifacts / saved[0]).read_text(encoding="utf-8"))
    assert artifact["jsonrpc"] and artifact["phases"], "the artifact must hold the exchange and the phase"
    assert artifact["phases"][0]["params"]["apiKey"] == "<redacted>"
    # The shim echoed the key on stderr and in its port error; both are kept, redacted.
    assert artifact["phases"][0]["error"] == {"kind": "provider", "message": "key <redacted> rejected"}
    assert "broken shim: connecting with api key <redacted>" in artifact["stderr"]
    assert junit in files and report in files
    leaks = [str(p) for p in files if API_KEY.encode() in p.read_bytes()]
    assert leaks == [], f"the API key was written to {leaks}"
    assert API_KEY not in run.text, "the API key reached the run's output"
    assert run.seconds < 30, f"the run took {run.seconds:.1f} s"
    assert our_leftovers() == []
