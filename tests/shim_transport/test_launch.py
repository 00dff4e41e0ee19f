"""The launch seam (toolnexus_conformance/shim/launch.py, launchers.py, forked.py): the port
registry's ``launch`` key chooses how a port's shims start; a shim started by either strategy
answers the handshake, runs a scenario as the other does, and restarts as a fresh process; a
forked session's zygote ends with it; a zygote that cannot come up leaves the starts cold; a
differential's shared zygote serves every session of a port; a bad key is a one-line error.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.golden.normalize import normalize
from toolnexus_conformance.run.observables import observables
from toolnexus_conformance.run.runner import run_variant
from toolnexus_conformance.scenario.model import load_scenario
from toolnexus_conformance.shim import forked
from toolnexus_conformance.shim.forked import ForkedLauncher, warm_ports
from toolnexus_conformance.shim.launch import PlainLauncher
from toolnexus_conformance.shim.launchers import launcher_for, port_session
from toolnexus_conformance.shim.ports import LAUNCHES, PortError, ResolvedPort, load_registry, resolve
from toolnexus_conformance.shim.session import ShimSession

SCENARIO = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "loop-tool-loop.json"


def _port(name: str, launch: str) -> ResolvedPort:
    return dataclasses.replace(resolve(name, None, None, None), launch=launch)


def _session(port: ResolvedPort) -> ShimSession:
    return port_session(port, env={**os.environ, **port.env})


def _ran(session: ShimSession, provider: FakeProvider) -> list[Any]:
    variants = list(load_scenario(SCENARIO).variants())[:2]
    return [normalize(observables(run_variant(v, session, provider, timeout=10.0))) for v in variants]


def test_the_registry_forks_only_the_reference_shims() -> None:
    launches = {name: port.launch for name, port in load_registry().items()}
    assert {name for name, launch in launches.items() if launch == "forked"} == {"reference", "reference-norelay"}
    assert set(launches.values()) <= set(LAUNCHES)
    assert isinstance(launcher_for(resolve("reference", None, None, None)), ForkedLauncher)


def test_an_ad_hoc_command_is_a_plain_subprocess() -> None:
    shim = Path(__file__).resolve().parents[2] / "shims" / "reference" / "shim.py"
    port = resolve("mine", f"{sys.executable} {shim}", None, None)
    assert port.launch == "plain" and isinstance(launcher_for(port), PlainLauncher)


def test_a_bad_launch_value_is_a_one_line_error(tmp_path: Path) -> None:
    registry = tmp_path / "ports.toml"
    registry.write_text('[odd]\nstart = ["./shim"]\nlaunch = "zygote"\n', encoding="utf-8")
    with pytest.raises(PortError) as raised:
        load_registry(registry)
    message = str(raised.value)
    assert "\n" not in message and "'odd'" in message and "'zygote'" in message and "'forked'" in message


@pytest.mark.parametrize("name", ["reference", "reference-norelay"])
def test_each_strategy_answers_and_runs_a_scenario_alike(name: str) -> None:
    with FakeProvider() as provider, ExitStack() as stack:
        ran = {}
        for launch in LAUNCHES:
            session = stack.enter_context(_session(_port(name, launch)))
            assert session.ensure_alive().port == name
            first = _ran(session, provider)
            pid = session.process.pid
            session.restart()
            assert session.process.pid != pid, "a restart is a fresh process"
            assert _ran(session, provider) == first, f"{launch}: a restarted shim ran otherwise"
            ran[launch] = first
        assert ran["forked"] == ran["plain"]


def test_a_forked_session_stops_its_zygote_with_it() -> None:
    session = _session(_port("reference", "forked"))
    with session:
        session.ensure_alive()
        assert isinstance(session.launcher, ForkedLauncher)
        zygote = session.launcher.zygote
        assert zygote is not None and zygote.poll() is None
    assert zygote.poll() is not None, "the zygote outlived its session"


def test_a_forked_shim_killed_from_outside_is_replaced_by_a_fresh_one() -> None:
    with _session(_port("reference", "forked")) as session:
        session.ensure_alive()
        pid = session.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while session.alive and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not session.alive, "the killed shim went unnoticed"
        with FakeProvider() as provider:
            assert _ran(session, provider)  # the next call starts a fresh process
        assert session.recoveries == 1 and session.process.pid != pid


def test_a_zygote_that_cannot_start_leaves_every_start_cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(forked, "ZYGOTE", tmp_path / "no-such-zygote.py")
    with _session(_port("reference", "forked")) as session, FakeProvider() as provider:
        assert session.ensure_alive().port == "reference"
        assert _ran(session, provider)
        session.restart()
        assert _ran(session, provider)


def test_a_shared_zygote_serves_every_session_of_its_port_and_ends_with_its_stack() -> None:
    plain = ResolvedPort("adhoc", ["./shim"], 10.0, {}, "--port-cmd=./shim")
    ports = [resolve("reference", None, None, None), plain, resolve("reference-norelay", None, None, None)]
    with ExitStack() as stack:
        warm = warm_ports(ports, stack)
        assert warm[1] is plain, "a plain port is left as it is"
        assert warm[0].fork_server and warm[2].fork_server and warm[0].fork_server != warm[2].fork_server
        assert warm_ports([warm[0]], stack)[0] is warm[0], "a port with a zygote keeps it"
        for port, name in ((warm[0], "reference"), (warm[2], "reference-norelay")):
            for _ in range(2):
                with _session(port) as session:
                    assert session.ensure_alive().port == name
        folder = Path(warm[0].fork_server).parent
    assert not folder.exists(), "the zygote's socket folder was left behind"
