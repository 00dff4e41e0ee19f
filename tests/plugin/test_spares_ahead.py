"""Processes a session spawns ahead: the first shim while pytest collects (in a session of
scenario variants alone), and spares for the variants that resume in a fresh shim — but
only for those the port's handshake covers (a port without ``resume`` runs none of them,
so no spare is booted for it)."""

from __future__ import annotations

import sys
from pathlib import Path

from plugin_runner import REPO, run_pytest

PROBE = '''
import harness.shim_session as shim_session

spawned = []
_original = shim_session.ShimChild

class CountingChild(_original):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        spawned.append(self.pid)

shim_session.ShimChild = CountingChild

collected = []

def pytest_collection_finish(session):
    collected.append(len(spawned))

def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_line(f"PROBE spawned={len(spawned)}")
    terminalreporter.write_line(f"PROBE before-first-test={collected[0]}")
'''

ACROSS_PROCESS = REPO / "fixtures" / "scenarios" / "resume-across-process.json"


def _probe(tmp_path: Path, *args: str, exit_code: int = 0, what: str = "spawned") -> int:
    (tmp_path / "spares_probe.py").write_text(PROBE, encoding="utf-8")
    run = run_pytest(*args, "-p", "spares_probe", env_extra={"PYTHONPATH": str(tmp_path)})
    assert run.code == exit_code, run.output
    line = next(line for line in run.output.splitlines() if line.startswith(f"PROBE {what}="))
    return int(line.removeprefix(f"PROBE {what}="))


def _spawned(tmp_path: Path, *args: str, exit_code: int = 0) -> int:
    return _probe(tmp_path, str(ACROSS_PROCESS), *args, exit_code=exit_code)


def test_a_port_with_resume_gets_its_first_shim_and_spares_ahead(tmp_path: Path) -> None:
    # 6 variants, each restarting once: the first process plus one per restart, no more.
    assert _spawned(tmp_path, "--port=reference") == 7


def test_a_port_without_resume_boots_no_spare_for_variants_it_cannot_run(tmp_path: Path) -> None:
    shim = REPO / "tests" / "cross_resume" / "no_resume_shim.py"
    # Its variants fail for the missing capability (no expectations here), after one process.
    assert _spawned(tmp_path, f"--port-cmd={sys.executable} {shim}", exit_code=1) == 1


def test_a_session_of_scenarios_starts_its_shim_while_collecting(tmp_path: Path) -> None:
    assert _probe(tmp_path, str(ACROSS_PROCESS), "--port=reference", what="before-first-test") == 1


def test_a_session_with_other_tests_starts_no_shim_before_a_variant_asks(tmp_path: Path) -> None:
    # Its other tests may run first, and a shim idling beside them is not theirs to see.
    other = tmp_path / "test_other.py"
    other.write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    args = (str(other), str(ACROSS_PROCESS), "--port=reference", "--rootdir", str(tmp_path.parent))
    assert _probe(tmp_path, *args, what="before-first-test") == 0
