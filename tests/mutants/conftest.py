"""The mutation suite's kill pass starts when collection ends, not at its first test.

Its runs (some ninety forked pytest sessions with their shims) spend part of their time
waiting on pipes, sleeps and shim restarts. Started from the first mutant test, they held that
test's process, and under xdist every worker (each holds mutant tests from the first batch),
idle until they ended. Started here, in the background, they run beside the session's other
tests, and the mutant tests, ordered last (tests/conftest.py), read their results. What each
run does and what the tests assert are unchanged.
"""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from kill_runner import KillReport
from scoped_pool import ScopedPass, wanted

PASS = pytest.StashKey[ScopedPass]()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    names = wanted(session.items)
    if names:
        session.config.stash[PASS] = ScopedPass(names)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    started = session.config.stash.get(PASS, None)
    if started is not None:
        del session.config.stash[PASS]
        started.close(finish=exitstatus != pytest.ExitCode.INTERRUPTED)


@pytest.fixture(scope="session")
def kill_reports(request: pytest.FixtureRequest) -> dict[str, Future[KillReport]]:
    """Every mutant run the session asked for, started when collection ended."""
    started = request.config.stash.get(PASS, None)
    assert started is not None, "the mutants' kill pass was not started at the end of collection (tests/mutants/conftest.py)"
    return started.futures
