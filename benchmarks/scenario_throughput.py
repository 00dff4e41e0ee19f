"""Scenarios per second through the reference shim (subprocess + JSON-RPC) and in-process
(the same shim code called directly), so the cost of the process boundary is visible.

    python benchmarks/scenario_throughput.py [--rounds 3]

A script, not a test: it prints figures. Both paths run every variant of every scenario
against the same fake provider and the same host; only the transport differs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_conformance.fake_provider import FakeProvider  # noqa: E402
from toolnexus_conformance.helpers.errors import HostRequestError, ShimCallError  # noqa: E402
from toolnexus_conformance.helpers.paths import scenarios_dir  # noqa: E402
from toolnexus_conformance.run.runner import run_variant  # noqa: E402
from toolnexus_conformance.scenario.model import Variant, load_scenario, scenario_files  # noqa: E402
from toolnexus_conformance.shim.ports import resolve  # noqa: E402
from toolnexus_conformance.shim.session import ShimSession  # noqa: E402


def _load_reference_shim() -> Any:
    spec = importlib.util.spec_from_file_location("reference_shim", ROOT / "shims" / "reference" / "shim.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class InProcessShim:
    """The reference shim's translation layer, called directly on a private event loop."""

    def __init__(self) -> None:
        self._module = _load_reference_shim()
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        self._handler: Any = None
        shim = self._module.Shim(self._loop, relay=True)
        outer = self

        class DirectChannel:
            async def request(self, method: str, params: dict[str, Any]) -> Any:
                try:
                    return await asyncio.get_running_loop().run_in_executor(None, outer._handler, method, params)
                except HostRequestError as exc:  # as the stdio channel turns an error answer
                    raise outer._module.HostError(exc.message) from None

        shim.channel = DirectChannel()
        self._shim = shim

    def call(self, method: str, params: dict[str, Any], *, timeout: float, handler: Any = None) -> Any:
        self._handler = handler
        target = {"toolkit.describe": self._shim.describe, "client.run": self._shim.run}[method]
        future = asyncio.run_coroutine_threadsafe(target(params), self._loop)
        try:
            return future.result(timeout)
        except self._module.HostError as exc:
            raise ShimCallError(str(exc), code=-32001, message=str(exc), data={"kind": "run"}) from None
        except self._module.ToolnexusError as exc:
            kind = next((k for cls, k in self._module._ERROR_KINDS if isinstance(exc, cls)), "run")
            raise ShimCallError(str(exc), code=-32001, message=str(exc), data={"kind": kind}) from None

    def restart(self) -> None:
        """Nothing to restart: the durable store lives in the harness either way."""

    def prepare_restart(self) -> None:
        """Nothing to prepare (see restart)."""


def variants() -> list[Variant]:
    return [v for path in scenario_files(scenarios_dir()) for v in load_scenario(path).variants()]


def measure(label: str, shim: Any, provider: FakeProvider, selected: list[Variant], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        for variant in selected:
            run_variant(variant, shim, provider, timeout=30)
    elapsed = time.perf_counter() - started
    rate = rounds * len(selected) / elapsed
    print(f"{label:<28} {rounds * len(selected):>5} variants in {elapsed:6.2f} s  = {rate:7.1f} variants/s")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="only scenarios whose id starts with this (a quick smoke run)")
    args = parser.parse_args()
    selected = [v for v in variants() if not args.only or v.scenario.id.startswith(args.only)]
    port = resolve("reference", None, None, None)
    with FakeProvider() as provider:
        session = ShimSession(port.argv)
        session.ensure_alive()
        try:
            through_shim = measure("reference shim (subprocess)", session, provider, selected, args.rounds)
        finally:
            session.close()
        in_process = measure("in-process", InProcessShim(), provider, selected, args.rounds)
    print(f"in-process / shim ratio: {in_process / through_shim:.2f}x")


if __name__ == "__main__":
    main()
