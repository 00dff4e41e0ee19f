"""Running many mutants at once: each on its own thread, in a process forked from one warm
fork server (``forked_pytest``), its shims forked from a warm zygote (``warm_shims``),
started together the first time a test asks, so the catalogue costs about one mutant run
per core rather than one after another. Under xdist every worker collects every mutant
test, yet each mutant runs once per test run, whatever the number of workers: one worker
hosts the pass (the first to claim it in a shared folder), with as many runs at a time as all
the workers had, and writes each report there (``kill_runner.kill_and_share``); the others
start no fork server or zygote of their own (each a warm-up's imports) and read the reports as they
land (``watch_reports``).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from multiprocessing import forkserver
from pathlib import Path

import forked_pytest
from kill_runner import OTHER_WORKER_TIMEOUT_S, POLL_S, KillReport, kill_and_share, read_shared, timed_out
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
    if shared is not None and not claim_host(shared):
        with watch_reports(order, shared) as watched:
            yield watched
        return
    runner = forked_pytest.Forked()
    shims = ExitStack()
    shim = shims.enter_context(warm_shims())
    # The host runs the runs every worker would have run beside its tests.
    threads = WORKERS * int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    pool = ThreadPoolExecutor(threads, thread_name_prefix="mutant")
    futures = {name: pool.submit(kill_and_share, name, files[name], shared, runner, shim) for name in order}
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


def claim_host(shared: Path) -> bool:
    """True for the first process of the test run to ask: it hosts the pass."""
    shared.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(shared / "host.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


@contextmanager
def watch_reports(names: list[str], shared: Path, *,
                  timeout_s: float = OTHER_WORKER_TIMEOUT_S) -> Iterator[dict[str, Future[KillReport]]]:
    """A future per mutant, completed with the report the hosting process writes to
    ``shared`` (``kill_runner.kill_and_share``), by one thread that looks for them; each
    still missing when no report has come for ``timeout_s`` is a timed-out run. (An
    argument, not a module global a test patches: the session's own watcher thread may be
    reading it in the same process meanwhile, and timed every mutant out after 0.3 s.)"""
    futures: dict[str, Future[KillReport]] = {name: Future() for name in names}
    stop = threading.Event()

    def watch() -> None:
        # The host runs a few mutants at a time, each within RUN_TIMEOUT_S: this long without
        # a new report, it is gone.
        deadline = time.monotonic() + timeout_s
        waiting = list(names)
        while waiting and not stop.is_set():
            for name in list(waiting):
                if (report := read_shared(name, shared)) is not None:
                    futures[name].set_result(report)
                    waiting.remove(name)
                    deadline = time.monotonic() + timeout_s
            if time.monotonic() > deadline:
                for name in waiting:
                    futures[name].set_result(timed_out(name))
                return
            stop.wait(POLL_S)
        for name in waiting:
            futures[name].cancel()

    watcher = threading.Thread(target=watch, name="mutant-reports", daemon=True)
    watcher.start()
    try:
        yield futures
    finally:
        stop.set()
        watcher.join()
