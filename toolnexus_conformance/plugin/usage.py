"""Misuse of the command line, each as one line saying what to do instead.

The plugin (``plugin/hooks.py``) asks this module before it sets a conformance run up: a path
argument that is a symlink loop, a scenario file or folder named without a port to run it
against, ``-n`` when pytest-xdist is not installed. Each check raises ``pytest.UsageError``,
which pytest prints as a single ``ERROR:`` line and exit code 4, never a traceback. The
gate (``ci_gate/gate.py``) asks the same questions before it starts pytest, so both say the same.
"""

from __future__ import annotations

import errno
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolnexus_conformance.helpers.paths import scenarios_dir
from toolnexus_conformance.plugin.collection import real_path

# The option pytest-xdist would own, registered only when it is not installed.
XDIST_HINT = "pip install pytest-xdist (the harness depends on it; a wheel installed with --no-deps lacks it)"


def xdist_installed() -> bool:
    return importlib.util.find_spec("xdist") is not None


def check_xdist_stand_in(args: Sequence[str]) -> None:
    """Without pytest-xdist, ``-n N`` would end in argparse's "unrecognized arguments": say
    what is missing instead. Called with the command line before pytest parses it, so the
    plugin needs no option of xdist's (pytest reserves lowercase short options)."""
    if xdist_installed():
        return
    given = requested_workers(args)
    if given is not None:
        raise pytest.UsageError(
            f"-n {given} runs tests in parallel with pytest-xdist, which is not installed here: {XDIST_HINT}"
        )


def requested_workers(args: Sequence[str]) -> str | None:
    """What ``-n``/``--numprocesses`` asks for on a command line, or None when it is not given."""
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            return None
        if arg in ("-n", "--numprocesses"):
            return next(rest, "")
        if arg.startswith("--numprocesses="):
            return arg.partition("=")[2]
        if arg.startswith("-n") and not arg.startswith("--"):
            return arg[2:].removeprefix("=")
    return None


def symlink_loop(argument: str) -> Path | None:
    """The path an argument names, when it is a symlink loop (a link to itself, or a cycle)."""
    path = Path(argument.split("::", 1)[0])
    try:
        os.stat(path)
    except OSError as exc:
        return path if exc.errno == errno.ELOOP else None
    return None


def check_arguments(config: pytest.Config, *, port_given: bool) -> None:
    """Path arguments a conformance run cannot take: symlink loops; without a port, scenarios."""
    for argument in config.args:
        loop = symlink_loop(argument)
        if loop is not None:
            raise pytest.UsageError(
                f"{loop}: a symlink loop (it points back at itself); name the scenario file it should point to"
            )
    if port_given:
        return
    root = real_path(scenarios_dir())
    for argument in config.args:
        path = Path(argument.split("::", 1)[0])
        real = real_path(path)
        inside = root is not None and real is not None and (real == root or root in real.parents)
        if inside or (path.suffix == ".json" and path.is_file()):
            raise pytest.UsageError(
                f"{argument}: scenario files run against a port: add --port=reference "
                "(or --port=NAME from toolnexus_conformance/shim/ports.toml, or --port-cmd=CMD for your own shim)"
            )
