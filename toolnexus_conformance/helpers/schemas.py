"""The wire-data JSON Schemas (``schemas/**/*.schema.json``) and how to validate with them.

This module owns loading the schema files into one ``referencing`` registry (keyed by each
file's ``$id``, crawled once, so relative cross-file ``$ref``s resolve without touching the
network) and the validation API the harness checks shim output with:

* :func:`validator_for` — a ``Draft202012Validator`` with format checking on (``date-time``
  is really checked: rfc3339-validator is a dependency).
* :func:`validate` — every violation as a :class:`SchemaViolation`, sorted by path.
* :func:`check` — the same, raising :class:`SchemaError` with one readable message.

Schemas are named by their path under ``schemas/`` without ``.schema.json``: ``"request"``,
``"shim/initialize"``. A JSON-pointer fragment selects a definition inside a file:
``"transcript#/$defs/openai"``.

How violations are reported, so a port author can act on them: the path points at the
offending key itself. An unexpected key is reported at ``$.expires_at`` (with a hint when it
is the other casing of an allowed key), a missing required key at ``$.data.calls``; every
other violation at the offending value. When nothing in a ``oneOf``/``anyOf`` matches, the
violations of the closest alternative (the one that got deepest before failing) are
reported beside the combinator's own summary, instead of a bare "matches none".
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from toolnexus_conformance.helpers import schema_fast
from toolnexus_conformance.helpers.json_types import json_type_name
from toolnexus_conformance.helpers.paths import schemas_dir

SCHEMA_SUFFIX = ".schema.json"

# Longest rendering of an instance inside a message; a whole transcript in one line helps nobody.
_MAX_VALUE_CHARS = 80

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SchemaRegistryError(Exception):
    """A schema file is unreadable or inconsistent, or a schema name is unknown (one line)."""


class SchemaError(Exception):
    """An instance does not conform to a schema. ``str()`` lists every violation with its path."""

    def __init__(self, name: str, violations: list[SchemaViolation]) -> None:
        self.name = name
        self.violations = violations
        count = len(violations)
        lines = [f"not a valid {name}: {count} schema violation{'s' if count != 1 else ''}"]
        lines.extend(f"  {v}" for v in violations)
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class SchemaViolation:
    """One way an instance breaks a schema: where, which keyword, and why."""

    json_path: str
    keyword: str
    message: str

    def __str__(self) -> str:
        return f"{self.json_path}: {self.message} [{self.keyword}]"


def schema_dir() -> Path:
    """Where the schema files live (the one place to change when packaging moves them)."""
    return schemas_dir()


SCHEMA_DIR = schema_dir()


@dataclass(frozen=True)
class _Catalog:
    registry: Registry
    ids_by_name: dict[str, str]


@cache
def _catalog() -> _Catalog:
    root = schema_dir()
    if not root.is_dir():
        raise SchemaRegistryError(f"schema directory not found: {root}")
    resources: list[tuple[str, Resource[Any]]] = []
    ids_by_name: dict[str, str] = {}
    names_by_id: dict[str, str] = {}
    for path in sorted(root.rglob(f"*{SCHEMA_SUFFIX}")):
        name = path.relative_to(root).as_posix()[: -len(SCHEMA_SUFFIX)]
        try:
            contents = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SchemaRegistryError(f"schema {name}: cannot read {path.name}: {exc}") from None
        schema_id = contents.get("$id") if isinstance(contents, dict) else None
        if not isinstance(schema_id, str) or "://" not in schema_id:
            raise SchemaRegistryError(f"schema {name}: missing an absolute $id")
        if schema_id in names_by_id:
            raise SchemaRegistryError(
                f"schema {name}: $id {schema_id} is already used by {names_by_id[schema_id]}"
            )
        names_by_id[schema_id] = name
        ids_by_name[name] = schema_id
        resources.append(
            (schema_id, Resource.from_contents(contents, default_specification=DRAFT202012))
        )
    registry: Registry = Registry().with_resources(resources).crawl()
    return _Catalog(registry=registry, ids_by_name=ids_by_name)


def reload() -> None:
    """Forget the loaded schemas, so the next call reads :func:`schema_dir` again."""
    _catalog.cache_clear()
    validator_for.cache_clear()
    _known.clear()
    schema_fast.forget()


def schema_resources() -> list[tuple[str, Any]]:
    """``($id, contents)`` of every schema file, for the compiled pre-check."""
    catalog = _catalog()
    return [(uri, catalog.registry.contents(uri)) for uri in catalog.ids_by_name.values()]


def is_date_time(instance: object) -> bool:
    """``date-time`` exactly as the jsonschema format checker judges it."""
    return Draft202012Validator.FORMAT_CHECKER.conforms(instance, "date-time")


def registry() -> Registry:
    """The crawled registry of every schema file, keyed by ``$id``."""
    return _catalog().registry


def schema_names() -> list[str]:
    """Every schema's name (path under ``schemas/`` without ``.schema.json``), sorted."""
    return sorted(_catalog().ids_by_name)


