"""The README's test command leaves the gates out, loudly; a command naming them runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gate_selection import GATE_COMMAND, GATES, LEFT_OUT, gates_asked, ignored, left_out

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Config:
    args: list[str] = field(default_factory=list)


def test_the_test_command_skips_the_gates_folder_and_says_how_to_run_it() -> None:
    readme_command = Config([str(ROOT / "tests"), str(ROOT / "fixtures" / "scenarios")])
    assert ignored(GATES, readme_command)
    assert not ignored(ROOT / "tests" / "mutants", readme_command)
    assert left_out(readme_command)
    assert GATE_COMMAND in LEFT_OUT and GATE_COMMAND in (ROOT / "README.md").read_text(encoding="utf-8")
    assert GATE_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_naming_the_gates_runs_them_and_says_nothing_about_leaving_them_out() -> None:
    for args in ([str(GATES)], [f"{GATES / 'test_real_ports.py'}::test_port_meets_its_expectations"], ["tests", "tests/gates"]):
        config = Config(args)
        assert gates_asked(config), args
        assert not ignored(GATES, config) and not left_out(config), args


def test_a_run_of_other_folders_has_no_gates_to_leave_out() -> None:
    config = Config([str(ROOT / "tests" / "harness")])
    assert not gates_asked(config) and not left_out(config)
