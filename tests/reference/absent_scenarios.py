"""Non-relay scenarios whose every observable is collected as plain JSON, so a client built
with ``relay=False`` in a fresh interpreter can be compared with one built with relay on.

This module imports no relay name: running it must leave ``reference_py.relay`` unloaded.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hostkit import Log, drive, make_client, real_tool, suspending_tool, toolkit
from scripted import ARGS_BA, STYLES, fake_provider, final, turn

from reference_py import Answer, InMemoryStore, Request


def _strip_ms(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "ms"} for e in events]


SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "tool-loop": [turn(text="hm", calls=[("c1", "real1", ARGS_BA), ("c2", "real2", '{"a": 1}')]),
                  final("all done")],
    "wait-for": [turn(calls=[("c1", "signin", ARGS_BA)]), final("signed")],
    "halt": [turn(calls=[("c1", "real1", ARGS_BA), ("c2", "signin", ARGS_BA),
                         ("c3", "real2", ARGS_BA)])],
    "no-tools": [final("plain")],
}


def _tools(log: Log) -> list[Any]:
    return [real_tool(log, "real1", "r1"), real_tool(log, "real2", "r2"),
            suspending_tool(log, "signin", "auth-1", "Sign in", url="https://auth.test/x")]


async def _one(style: str, path: str, name: str, relay: bool | None,
               extra: list[Any]) -> dict[str, Any]:
    log = Log()

    def wait_for(request: Request) -> Answer:
        return Answer(id=request.id, ok=True, data={"token": "T"})

    options: dict[str, Any] = {"on_metric": log.on_metric, "hooks": log.hooks(),
                               "store": InMemoryStore()}
    if name == "wait-for":
        options["wait_for"] = wait_for
    if relay is not None:
        options["relay"] = relay
    with fake_provider(style, SCENARIOS[name]) as llm:
        kit = None if name == "no-tools" else await toolkit(*_tools(log), *extra)
        outcome = await drive(make_client(style, **options), path, "go", kit)
        bodies = llm.bodies
        headers = [dict(call.request.headers) for call in llm.route.calls]
    for h in headers:
        h.pop("content-length", None)
    return {
        "bodies": bodies, "headers": headers, "result": outcome.result,
        "events": outcome.events, "metrics": _strip_ms(log.metrics),
        "executions": [[n, a, None if ans is None else ans.to_wire()]
                       for n, a, ans in log.executions],
        "before": log.before, "after": _strip_results(log.after),
    }


def _strip_results(events: list[dict[str, Any]]) -> list[Any]:
    return [repr(sorted(e)) for e in events]


def observe(relay: bool | None, extra: list[Any] | None = None) -> dict[str, Any]:
    """Every scenario x style x path; ``relay=None`` leaves the client option at its default."""
    out: dict[str, Any] = {}
    for style in STYLES:
        for path in ("run", "stream"):
            for name in SCENARIOS:
                key = f"{style}/{path}/{name}"
                out[key] = asyncio.run(_one(style, path, name, relay, list(extra or [])))
    return out
