"""Every rule's check run in a process of its own, one variant behind the runs.

A serial conformance run alternates between pytest's process and the shim: while the shim
works, pytest's process waits, and while pytest's process evaluates a record (every rule's
check and the golden comparisons, a sizeable share of a reference run), the shim idles. With the checks
in this process, the plugin runs variant N+1 while variant N is evaluated here, on the
other core, and the shim's work and the evaluation overlap. (A thread would not do: the
checks and the run's choreography would share one interpreter lock, and lose to it what
the overlap saves.)

The worker is ``python -m toolnexus_conformance.verdict.evaluator_process``: it reads length-prefixed pickles of
``(token, record, rules)`` on stdin and writes ``(token, outcomes)`` or ``(token, error)``
on stdout, with the same ``evaluate`` and the same checks as pytest's process. The
client falls back to evaluating in pytest's process whenever the worker is not ready, has
stopped, cannot take a record or answers with an error — a verdict never depends on it.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from toolnexus_conformance.helpers.paths import fixtures_dir, golden_dir
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.verdict.evaluate import Outcome, evaluate
from toolnexus_conformance.verdict.rules import Check

# -P: the worker's modules are found where pytest's process found them (PYTHONPATH below),
# never in the folder it happens to start in, which may hold another folder of the same name.
WORKER_ARGS = ("-P", "-m", "toolnexus_conformance.verdict.evaluator_process")
HEADER = struct.Struct("!I")
READY = b"ready\n"
# Evaluating one record takes milliseconds; an answer this late means the worker is stuck,
# and the record is evaluated here instead.
ANSWER_TIMEOUT_S = 30.0


@dataclass
class _Answer:
    outcomes: list[Outcome] | None = None
    error: str = ""


class EvaluatorProcess:
    """The client side: ``submit`` a record as soon as it is run, ``outcomes`` when its
    variant is judged. Submitting is cheap for pytest's process (one pickle, one write)."""

    def __init__(self, checks: Mapping[str, Check]) -> None:
        self._checks = checks
        self._next_token = 0
        self._answers: dict[int, _Answer] = {}
        self._changed = threading.Condition()
        self._ready = False
        self._stopped = ""  # why the worker can no longer be used
        self.fallbacks: list[str] = []  # why a record was evaluated here after all
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
            # The data this process reads, wherever it was pointed (an option, a test).
            "TOOLNEXUS_CONFORMANCE_FIXTURES": str(fixtures_dir()),
            "TOOLNEXUS_CONFORMANCE_GOLDEN": str(golden_dir()),
        }
        self._stderr = tempfile.TemporaryFile()  # its last line says why, should it exit
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, *WORKER_ARGS],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
            )  # fmt: skip
        except OSError as exc:
            self._process = None
            self._stopped = f"could not start ({exc})"
            return
        self._reader = threading.Thread(target=self._read_answers, args=(self._process,), name="evaluator-answers", daemon=True)
        self._reader.start()

    def submit(self, record: RunRecord, rules: list[str]) -> int | None:
        """Hand ``record`` to the worker; the token to ask for its outcomes, or None when
        it is evaluated here (``outcomes`` with None does that)."""
        if self._stopped:
            self.fallbacks.append(f"{record.facts.node_id}: the evaluator process {self._stopped}")
            return None
        if self._process is None or not self._ready:
            return None  # still starting: this one is checked here
        try:
            data = pickle.dumps((self._next_token, record, rules), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - a record that cannot travel is evaluated here
            self.fallbacks.append(f"{record.facts.node_id}: the record could not be pickled ({exc})")
            return None
        token = self._next_token
        self._next_token += 1
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(HEADER.pack(len(data)) + data)
            self._process.stdin.flush()
        except OSError as exc:
            self._stop(f"stopped reading records ({exc})")
            self.fallbacks.append(f"{record.facts.node_id}: the evaluator process {self._stopped}")
            return None
        return token

    def outcomes(self, token: int | None, record: RunRecord, rules: list[str]) -> list[Outcome]:
        """The outcomes of a submitted record, or of ``record`` evaluated here."""
        if token is not None:
            with self._changed:
                answered = self._changed.wait_for(lambda: token in self._answers or bool(self._stopped), ANSWER_TIMEOUT_S)
                answer = self._answers.pop(token, None)
            if answer is not None and answer.outcomes is not None:
                return answer.outcomes
            if not answered:
                self._stop(f"gave no answer within {ANSWER_TIMEOUT_S:g} s")
            why = answer.error if answer is not None else f"the evaluator process {self._stopped}"
            self.fallbacks.append(f"{record.facts.node_id}: {why}")
        return evaluate(record, record.facts, rules, self._checks)

    def wait_ready(self, timeout: float) -> bool:
        """Whether the worker is taking records, waiting up to ``timeout`` for its start."""
        with self._changed:
            return self._changed.wait_for(lambda: self._ready or bool(self._stopped), timeout) and self._ready

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            assert process.stdin is not None
            process.stdin.close()  # end of records: the worker exits
        except OSError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._reader.join(timeout=5)  # it reads the stderr file on the worker's exit
        self._stderr.close()

    def _stop(self, why: str) -> None:
        with self._changed:
            if not self._stopped:
                self._stopped = why
            self._changed.notify_all()
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def _read_answers(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        stream = process.stdout
        if stream.readline() != READY:
            self._stop(f"exited before it was ready{self._exit_detail(process)}")
            return
        with self._changed:
            self._ready = True
            self._changed.notify_all()
        while (answer := _read_message(stream)) is not None:
            token, outcomes, error = answer
            with self._changed:
                self._answers[token] = _Answer(outcomes, error)
                self._changed.notify_all()
        self._stop(f"exited{self._exit_detail(process)}")

    def _exit_detail(self, process: subprocess.Popen[bytes]) -> str:
        try:
            code = process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return ""
        self._stderr.seek(0)
        last = [line for line in self._stderr.read().decode("utf-8", "replace").splitlines() if line.strip()][-1:]
        return f" (code {code}{': ' + last[0].strip() if last else ''})"


def _read_message(stream: IO[bytes]) -> Any:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return pickle.loads(body)


def _serve(checks: Mapping[str, Check], source: IO[bytes], sink: IO[bytes]) -> None:
    sink.write(READY)
    sink.flush()
    while (message := _read_message(source)) is not None:
        token, record, rules = message
        reply: tuple[int, list[Outcome] | None, str]
        try:
            reply = (token, evaluate(record, record.facts, rules, checks), "")
        except Exception as exc:  # noqa: BLE001 - told to the client, which evaluates it itself
            reply = (token, None, f"the evaluator raised {type(exc).__name__}: {exc}")
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(HEADER.pack(len(data)) + data)
        sink.flush()


def main() -> int:
    from toolnexus_conformance.helpers.gc_tuning import for_short_lived_objects
    from toolnexus_conformance.verdict.rules import load_all

    checks = load_all()
    for_short_lived_objects()
    _serve(checks, sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
