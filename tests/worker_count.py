"""How many xdist workers ``-n auto`` starts for our own suite: one more than the cores.

Part of the test command's wall time is spent waiting rather than computing: on a shim
left to hang until its deadline, on inner pytest sessions and port processes starting, on
the background mutants' pass. With one worker per core, a core sits idle through each of
those waits. One worker more keeps the cores busy through them (paired runs of the test
command finish sooner at the same CPU time).

``PYTEST_XDIST_AUTO_NUM_WORKERS``, xdist's own override, is honoured as it is: a count set
there is the count used. Only a run that loads tests/conftest.py sees this, and the
conformance suite's ``pytest -n auto --port=X`` still means one worker per core: naming no
path, it loads that conftest (the ini file's ``testpaths``) but runs the scenarios alone
(``toolnexus_conformance.plugin.hooks.runs_whole_suite_alone``), with none of the waits above.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from toolnexus_conformance.plugin.hooks import runs_whole_suite_alone

OVERRIDE = "PYTEST_XDIST_AUTO_NUM_WORKERS"
EXTRA_WORKERS = 1


def auto_workers(cores: int, override: str | None, own_tests: bool) -> int:
    """The workers for ``cores`` as xdist counted them; an override, or a run of the
    conformance suite alone, keeps xdist's count."""
    return cores + EXTRA_WORKERS if own_tests and not override else cores


@pytest.hookimpl(wrapper=True, optionalhook=True)  # optional: a run with -p no:xdist has no such hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    cores = yield
    return auto_workers(cores, os.environ.get(OVERRIDE), own_tests=not runs_whole_suite_alone(config))
