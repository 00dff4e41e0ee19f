"""Whole pytest sessions, each in a fresh process forked from a warm fork server.

A kill run is a pytest session of its own (the plugin, a collection, a mutant shim). Started
as ``python -m pytest`` it spends most of its CPU importing pytest, the harness and
jsonschema, discovering plugins and compiling schemas before its first variant, and the
catalogue holds dozens of mutants. Here a ``multiprocessing`` fork server does that once:
it imports this module, which runs one throwaway collection; every run is then a new fork of
that process (one process per run), so runs share the warm start and nothing else —
each still has its own process, its own exit status and its own output, as a subprocess.
"""

from __future__ import annotations

import _thread
import contextlib
import multiprocessing
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# hypothesis and xdist are not needed by a conformance run and cost half its start-up. A
# conformance run has no assert statement to rewrite (its checks write their own messages),
# and without the rewrite hook pytest skips listing every installed file of every plugin's
# distribution, a noticeable share of a run. A forked run finds syrupy (a plugin) imported already, by the
# warm-up, which pytest would report as a module it cannot rewrite: true and harmless.
QUIET = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:xdist", "--assert=plain",
         "-W", "ignore::pytest.PytestAssertRewriteWarning"]
WARM_UP = [*QUIET, "-q", "--co", "--port=reference", "fixtures/scenarios/loop-plain-answer.json"]


@contextlib.contextmanager
def _output_to(target: int) -> Iterator[None]:
    """Point this process's stdout and stderr (the file descriptors) at ``target``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(target, 1)
    os.dup2(target, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def run(args: list[str], timeout_s: float) -> tuple[int, str]:
    """``python -m pytest ARGS`` from the repository root, in this (forked) process: the exit
    status and everything it printed. Past ``timeout_s`` it is interrupted as by Ctrl-C (so
    it still closes its shims; SIGALRM stays pytest-timeout's), exit status -1."""
    os.chdir(ROOT)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _thread.interrupt_main()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    with tempfile.TemporaryFile() as out:
        with _output_to(out.fileno()):
            timer.start()
            try:
                code = int(pytest.main([*QUIET, *args]))
            except KeyboardInterrupt:
                code = -1
            finally:
                timer.cancel()
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    if expired.is_set():
        return -1, f"timed out after {timeout_s:.0f}s\n{text}"
    return code, text


class Forked:
    """Runs ``run`` in a new process forked from the warm server and returns its result;
    callable from several threads at once (one process per call, no pool to manage)."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("forkserver")
        # The server imports the warm-up module, which imports this one and runs one collection.
        self._context.set_forkserver_preload(["fork_server_warm_up"])
        # Python 3.11's fork server ignores the parent's sys.path when it imports its preload
        # (a failed import only leaves it cold, silently), so this folder reaches it through
        # PYTHONPATH, set while the server starts.
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), saved) if p)
        try:
            forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved

    def __call__(self, args: list[str], timeout_s: float) -> tuple[int, str]:
        receive, send = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_child, args=(args, timeout_s, send), name="forked-pytest")
        process.start()
        send.close()
        try:
            code, text = receive.recv()
        except EOFError:
            process.join()
            return -1, f"the forked pytest run ended without a result (exit status {process.exitcode})"
        finally:
            receive.close()
        process.join()
        return code, text


def _child(args: list[str], timeout_s: float, send: Connection) -> None:
    send.send(run(args, timeout_s))
    send.close()


def warm_up() -> None:
    """One throwaway collection, so plugins, the harness's modules and its compiled schemas
    are loaded before the first fork; its output goes nowhere."""
    with open(os.devnull, "wb") as sink, _output_to(sink.fileno()):
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            pytest.main(WARM_UP)
        finally:
            os.chdir(cwd)
