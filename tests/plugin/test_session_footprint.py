"""What a conformance session costs besides its variants: a session of scenario variants
alone unregisters hypothesis's pytest plugin (whose terminal summary imports all of
hypothesis), and a session that also collects other tests keeps it."""

from __future__ import annotations

from pathlib import Path

from plugin_runner import SCENARIO, run_pytest

PROBE = '''
import sys

def pytest_terminal_summary(terminalreporter, config):
    registered = config.pluginmanager.has_plugin("hypothesispytest")
    imported = "hypothesis" in sys.modules
    terminalreporter.write_line(f"PROBE hypothesis plugin={registered} imported={imported}")
'''


def _probe(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "footprint_probe.py").write_text(PROBE, encoding="utf-8")
    return {"PYTHONPATH": str(tmp_path)}


def test_a_session_of_variants_alone_leaves_hypothesis_unloaded(tmp_path: Path) -> None:
    run = run_pytest(str(SCENARIO), "--port=reference", "-p", "footprint_probe", env_extra=_probe(tmp_path))
    assert run.code == 0, run.output
    assert "PROBE hypothesis plugin=False imported=False" in run.output, run.output


def test_a_session_with_other_tests_keeps_the_hypothesis_plugin(tmp_path: Path) -> None:
    other = tmp_path / "test_other.py"
    other.write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    run = run_pytest(
        str(SCENARIO), str(other), "--port=reference", "-p", "footprint_probe", "--rootdir", str(tmp_path.parent),
        env_extra=_probe(tmp_path),
    )
    assert run.code == 0, run.output
    assert "PROBE hypothesis plugin=True" in run.output, run.output
