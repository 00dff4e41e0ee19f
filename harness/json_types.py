"""The JSON type name of a Python value, in JSON Schema's vocabulary.

One helper for every message that says "expected X, got Y" about a decoded JSON value
(schema violations, JSON-RPC shape errors, rule checks), so they all use the same words:
``null``, ``boolean``, ``integer``, ``number``, ``string``, ``array``, ``object``. An int
is ``integer`` (JSON Schema's own name for it; ``true`` is ``boolean``, never an integer).
This module imports nothing from the harness, so the lowest layer may use it.
"""

from __future__ import annotations

from typing import Any


def json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return f"non-JSON {type(value).__name__}"
