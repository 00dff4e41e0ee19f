"""Processes a session spawns ahead: the first shim while pytest collects, and spares for the
variants that resume in a fresh shim — but only for those the port's handshake covers (a
port without ``resume`` runs none of them, so no spare is booted for it)."""

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

def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_line(f"PROBE spawned={len(spawned)}")
'''

ACROSS_PROCESS = REPO / "fixtures" / "scenarios" / "resume-across-process.json"


def _spawned(tmp_path: Path, *args: str, exit_code: int = 0) -> int:
    (tmp_path / "spares_probe.py").write_text(PROBE, encoding="utf-8")
    run = run_pytest(str(ACROSS_PROCESS), *args, "-p", "spares_probe", env_extra={"PYTHONPATH": str(tmp_path)})
    assert run.code == exit_code, run.output
    line = next(line for line in run.output.splitlines() if line.startswith("PROBE spawned="))
    return int(line.removeprefix("PROBE spawned="))


def test_a_port_with_resume_gets_its_first_shim_and_spares_ahead(tmp_path: Path) -> None:
    # 6 variants, each restarting once: the first process plus one per restart, no more.
    assert _spawned(tmp_path, "--port=reference") == 7


def test_a_port_without_resume_boots_no_spare_for_variants_it_cannot_run(tmp_path: Path) -> None:
    shim = REPO / "tests" / "cross_resume" / "no_resume_shim.py"
    # Its variants fail for the missing capability (no expectations here), after one process.
    assert _spawned(tmp_path, f"--port-cmd={sys.executable} {shim}", exit_code=1) == 1
