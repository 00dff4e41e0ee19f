"""The java shim's AOT cache: a training run at build time, so every later JVM starts warm.

A JVM spends its first seconds loading, verifying and linking the few thousand classes the
shim, the port, Jackson and java.net.http need, in every shim process and before the first
variant of a run. JDK 25's AOT cache (JEP 483/514) keeps them
loaded and linked: a training run with ``-XX:AOTCacheOutput`` writes it as the JVM exits,
and later JVMs map it with ``-XX:AOTCache``. The cache changes how fast classes are
ready, never what the code does.

The training workload is the conformance suite's own: the scenarios under fixtures/,
run through the freshly built shim by the harness's runner against its fake provider, with
nothing judged. Unlike the other build helpers this module therefore imports the harness
(the same installed package). Variants that restart the shim are left out: a new process
would start a new recording. The JVM writes the cache after ``shutdown``, so the training
process is given time to exit on its own.

A failed training is not a failed build: the shim then runs without the cache (slower,
same verdicts) and :func:`train` says why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

MIN_AOT_JAVA = 25  # -XX:AOTCacheOutput (one-step training) first shipped in JDK 25
TRAINING_CALL_TIMEOUT_S = 15.0  # as toolnexus_conformance/shim/ports.toml gives java (a never-reached hold waits a tenth)
TRAINING_START_TIMEOUT_S = 60.0
CACHE_WRITE_TIMEOUT_S = 180.0  # the exiting JVM assembles the cache (6 s here at load 5)


@dataclass(frozen=True)
class Training:
    """What a training run did: the cache it wrote (None if none) and why not."""

    cache: Path | None
    variants: int
    seconds: float
    problem: str = ""


def train(command: list[str], cache: Path) -> Training:
    """Run the training workload through the shim started by ``command`` (the JVM and its
    runtime flags up to, not including, ``-jar``; the caller appends the rest) plus
    ``-XX:AOTCacheOutput=cache``."""
    from toolnexus_conformance.helpers.errors import HarnessError

    cache.unlink(missing_ok=True)
    started = time.monotonic()
    ran = 0
    problem = ""
    try:
        ran = _run_workload([*command[:1], f"-XX:AOTCacheOutput={cache}", *command[1:]])
    except HarnessError as exc:
        problem = f"the training run failed: {str(exc).splitlines()[0]}"
    seconds = time.monotonic() - started
    if not problem and not cache.is_file():
        problem = "the training JVM exited without writing its AOT cache"
    return Training(cache if not problem else None, ran, seconds, problem)


def _run_workload(argv: list[str]) -> int:
    """Every variant of every scenario that keeps one process, through one shim; the number run."""
    from toolnexus_conformance.fake_provider import FakeProvider
    from toolnexus_conformance.helpers.errors import HarnessError
    from toolnexus_conformance.helpers.paths import scenarios_dir
    from toolnexus_conformance.run.facts import facts_for
    from toolnexus_conformance.run.runner import run_variant
    from toolnexus_conformance.scenario.model import load_scenario, scenario_files
    from toolnexus_conformance.shim.session import ShimSession

    ran = 0
    with FakeProvider() as provider:
        shim = ShimSession(argv, start_timeout=TRAINING_START_TIMEOUT_S, restart_budget=0)
        try:
            shim.ensure_alive()
            for path in scenario_files(scenarios_dir()):
                for variant in load_scenario(path).variants():
                    facts = facts_for(variant)
                    if facts.restart_before_resume:
                        continue
                    try:
                        run_variant(variant, shim, provider, timeout=TRAINING_CALL_TIMEOUT_S, facts=facts)
                    except HarnessError:
                        if not shim.process.usable:
                            raise  # the training process is gone, and its recording with it
                    ran += 1
        finally:
            shim.handshake = None
            shim.process.close(shutdown_timeout=CACHE_WRITE_TIMEOUT_S)
    return ran
