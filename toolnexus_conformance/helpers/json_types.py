"""The JSON type name of a Python value, in JSON Schema's vocabulary.

One helper for every message that says "expected X, got Y" about a decoded JSON value
(schema violations, JSON-RPC shape errors, rule checks), so they all use the same words:
``null``, ``boolean``, ``integer``, ``number``, ``string``, ``array``, ``object``. An int
is ``integer`` (JSON Schema's own name for it; ``true`` is ``boolean``, never an integer).
Also the one refusal of the constants Python's ``json`` reads and JSON has not (``NaN``,
``Infinity``, ``-Infinity``), for every reader that must refuse them (a shim's lines, a
scenario file). This module imports nothing from the harness, so the lowest layer may use it.
"""

from __future__ import annotations

from typing import Any, NoReturn


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


class NotJsonConstant(ValueError):
    """``json.loads`` met ``NaN``, ``Infinity`` or ``-Infinity`` (see :func:`refuse_constant`)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not JSON")
        self.name = name


def refuse_constant(name: str) -> NoReturn:
    """A ``parse_constant`` for ``json.loads`` that refuses the constant it is called with."""
    raise NotJsonConstant(name)
