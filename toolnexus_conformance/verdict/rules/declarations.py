"""Checks for the tool declarations a port's adapters write (SPEC.md decl.*).

``toolkit.describe`` returns every style's declarations for every variant, so the shape
rules judge their own style's listing on every variant, and the request bodies of the
variants of that style. decl.order judges only the order of the names each listing
carries; a listing whose shape is wrong is its shape rule's failure, not an order failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance.run.facts import Facts
from toolnexus_conformance.run.runner import RunRecord
from toolnexus_conformance.scenario.declarations import BUILTIN_NAMES, declared_name

from . import NotApplicable, check


def _described(record: RunRecord) -> dict[str, Any]:
    if record.declarations is None:
        raise NotApplicable(f"toolkit.describe refused the toolkit: {record.declaration_error}")
    return record.declarations


def _gemini_list(described: dict[str, Any]) -> list[Any] | None:
    """The functionDeclarations of the one Gemini tool object, or None when not that shape."""
    gemini = described.get("gemini")
    if isinstance(gemini, list) and len(gemini) == 1 and isinstance(gemini[0], dict):
        found = gemini[0].get("functionDeclarations")
        return found if isinstance(found, list) else None
    return None


def _schemas(facts: Facts) -> dict[str, Any]:
    return {name: t.get("schema") for name, t in facts.tools.items() if t.get("schema") is not None}


def _request_tools(record: RunRecord, facts: Facts, style: str) -> Iterator[str]:
    """The variant's request bodies carry the declarations describe returned, each as
    describe wrote it (their order is decl.order's to judge)."""
    if facts.style != style:
        return
    described = {declared_name(d, style): d for d in (record.declarations or {}).get(style) or []}
    for p, phase in enumerate(record.phases, start=1):
        for i, body in enumerate(phase.requests, start=1):
            if not isinstance(body.get("tools"), list):
                continue
            sent = {declared_name(d, style): d for d in body["tools"]}
            for name in sorted(set(sent) | set(described), key=str):
                if sent.get(name) != described.get(name):
                    yield (f"phase {p} request {i}: the {style} declaration of {name!r} is {sent.get(name, '<absent>')!r}, "
                           f"toolkit.describe returned {described.get(name, '<absent>')!r}")


@check("decl.openai-shape")
def openai_shape(record: RunRecord, facts: Facts) -> Iterator[str]:
    described = _described(record)
    schemas = _schemas(facts)
    for d in described.get("openai") or []:
        if not isinstance(d, dict) or set(d) != {"type", "function"} or d.get("type") != "function":
            yield f"openai declaration has keys {sorted(d) if isinstance(d, dict) else d!r}: {d}"
            continue
        fn = d["function"]
        if not isinstance(fn, dict) or set(fn) != {"name", "description", "parameters"}:
            yield f"openai declaration of {declared_name(d, 'openai')!r}: function has keys {sorted(fn) if isinstance(fn, dict) else fn!r}"
            continue
        if fn.get("name") in schemas and fn.get("parameters") != schemas[fn["name"]]:
            yield f"openai declaration of {fn['name']!r}: parameters {fn.get('parameters')!r} differ from the input schema"
    yield from _request_tools(record, facts, "openai")


@check("decl.anthropic-shape")
def anthropic_shape(record: RunRecord, facts: Facts) -> Iterator[str]:
    described = _described(record)
    schemas = _schemas(facts)
    for d in described.get("anthropic") or []:
        if not isinstance(d, dict) or set(d) != {"name", "description", "input_schema"}:
            yield f"anthropic declaration has keys {sorted(d) if isinstance(d, dict) else d!r}"
        elif d["name"] in schemas and d["input_schema"] != schemas[d["name"]]:
            yield f"anthropic declaration of {d['name']!r}: input_schema differs from the tool's schema"
    yield from _request_tools(record, facts, "anthropic")


@check("decl.gemini-shape")
def gemini_shape(record: RunRecord, facts: Facts) -> Iterator[str]:
    described = _described(record)
    listed = _gemini_list(described)
    if listed is None:
        yield f"gemini declarations are not one {{functionDeclarations: [...]}}: {described.get('gemini')!r}"
        return
    schemas = _schemas(facts)
    for d in listed:
        if not isinstance(d, dict) or set(d) - {"name", "description", "parameters"} or not {"name", "description"} <= set(d):
            yield f"gemini function declaration has keys {sorted(d) if isinstance(d, dict) else d!r}, expected name, description, parameters"
        elif d["name"] in schemas and d.get("parameters") != schemas[d["name"]]:
            yield f"gemini declaration of {d['name']!r}: parameters differ from the tool's schema"


@check("decl.order")
def order(record: RunRecord, facts: Facts) -> Iterator[str]:
    described = _described(record)
    names = list(facts.tools)
    listings: list[tuple[str, list[Any]]] = [
        ("openai", [declared_name(d, "openai") for d in described.get("openai") or []]),
        ("anthropic", [declared_name(d, "anthropic") for d in described.get("anthropic") or []]),
    ]
    gemini = _gemini_list(described)
    if gemini is not None:  # another shape is decl.gemini-shape's failure
        listings.append(("gemini", [d.get("name") for d in gemini if isinstance(d, dict)]))
    for p, phase in enumerate(record.phases, start=1):
        for i, body in enumerate(phase.requests, start=1):
            if isinstance(body.get("tools"), list):
                listings.append((f"phase {p} request {i} tools", [declared_name(d, facts.style) for d in body["tools"]]))
    for where, listed in listings:
        ours = [n for n in listed if n in names]
        if ours != names:
            yield f"{where} list {ours}, expected the toolkit's order {names}"


@check("decl.builtin-names")
def builtin_names(record: RunRecord, facts: Facts) -> Iterator[str]:
    if not facts.builtins:
        raise NotApplicable("builtins are off")
    described = _described(record)
    for style in ("openai", "anthropic"):
        listed = {declared_name(d, style): _schema_of(d, style) for d in described.get(style) or []}
        missing = sorted(BUILTIN_NAMES - set(listed))
        if missing:
            yield f"{style}: builtins missing from the declarations: {missing}"
        for name in sorted(BUILTIN_NAMES & {n for n in listed if n is not None}):
            schema = listed[name]
            if not isinstance(schema, dict) or schema.get("type") != "object" or not schema.get("properties"):
                yield f"{style}: builtin {name!r} is declared without its input schema: {schema!r}"


def _schema_of(declaration: Any, style: str) -> Any:
    if not isinstance(declaration, dict):
        return None
    if style == "openai":
        return (declaration.get("function") or {}).get("parameters")
    return declaration.get("input_schema")
