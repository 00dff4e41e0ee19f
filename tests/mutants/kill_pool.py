"""Running many mutants at once: each on its own thread, in a process forked from one warm
fork server (``forked_pytest``), its shims forked from a warm zygote (``warm_shims``),
started together the first time a test asks, so the catalogue costs about one mutant run
per core rather than one after another. Under xdist
every worker collects every mutant test, so the workers of one test run claim each mutant
in a shared folder (``kill_runner.kill_once_per_run``): each mutant runs once per test run,
whatever the number of workers.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from multiprocessing import forkserver
from pathlib import Path

import forked_pytest
from kill_runner import KillReport, kill_once_per_run
from warm_shims import warm_shims

WORKERS = max(2, os.cpu_count() or 2)


def requested(items: Iterable[object], test_name: str) -> list[str]:
    """The mutants the session's collected ``test_name`` items ask for (its ``name`` parameter)."""
    return [
        item.callspec.params["name"]  # type: ignore[attr-defined]
        for item in items
        if getattr(item, "originalname", "") == test_name and hasattr(item, "callspec")
    ]


@contextmanager
def kill_all(names: list[str], files_of: Callable[[str], tuple[str, ...]], label: str) -> Iterator[dict[str, Future[KillReport]]]:
    """Start every mutant of ``names`` on the scenarios ``files_of`` gives it, longest first
    (by number of scenarios): a future per mutant. ``label`` names the kind of run, so two
    kinds in one test run never read each other's claims."""
    files = {name: files_of(name) for name in names}
    # The in-process relay mutant waits out the host's hold timeout in every variant.
    order = sorted(names, key=lambda name: (name != "sequential-calls", -len(files[name]), name))
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    shared = Path(tempfile.gettempdir()) / f"toolnexus-mutants-{label}-{run_id}" if run_id else None
    runner = forked_pytest.Forked()
    shims = ExitStack()
    shim = shims.enter_context(warm_shims())
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="mutant")
    futures = {name: pool.submit(kill_once_per_run, name, files[name], shared, runner, shim) for name in order}
    try:
        yield futures
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        # Runs still going (an interrupted session) lose their shims: they are abandoned anyway.
        shims.close()
        if all(future.done() for future in futures.values()):
            # Stop and reap the fork server, so the CPU time of the runs it forked is counted
            # for this process (`time` and benchmarks/own_suite.py see it).
            stop = getattr(forkserver._forkserver, "_stop", None)
            if stop is not None:
                stop()
