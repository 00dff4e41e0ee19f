"""``pytest --port=A --resume-port=B`` end to end: the reference handing its halts to itself
passes every variant with a durable halt; a broken port on either side fails under the rule
it breaks, placed in the phase (and named by the port) that broke it; each port's known
failures explain only the phase that port ran; a port without ``resume`` is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from cross_runner import SCENARIOS, InProcess, mutant_cmd, no_resume_cmd, read_report, reference_cmd, scenario

from toolnexus_conformance.scenario.model import load_scenario, scenario_files


def _variants_with_a_halt() -> tuple[int, int]:
    """(variants with a durable halt, variants without) over the whole suite."""
    with_halt = without = 0
    for path in scenario_files(SCENARIOS):
        for variant in load_scenario(path).variants():
            if variant.resume_entry is None:
                without += 1
            else:
                with_halt += 1
    return with_halt, without


@pytest.mark.timeout(600)  # the whole suite's durable halts, twice the shims: minutes under load
@pytest.mark.slow
def test_reference_to_reference_passes_every_durable_halt(tmp_path: Path, run_inprocess: InProcess) -> None:
    target = tmp_path / "cross.json"
    run = run_inprocess("--port=reference", "--resume-port=reference", f"--conformance-report={target}", "-q")
    with_halt, without = _variants_with_a_halt()
    assert run.code == 0, run.output[-3000:]
    assert f"{with_halt} passed, {without} deselected" in run.output
    assert f"not applicable (deselected): {without} variants of" in run.output
    block = read_report(target)["crossResume"]
    assert (block["halting"], block["resuming"]) == ("reference", "reference")
    assert block["variants"] == {"passed": with_halt, "expected": 0, "failed": 0, "skipped": 0}
    assert block["differences"] == []
    assert block["deselected"]["variants"] == without


@pytest.mark.timeout(300)
def test_a_resume_port_corrupting_the_transcript_fails_under_the_rule_in_the_resume_phase(tmp_path: Path, run_inprocess: InProcess) -> None:
    target = tmp_path / "cross.json"
    run = run_inprocess(
        scenario("relay-alongside-real-durable"),
        "--port=reference",
        "--resume-port=broken-resume",
        f"--resume-port-cmd={mutant_cmd('prior-results-rerun')}",
        f"--conformance-report={target}",
        f"--artifacts={tmp_path / 'artifacts'}",
    )
    assert run.code == 1, run.output[-3000:]
    kept = read_report(tmp_path / "artifacts" / "relay-alongside-real-durable__openai-run.json")
    assert kept["crossResume"] == {"haltingPort": "reference", "resumingPort": "broken-resume"}
    assert [p["entry"] for p in kept["phases"]] == ["run", "runWithAnswer"]
    assert "halting phase on port reference, resume phase on port broken-resume" in run.output
    assert "[resume.keeps-prior-results] (normative, divergence)" in run.output
    assert "fails in the resume phase, on port broken-resume" in run.output
    assert "--resume-port=broken-resume --resume-port-cmd=" in run.output  # the rerun line selects both ports
    differences = read_report(target)["crossResume"]["differences"]
    kept = [d for d in differences if d["rule"] == "resume.keeps-prior-results"]
    assert kept and all(d["phase"] == "resume" and d["port"] == "broken-resume" and not d["known"] for d in kept)
    assert not [d for d in differences if d["phase"] == "halting"], differences


@pytest.mark.timeout(300)
def test_a_halting_port_breaking_the_halt_is_named_as_the_halting_port(tmp_path: Path, run_inprocess: InProcess) -> None:
    run = run_inprocess(
        scenario("relay-single-durable"),
        "--port=broken-halt",
        f"--port-cmd={mutant_cmd('relay-call-extra-key')}",
        "--resume-port=reference",
    )
    assert run.code == 1, run.output[-3000:]
    assert "[relay.call-entry-keys]" in run.output
    assert "fails in the halting phase, on port broken-halt" in run.output
    assert "fails in the resume phase" not in run.output


@pytest.mark.timeout(300)
def test_a_resume_difference_carried_over_from_a_broken_halt_is_the_halting_ports(run_inprocess: InProcess) -> None:
    # The halt sends the prompt as blocks, so the transcript every resume replays differs from
    # the golden's; the reference's resume of that same halt (the oracle run) shows the same.
    run = run_inprocess(
        scenario("relay-alongside-real-durable"),
        "-k", "openai-run",
        "--port=broken-halt",
        f"--port-cmd={mutant_cmd('prompt-as-blocks')}",
        "--resume-port=faithful",
        f"--resume-port-cmd={reference_cmd()}",
    )
    assert run.code == 1, run.output[-3000:]
    assert "[golden.observables] (normative, golden)" in run.output
    assert "fails in the halting phase, on port broken-halt [the resume phase equals the reference's resume of the same halt]" in run.output
    assert "in the resume phase, on port faithful" not in run.output


@pytest.mark.timeout(300)
def test_a_broken_resume_after_a_broken_halt_is_both_ports(run_inprocess: InProcess) -> None:
    run = run_inprocess(
        scenario("relay-alongside-real-durable"),
        "-k", "openai-run",
        "--port=broken-halt",
        f"--port-cmd={mutant_cmd('prompt-as-blocks')}",
        "--resume-port=broken-resume",
        f"--resume-port-cmd={mutant_cmd('prior-results-rerun')}",
    )
    assert run.code == 1, run.output[-3000:]
    assert (
        "fails in the halting phase, on port broken-halt and in the resume phase, on port broken-resume "
        "[the resume phase differs from the reference's resume of the same halt too: $.phases[1]"
    ) in run.output
    assert "fails in the resume phase, on port broken-resume [check run on the halting phase alone" in run.output


def _expectations(path: Path, port: str, entries: dict[str, str]) -> Path:
    body = [f'port = "{port}"', ""]
    for key, reason in entries.items():
        body += ["[[expected]]", f'key = "{key}"', f'reason = "{reason}"', ""]
    path.write_text("\n".join(body), encoding="utf-8")
    return path


@pytest.mark.timeout(300)
def test_a_known_failure_applies_only_to_the_phase_its_port_ran(tmp_path: Path, run_inprocess: InProcess) -> None:
    variants = [f"relay-alongside-real-durable[{s}-{e}]" for s in ("openai", "anthropic") for e in ("run", "stream", "ask")]
    entries = {f"{v}::resume.keeps-prior-results": "divergence" for v in variants}
    entries |= {f"{v}::golden.observables": "golden" for v in variants}
    common = (
        scenario("relay-alongside-real-durable"),
        "--port=reference",
        "--resume-port=broken-resume",
        f"--resume-port-cmd={mutant_cmd('prior-results-rerun')}",
    )
    # Listed for the resuming port, whose phase broke them: known failures.
    as_resuming = run_inprocess(*common, f"--resume-expectations={_expectations(tmp_path / 'b.toml', 'broken-resume', entries)}")
    assert as_resuming.code == 0, as_resuming.output[-3000:]
    assert "0 passed, 6 failed only as the ports' expectations say, 0 failed" in as_resuming.output
    # The same entries for the halting port: its phase did not fail them, so they explain nothing.
    as_halting = run_inprocess(*common, f"--expectations={_expectations(tmp_path / 'a.toml', 'reference', entries)}")
    assert as_halting.code == 1, as_halting.output[-3000:]
    assert "fails in the resume phase, on port broken-resume" in as_halting.output


@pytest.mark.timeout(300)
def test_a_port_without_resume_is_refused_with_the_reason(run_inprocess: InProcess) -> None:
    run = run_inprocess(
        scenario("relay-single-durable"),
        "--port=reference",
        "--resume-port=no-resume",
        f"--resume-port-cmd={no_resume_cmd()}",
    )
    assert run.code == 4, run.output[-3000:]
    assert "cross-port resume refused: port 'no-resume' does not declare the 'resume' capability" in run.output
    assert "Traceback" not in run.output


@pytest.mark.timeout(300)
def test_a_variant_needing_a_capability_one_port_lacks_is_skipped_with_the_reason(tmp_path: Path, run_inprocess: InProcess) -> None:
    target = tmp_path / "cross.json"
    run = run_inprocess(
        scenario("relay-single-durable"),
        scenario("resume-non-relay-reexecutes"),
        "--port=reference",
        "--resume-port=reference-norelay",
        f"--conformance-report={target}",
        "-rs",
    )
    assert run.code == 0, run.output[-3000:]
    assert "port 'reference-norelay' (the resuming port) does not declare ['relay']" in run.output
    block = read_report(target)["crossResume"]
    relay_variants = len(list(load_scenario(SCENARIOS / "relay-single-durable.json").variants()))
    plain_variants = len(list(load_scenario(SCENARIOS / "resume-non-relay-reexecutes.json").variants()))
    assert block["variants"] == {"passed": plain_variants, "expected": 0, "failed": 0, "skipped": relay_variants}
    assert {s["variant"].split("[")[0] for s in block["skipped"]} == {"relay-single-durable"}
    assert f"{relay_variants} skipped" in run.output
