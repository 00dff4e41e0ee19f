"""The mutants' zygote (``shim_zygote`` on toolnexus_conformance/shim/fork_server.py, started by
``warm_shims``): each shim a kill run's session starts from it is a process of its own that
serves the named mutant, ends with its session, and never outlives the zygote."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import proc_tree
import pytest
from catalog import load
from kill_runner import ROOT, MutantShims, kill
from kill_scope import scoped_files
from warm_shims import mutant_shims

from toolnexus_conformance.helpers.errors import ShimError
from toolnexus_conformance.shim.launchers import port_session
from toolnexus_conformance.shim.session import ShimSession

MUTANTS = load()


def zygote_pid(socket_path: str) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            argv = proc_tree.cmdline(int(entry.name))
            if any(part.endswith("shim_zygote.py") for part in argv) and socket_path in argv:
                return int(entry.name)
    raise AssertionError(f"no zygote process serves {socket_path}")


def gone_within(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(proc_tree.state(pid) in {"Z", "X", None} for pid in pids):
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


def test_a_warm_shim_serves_the_named_mutant_in_a_process_of_its_own(shims: MutantShims) -> None:
    assert shims.zygote_socket, "the zygote did not come up, so the runs would start cold"
    zygote = zygote_pid(shims.zygote_socket)
    before = proc_tree.children(zygote)
    with port_session(shims.port("results-reversed")) as session:
        assert session.ensure_alive().port == "reference"
        forked = proc_tree.children(zygote) - before
        assert forked == {session.process.pid}, (session.process.pid, forked)
        # stderr is read on its own thread: the child's line may land after the handshake.
        assert said_within(session, "mutant shim: results-reversed:", 5), session.process.stderr_tail()
    assert gone_within(forked, 5), "the shim must end with its session"


def test_the_mutant_is_applied_in_the_child_only(shims: MutantShims) -> None:
    """After a results-reversed shim served from the zygote, another mutant's shims from the
    same zygote keep the call order: the patch stayed in the child that applied it."""
    scope = scoped_files("results-reversed")
    broken = set(MUTANTS["results-reversed"].kills)
    assert broken <= set(kill("results-reversed", scope, shims).trusted()), "the first mutant was not applied"
    leaked = broken & set(kill("usage-last-turn-only", scope, shims).trusted())
    assert not leaked, f"a later shim of the zygote still reverses results: {sorted(leaked)} fired"


def test_an_unknown_mutant_fails_its_handshake_saying_what_was_expected(shims: MutantShims) -> None:
    with port_session(shims.port("no-such-mutant")) as session, pytest.raises(ShimError) as raised:
        session.ensure_alive()
    assert "expected one mutant name" in str(raised.value) + raised.value.stderr_tail


def test_stopping_the_zygote_ends_and_reaps_every_live_shim() -> None:
    with mutant_shims() as shims:
        zygote = zygote_pid(shims.zygote_socket)
        session = port_session(shims.port("results-reversed"))
        session.ensure_alive()
        forked = proc_tree.children(zygote)
        assert forked == {session.process.pid}
    try:
        assert not Path(f"/proc/{zygote}").exists(), "the zygote is reaped when the series ends"
        assert gone_within(forked, 5), "a live shim ends with its zygote"
    finally:
        session.close()


def test_the_zygote_never_imports_the_relay_extension_for_its_children() -> None:
    """A shim with relay off runs with ``reference_py.relay`` never imported, warm or cold."""
    probe = (
        "import sys; sys.path.insert(0, 'tests/mutants'); import shim_zygote; shim_zygote.preload(); "
        "print('reference_py.relay' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", "the zygote preloads reference_py.relay, so no-relay mutants would run with it"
