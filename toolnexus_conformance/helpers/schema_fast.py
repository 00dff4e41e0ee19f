"""A compiled yes/no pre-check in front of :func:`toolnexus_conformance.helpers.schemas.validate`.

Validating the wire data of a run is the largest single CPU cost of a conformance run
(every RunResult, transcript, stream event and store save goes through a Draft 2020-12
validator). Almost all of it is valid, so this module answers the one question "is this
instance valid?" with ``jsonschema-rs`` (the same schema files and registry, compiled
once per schema name), and only an instance it rejects goes on to the pure-Python
``jsonschema`` validator that produces the violations a port author reads.

The pre-check may only ever say "valid" when ``jsonschema`` would too; anything else just
costs the slow path. Hence:

* ``date-time`` is checked by the very function ``jsonschema``'s format checker uses (a
  custom format), so its semantics cannot drift. Patterns and other formats (none is used
  today) may only be stricter in the compiled engine (ECMA ``$`` does not match before a
  final newline, Python's does), and stricter costs time, never a verdict.
* Only plain JSON data reaches it (the caller's :func:`schemas._plain_json`), and any
  exception from the engine counts as "don't know".
* Without the ``jsonschema-rs`` wheel (an unusual platform), :func:`known_valid` always
  answers "don't know" and validation is exactly as slow and as right as before.

``tests/harness/test_schema_fast.py`` holds the two engines to the same verdict on every
schema example, every golden and deliberately broken wire data.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

try:
    import jsonschema_rs
except ImportError:  # pragma: no cover - the wheel exists for every platform CI uses
    jsonschema_rs = None  # type: ignore[assignment]

_Precheck = Callable[[Any], bool]

_compiled: dict[str, _Precheck | None] = {}
_lock = threading.Lock()


def known_valid(
    name: str,
    instance: Any,
    *,
    uri: str,
    resources: Callable[[], Iterable[tuple[str, Any]]],
    date_time: Callable[[object], bool],
) -> bool:
    """True when the compiled engine finds ``instance`` valid against the schema at ``uri``.

    False means "not known valid" (invalid, engine missing, or the engine failed): the
    caller must then validate with ``jsonschema``. ``resources`` yields ``($id, contents)``
    of every schema file, read only the first time ``name`` is compiled."""
    precheck = _compiled.get(name)
    if precheck is None and name not in _compiled:
        precheck = _compile(uri, resources, date_time)
        with _lock:
            _compiled[name] = precheck
    if precheck is None:
        return False
    try:
        return precheck(instance)
    except Exception:  # noqa: BLE001 - any engine trouble only means "ask jsonschema"
        return False


def forget() -> None:
    """Drop every compiled pre-check (the schema files were reloaded)."""
    with _lock:
        _compiled.clear()


def _compile(
    uri: str,
    resources: Callable[[], Iterable[tuple[str, Any]]],
    date_time: Callable[[object], bool],
) -> _Precheck | None:
    if jsonschema_rs is None:
        return None
    try:
        registry = jsonschema_rs.Registry(list(resources()))
        validator = jsonschema_rs.Draft202012Validator(
            {"$ref": uri},
            registry=registry,
            validate_formats=True,
            formats={"date-time": date_time},
        )
    except Exception:  # noqa: BLE001 - a schema the engine cannot compile stays on jsonschema
        return None
    is_valid: _Precheck = validator.is_valid
    return is_valid
