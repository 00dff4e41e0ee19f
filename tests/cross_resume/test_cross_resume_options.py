"""Misusing the cross-port options is one usage error naming the fix, never a traceback or a
run that quietly checks something else; and the refusal reason for a port without resume."""

from __future__ import annotations

import pytest
from cross_runner import InProcess, scenario

from toolnexus_conformance.cross.resume import refusal
from toolnexus_conformance.shim.session import Handshake


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--resume-port=reference",), "--resume-port needs --port (or --port-cmd)"),
        (
            ("--port=reference", "--resume-port=reference", "--expectations=x.toml", "--update-expectations"),
            "--update-expectations is not used with --resume-port",
        ),
        (("--port=reference", "--resume-port=nosuchport"), "unknown port 'nosuchport'"),
        (("--port=reference", "--resume-port=golang"), "--resume-port-src=PATH/TO/toolnexus"),
        (
            ("--port=reference", "--resume-port=reference", "--resume-expectations=no/such.toml"),
            "no/such.toml: no such expectations file",
        ),
        (
            ("--port=reference", "--resume-port=reference", "--resume-expectations=conformance/golang.toml"),
            "this expectations file is for port 'golang', not 'reference'",
        ),
    ],
)
def test_misuse_is_one_usage_error(args: tuple[str, ...], message: str, run_inprocess: InProcess) -> None:
    run = run_inprocess(scenario("relay-single-durable"), *args)
    assert run.code == 4, run.output[-2000:]
    assert message in run.output
    assert "Traceback" not in run.output


def test_xdist_in_a_cross_run_is_one_usage_error(run_inprocess: InProcess) -> None:
    # xdist's own -n option is what is refused, in pytest_configure: before xdist's session
    # start would start a worker.
    run = run_inprocess(scenario("relay-single-durable"), "--port=reference", "--resume-port=reference", "-n", "2",
                        keep_xdist=True)
    assert run.code == 4, run.output[-2000:]
    assert "drop -n/--dist (xdist)" in run.output
    assert "Traceback" not in run.output


def _handshake(port: str, capabilities: tuple[str, ...]) -> Handshake:
    return Handshake(port, "python", "x", "1", 1, capabilities, {})


def test_refusal_names_each_port_lacking_resume() -> None:
    able = _handshake("reference", ("openai", "relay", "resume"))
    unable = _handshake("java", ("openai", "relay"))
    assert refusal(able, able, "reference", "reference") is None
    why = refusal(able, unable, "reference", "java")
    assert why is not None and "port 'java' does not declare the 'resume' capability (it declares openai, relay)" in why
    both = refusal(unable, unable, "java", "js")
    assert both is not None and "'java'" in both and "'js'" in both