def schema_id(name: str) -> str:
    """The ``$id`` of the named schema file (a fragment, if given, is kept)."""
    base, hash_, fragment = name.partition("#")
    if base.endswith(SCHEMA_SUFFIX):
        base = base[: -len(SCHEMA_SUFFIX)]
    ids = _catalog().ids_by_name
    if base not in ids:
        raise SchemaRegistryError(f"unknown schema {base!r} (known: {', '.join(sorted(ids))})")
    return ids[base] + (hash_ + fragment if hash_ else "")


def schema_contents(name: str) -> dict[str, Any]:
    """The parsed contents of the named schema file."""
    contents: dict[str, Any] = registry().contents(schema_id(name.partition("#")[0]))
    return contents


@cache
def validator_for(name: str) -> Draft202012Validator:
    """A format-checking Draft 2020-12 validator for the named schema (or ``name#/pointer``)."""
    uri = schema_id(name)
    if "#" in uri:
        # A one-ref wrapper, so the definition is evaluated with its own file as base URI.
        schema: dict[str, Any] = {"$ref": uri}
        try:
            registry().resolver().lookup(uri)
        except Unresolvable as exc:
            raise SchemaRegistryError(f"schema {name!r}: {uri} does not resolve ({exc})") from None
    else:
        schema = schema_contents(name)
    return Draft202012Validator(
        schema,
        registry=registry(),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def validate(name: str, instance: Any) -> list[SchemaViolation]:
    """Every violation of the named schema by ``instance``, sorted by path; empty if valid.

    A run validates the same wire data many times over (a transcript inside its RunResult,
    its store saves and its stream events; the same messages in every variant of a
    scenario), so the outcome for an instance already validated against the same schema is
    reused: the key is the instance's canonical JSON text, and only plain JSON data is
    keyed (a tuple serializes like a list and an int key like a string, yet a schema tells
    them apart, so such an instance must not share a key with the JSON it resembles)."""
    plain = _is_plain(instance)
    if plain and schema_fast.known_valid(name, instance, uri=schema_id(name), resources=schema_resources, date_time=is_date_time):
        return []
    key = _canonical_key(name, instance) if plain else None
    known = _known.get(key) if key is not None else None
    if known is not None:
        return list(known)
    errors = validator_for(name).iter_errors(instance)
    unique = dict.fromkeys(v for error in errors for v in _violations(error))
    violations = sorted(unique, key=_sort_key)
    if key is not None:
        with _known_lock:  # --validate-shim validates from the transport's threads too
            if len(_known) >= MAX_REUSED_OUTCOMES:
                _known.pop(next(iter(_known)), None)  # the oldest; a plain dict keeps insertion order
            _known[key] = tuple(violations)
    return violations


# Outcomes of validate() by (schema name, canonical JSON of the instance). Violations are
# frozen and name no instance, so an outcome can be handed out again as it is.
_known: dict[tuple[str, str], tuple[SchemaViolation, ...]] = {}
_known_lock = threading.Lock()
MAX_REUSED_OUTCOMES = 8192  # read at every insertion; the oldest outcome goes first
MAX_REUSED_CHARS = 256 * 1024  # a larger instance is validated every time, not held


def reused_outcomes() -> int:
    """How many outcomes :func:`validate` holds for reuse (at most ``MAX_REUSED_OUTCOMES``)."""
    return len(_known)


def _canonical_key(name: str, instance: Any) -> tuple[str, str] | None:
    """``(name, canonical JSON)`` of plain JSON data; None when it is too large to hold."""
    try:
        text = json.dumps(instance, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, ValueError):
        return None
    return (name, text) if len(text) <= MAX_REUSED_CHARS else None


def _is_plain(instance: Any) -> bool:
    """Plain JSON data; a tree too deep to walk is not vouched for (it takes the slow path)."""
    try:
        return _plain_json(instance)
    except RecursionError:
        return False


def _plain_json(value: Any) -> bool:
    # Every validation asks this: scalar members are checked in the loop, by exact type,
    # and only containers cost a call.
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str:
                return False
        members = value.values()
    elif kind is list:
        members = value
    else:
        return kind in _PLAIN_SCALARS
    for member in members:
        of = type(member)
        if of is dict or of is list:
            if not _plain_json(member):
                return False
        elif of not in _PLAIN_SCALARS:
            return False
    return True


_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def check(name: str, instance: Any) -> None:
    """Raise :class:`SchemaError` listing every violation unless ``instance`` is valid."""
    violations = validate(name, instance)
    if violations:
        raise SchemaError(name, violations)


# --- turning jsonschema errors into violations a port author can act on -------------------


_PathPart = str | int


# jsonschema types an error's ``validator_value`` and ``instance`` as "or unset" because a
# hand-built ValidationError may omit them; every error a validator yields carries both, and
# only those reach this module.
def _keyword_value(error: ValidationError) -> Any:
    """The failing keyword's value in the schema (``error.validator_value``)."""
    value: Any = error.validator_value
    return value


def _instance(error: ValidationError) -> Any:
    """The value that failed the keyword (``error.instance``)."""
    instance: Any = error.instance
    return instance


def _violations(error: ValidationError) -> Iterator[SchemaViolation]:
    path: tuple[_PathPart, ...] = tuple(error.absolute_path)
    keyword = str(error.validator)
    instance = _instance(error)
    if keyword == "additionalProperties" and isinstance(instance, dict):
        yield from _unexpected_keys(error, instance, path)
    elif keyword == "required" and isinstance(instance, dict):
        for key in _keyword_value(error):
            if key not in instance:
                yield _violation((*path, key), keyword, "missing required key")
    elif keyword in ("oneOf", "anyOf"):
        yield from _combinator(error, path, keyword)
    else:
        yield _violation(path, keyword, _message(error))


def _unexpected_keys(
    error: ValidationError, instance: dict[str, Any], path: tuple[_PathPart, ...]
) -> Iterator[SchemaViolation]:
    schema = error.schema
    assert isinstance(schema, Mapping), "additionalProperties fails only inside an object schema"
    declared = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    for key in instance:
        if key in declared or any(p.search(key) for p in patterns):
            continue
        message = "unexpected key"
        hint = _other_casing(key, declared)
        if hint:
            message += f" (did you mean {hint!r}?)"
        elif declared:
            message += f" (allowed: {', '.join(sorted(declared))})"
        yield _violation((*path, key), "additionalProperties", message)


def _other_casing(key: str, declared: set[str]) -> str | None:
    camel = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)
    snake = re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), key)
    for candidate in (camel, snake):
        if candidate != key and candidate in declared:
            return candidate
    return None


