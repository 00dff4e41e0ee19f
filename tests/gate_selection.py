"""Which runs collect the gates (tests/gates): the real ports' whole conformance runs, the
CI gate end to end (installs from the package index, port builds) and the mutants over every
scenario of their rules. They take minutes and check other ports, registries, the drop-in gate
and the mutant scopes rather than the harness, so the README's test command leaves them out and
says so in one summary line; a command naming the folder runs them (.ci/run runs both).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

GATES = Path(__file__).resolve().parent / "gates"
GATE_COMMAND = "python -m pytest -n auto tests/gates"
LEFT_OUT = f"the gates (real ports, the CI gate end to end, mutants on their full scenario sets) did not run: {GATE_COMMAND}"


class HasArgs(Protocol):
    args: list[str]


def _arguments(config: HasArgs) -> list[Path]:
    return [Path(arg.split("::")[0]).resolve() for arg in config.args]


def gates_asked(config: HasArgs) -> bool:
    """The command names tests/gates or something inside it."""
    return any(path == GATES or GATES in path.parents for path in _arguments(config))


def ignored(collection_path: Path, config: HasArgs) -> bool:
    return collection_path == GATES and not gates_asked(config)


def left_out(config: HasArgs) -> bool:
    """The run would have collected the gates (it names a folder holding them) but did not."""
    return not gates_asked(config) and any(path in GATES.parents for path in _arguments(config))
