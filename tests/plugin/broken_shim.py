"""A deliberately broken shim for the plugin tests: the reference shim, misbehaving once.

``python tests/plugin/broken_shim.py MODE [SCENARIO[VARIANT]] [--once FILE]``

It serves exactly like ``shims/reference/shim.py`` except on the ``client.run`` of the named
variant (``loop-plain-answer[openai-run]``; a bare scenario id means all its variants),
where it misbehaves the way MODE says. ``crash-at-start`` exits before reading anything;
with ``--once FILE`` it does so only while FILE does not exist (creating it), so the
restarted shim works. ``null`` answers every call after ``initialize`` with ``{}``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODES = ("crash-at-start", "crash-mid-run", "hang", "non-json", "wrong-id", "oversized", "null", "invalid-result")
OVERSIZED_BYTES = 9 * 1024 * 1024  # above the protocol's 8 MiB line limit


def log(text: str) -> None:
    print(f"broken shim: {text}", file=sys.stderr, flush=True)


def load_reference_shim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_shim", ROOT / "shims" / "reference" / "shim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def targeted(target: str, params: dict[str, Any]) -> bool:
    scenario, _, variant = target.partition("[")
    return params.get("scenario") == scenario and (not variant or params.get("variant") == variant.rstrip("]"))


def misbehave(shim: ModuleType, mode: str, message: dict[str, Any]) -> bool:
    """Break the protocol for this message the way ``mode`` says; False to serve it normally."""
    rid = message.get("id")
    log(f"{mode} during client.run of {message['params'].get('scenario')}[{message['params'].get('variant')}]")
    if mode == "crash-mid-run":
        log("panic: lost the port mid-run")
        os._exit(7)
    if mode == "hang":
        time.sleep(3600)
    if mode == "non-json":
        sys.stdout.write("this is not json {\n")
        sys.stdout.flush()
        return True
    if mode == "wrong-id":
        shim.channel_send({"jsonrpc": "2.0", "id": (rid if isinstance(rid, int) else 0) + 1000, "result": {}})
        return True
    if mode == "oversized":
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"blob": "x" * OVERSIZED_BYTES}}) + "\n")
        sys.stdout.flush()
        return True
    return False


def install(shim: ModuleType, mode: str, target: str) -> None:
    original = shim._dispatch

    async def dispatch(instance: Any, handlers: dict[str, Any], message: dict[str, Any]) -> None:
        shim.channel_send = instance.channel.send
        if mode == "null" and message.get("method") != "initialize":
            instance.channel.send({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
            return
        if message.get("method") == "client.run" and targeted(target, message.get("params") or {}):
            if mode == "invalid-result":
                # Well-formed JSON-RPC whose result breaks schemas/shim/client-run: only
                # --validate-shim can tell.
                log(f"invalid-result during client.run of {message['params'].get('scenario')}[{message['params'].get('variant')}]")
                send = instance.channel.send
                instance.channel.send = lambda reply: send(_without_executions(reply, message.get("id")))
            elif misbehave(shim, mode, message):
                return
        await original(instance, handlers, message)

    shim._dispatch = dispatch


def _without_executions(reply: dict[str, Any], rid: Any) -> dict[str, Any]:
    if reply.get("id") == rid and isinstance(reply.get("result"), dict):
        reply = {**reply, "result": {k: v for k, v in reply["result"].items() if k != "executions"}}
    return reply


def main(argv: list[str]) -> int:
    args = argv[1:]
    once = None
    if "--once" in args:
        at = args.index("--once")
        once, args = Path(args[at + 1]), args[:at] + args[at + 2 :]
    if not args or args[0] not in MODES:
        log(f"usage: broken_shim.py MODE [SCENARIO[VARIANT]] [--once FILE]; modes: {', '.join(MODES)}")
        return 2
    mode, target = args[0], (args[1] if len(args) > 1 else "")
    if mode == "crash-at-start" and (once is None or not once.exists()):
        if once is not None:
            once.touch()
        log("fatal: cannot load the port library")
        return 3
    # Imported only now: a shim that crashes at start (twelve starts in one test) never pays
    # for asyncio, which loading the reference shim imports anyway.
    import asyncio

    shim = load_reference_shim()
    install(shim, mode, target)
    asyncio.run(shim.serve(relay=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
