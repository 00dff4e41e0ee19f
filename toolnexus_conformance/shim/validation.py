"""``--validate-shim``: every protocol message, both directions, checked against
``schemas/shim/`` (one schema per method; params at the top, the result in ``$defs/result``).

A shim's invalid message is a protocol error for that call (the transport turns the raised
error into ``ShimProtocolError``); an invalid message the harness itself is about to send
is a harness bug and says so, so the two are never confused.
"""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.schemas import validate

SCHEMA_OF = {
    "initialize": "shim/initialize",
    "toolkit.describe": "shim/toolkit-describe",
    "client.run": "shim/client-run",
    "shutdown": "shim/shutdown",
    "$/cancel": "shim/cancel",
    "host.waitFor": "shim/host-waitFor",
    "host.store.get": "shim/host-store-get",
    "host.store.save": "shim/host-store-save",
    "host.hook": "shim/host-hook",
}


class InvalidShimMessage(ValueError):
    """A message from the shim does not follow its method's schema."""


class HarnessSentInvalidMessage(HarnessError):
    """The harness itself produced a message its own schemas refuse (a harness bug)."""


def validate_message(direction: str, method: str, message: dict[str, Any]) -> None:
    schema = SCHEMA_OF.get(method)
    if schema is None:
        _refuse(direction, f"unknown method {method!r}")
        return
    if "error" in message:
        return  # error objects are checked by the JSON-RPC layer itself
    if "method" in message:
        target, part = schema, message.get("params") or {}
        what = "params"
    else:
        target, part = f"{schema}#/$defs/result", message.get("result")
        what = "result"
    violations = validate(target, part)
    if violations:
        listed = "; ".join(f"{v.json_path}: {v.message}" for v in violations[:8])
        _refuse(direction, f"{method} {what} break {schema}.schema.json: {listed}")


def _refuse(direction: str, text: str) -> None:
    # "out" lines are written by the harness, "in" lines by the shim.
    if direction == "out":
        raise HarnessSentInvalidMessage(f"harness bug: the harness's {text}")
    raise InvalidShimMessage(f"the shim's {text}")