def _combinator(
    error: ValidationError, path: tuple[_PathPart, ...], keyword: str
) -> Iterator[SchemaViolation]:
    branches: list[Any] = list(_keyword_value(error))
    if not error.context:
        # oneOf with no failing branch context: the instance matched more than one branch.
        titles = ", ".join(_branch_title(branches, i) for i in range(len(branches)))
        yield _violation(path, keyword, f"matches more than one of the exclusive shapes ({titles})")
        return
    by_branch: dict[int, list[SchemaViolation]] = {}
    for sub in error.context:
        index = sub.relative_schema_path[0]
        by_branch.setdefault(int(index), []).extend(_violations(sub))
    closest = min(by_branch, key=lambda i: (-_min_depth(by_branch[i]), len(by_branch[i]), i))
    yield _violation(
        path,
        keyword,
        f"matches none of the allowed shapes; closest is {_branch_title(branches, closest)}",
    )
    yield from by_branch[closest]


def _branch_title(branches: list[Any], index: int) -> str:
    branch = branches[index] if index < len(branches) else None
    if isinstance(branch, dict) and isinstance(branch.get("title"), str):
        return repr(branch["title"])
    if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
        return repr(branch["$ref"])
    return f"alternative {index}"


def _min_depth(violations: list[SchemaViolation]) -> int:
    return min((len(_path_parts(v.json_path)) for v in violations), default=0)


def _message(error: ValidationError) -> str:
    keyword = error.validator
    value = _instance(error)
    schema_value = _keyword_value(error)
    if keyword == "type":
        wanted = " or ".join(schema_value) if isinstance(schema_value, list) else str(schema_value)
        message = f"expected {wanted}, got {json_type_name(value)}"
        if value is None:
            message += " (optional keys are omitted when absent, never written as null)"
        return message
    if keyword == "const":
        return f"expected {_show(schema_value)}, got {_show(value)}"
    if keyword == "enum":
        allowed = ", ".join(_show(v) for v in schema_value)
        return f"expected one of {allowed}; got {_show(value)}"
    if keyword == "format":
        message = f"{_show(value)} is not a valid {schema_value}"
        if schema_value == "date-time":
            message += " (RFC 3339, e.g. \"2026-01-01T00:00:00Z\")"
        return message
    if keyword == "not" and schema_value == {}:
        return "key not allowed here"
    if keyword == "minItems":
        return f"expected at least {schema_value} item(s), got {len(value)}"
    if keyword == "minLength":
        return f"expected a string of at least {schema_value} character(s), got {_show(value)}"
    if keyword == "minimum":
        return f"expected a number >= {schema_value}, got {_show(value)}"
    return _shorten(error.message)



def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return _shorten(text)


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


def _violation(path: Iterable[_PathPart], keyword: str, message: str) -> SchemaViolation:
    return SchemaViolation(json_path=render_path(path), keyword=keyword, message=message)


def render_path(parts: Iterable[_PathPart]) -> str:
    """A JSON path like ``$.data.calls[0].id`` (odd keys quoted: ``$['a b']``)."""
    rendered = "$"
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif _IDENTIFIER.match(part):
            rendered += f".{part}"
        else:
            rendered += "['" + part.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return rendered


_PATH_PART = re.compile(r"\[(\d+)\]|\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\]")


def _path_parts(json_path: str) -> tuple[tuple[int, Any], ...]:
    # Tagged so array indexes sort numerically and before keys at the same depth.
    return tuple(
        (0, int(index)) if index else (1, name or quoted)
        for index, name, quoted in _PATH_PART.findall(json_path)
    )


def _sort_key(violation: SchemaViolation) -> tuple[tuple[tuple[int, Any], ...], str, str]:
    return _path_parts(violation.json_path), violation.keyword, violation.message
