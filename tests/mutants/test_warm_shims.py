"""The mutant shims' zygote (``shim_zygote`` on toolnexus_conformance/shim/fork_server.py, ``warm_shims``): each shim it
forks is a process of its own on the client's pipes, serves the named mutant, ends the way
its client reports, and never outlives its client or the zygote."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import proc_tree
import pytest
from kill_runner import ROOT
from warm_shims import warm_shims

from toolnexus_conformance.shim.session import ShimSession


@pytest.fixture(scope="module")
def shim() -> Iterator[str]:
    with warm_shims() as command:
        assert "fork_client.py" in command, "the zygote did not come up, so the runs would start cold"
        yield command


def zygote_pid(command: str) -> int:
    socket_path = shlex.split(command)[-1]
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(part.endswith(b"shim_zygote.py") for part in argv) and socket_path.encode() in argv:
                return int(name)
    raise AssertionError(f"no zygote process serves {socket_path}")


def gone_within(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2] for pid in pids):
            return True
        time.sleep(0.02)
    return False


def said_within(session: ShimSession, text: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while text not in session.process.stderr_tail():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def handshake(process: subprocess.Popen[bytes]) -> dict:
    assert process.stdin is not None and process.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def test_a_warm_shim_serves_the_named_mutant_in_a_process_of_its_own(shim: str) -> None:
    zygote = zygote_pid(shim)
    before = proc_tree.children(zygote)
    with ShimSession(shlex.split(f"{shim} results-reversed")) as session:
        assert session.ensure_alive().port == "reference"
        client = session.process.pid
        forked = proc_tree.children(zygote) - before
        assert len(forked) == 1 and client not in forked, (client, forked)
        # stderr is read on its own thread: the child's line may land after the handshake.
        assert said_within(session, "mutant shim: results-reversed:", 5), session.process.stderr_tail()
    assert gone_within(forked, 5), "the shim must end with its session"


def test_the_mutant_is_applied_in_the_child_only(shim: str) -> None:
    """Two shims in a row from one zygote: the second is not the first one's mutant."""
    lines = []
    for name in ("results-reversed", "sequential-calls"):
        done = subprocess.run([*shlex.split(shim), name], input=b"", capture_output=True, timeout=30, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        lines.append(done.stderr.decode().strip().splitlines()[0])
    assert lines[0].startswith("mutant shim: results-reversed:") and lines[1].startswith("mutant shim: sequential-calls:"), lines


def test_the_client_ends_as_its_shim_did(shim: str) -> None:
    done = subprocess.run([*shlex.split(shim), "no-such-mutant"], input=b"", capture_output=True, timeout=30, cwd=ROOT)
    assert done.returncode == 2, done
    assert b"expected one mutant name" in done.stderr


def test_a_shim_killed_by_a_signal_kills_its_client_with_it(shim: str) -> None:
    zygote = zygote_pid(shim)
    before = proc_tree.children(zygote)
    process = subprocess.Popen([*shlex.split(shim), "results-reversed"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        assert "result" in handshake(process)
        (forked,) = proc_tree.children(zygote) - before
        os.kill(forked, signal.SIGKILL)
        assert process.wait(10) == -signal.SIGKILL
    finally:
        process.kill()
        process.wait()


def test_killing_the_client_kills_its_shim_and_closes_the_pipes(shim: str) -> None:
    zygote = zygote_pid(shim)
    before = proc_tree.children(zygote)
    process = subprocess.Popen([*shlex.split(shim), "results-reversed"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    assert "result" in handshake(process)
    forked = proc_tree.children(zygote) - before
    assert len(forked) == 1
    process.kill()
    process.wait()
    assert gone_within(forked, 5), "a shim whose client was killed must not live on"
    assert process.stdout is not None
    assert process.stdout.read() == b"", "nothing may hold the shim's stdout open once both are gone"


def test_stopping_the_zygote_ends_and_reaps_every_live_shim() -> None:
    with warm_shims() as command:
        zygote = zygote_pid(command)
        process = subprocess.Popen([*shlex.split(command), "results-reversed"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
        assert "result" in handshake(process)
        forked = proc_tree.children(zygote)
        assert len(forked) == 1
    assert not Path(f"/proc/{zygote}").exists(), "the zygote is reaped when the pass ends"
    assert gone_within(forked, 5), "a live shim ends with its zygote"
    assert process.wait(10) != 0, "its client reports that its shim did not finish"


def test_the_zygote_never_imports_the_relay_extension_for_its_children() -> None:
    """A shim with relay off runs with ``reference_py.relay`` never imported, warm or cold."""
    probe = (
        "import sys; sys.path.insert(0, 'tests/mutants'); import shim_zygote; shim_zygote.preload(); "
        "print('reference_py.relay' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", "the zygote preloads reference_py.relay, so no-relay mutants would run with it"
