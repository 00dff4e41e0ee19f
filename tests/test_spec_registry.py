"""SPEC.md's rule catalogue and fixtures/rules.json must say the same thing.

This module owns the checks that tie the catalogue (parsed by ``spec_catalogue``, the format
documented at the top of SPEC.md §3) to the registry: ids, titles, levels, anchors and the
registry's own schema, and every rule's grounding (SPEC.md §1 "Grounding": a source class
whose level bounds the rule's level, a section, a short quote for a document source, the
same in both files). The ``test_broken_*`` tests feed the grounding checks deliberately broken
catalogues so they are known to fail. Every failure message lists the offending rule ids so a
spec author can fix them without reading this file.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from spec_catalogue import (
    SOURCE_LEVELS,
    ParsedSpec,
    grounding_differences,
    grounding_problems,
    parse_spec_text,
    quotes_missing,
)

ROOT = Path(__file__).resolve().parents[1]
SPEC_PATH = ROOT / "SPEC.md"
REGISTRY_PATH = ROOT / "fixtures" / "rules.json"

RULE_ID = re.compile(r"^[a-z]+\.[a-z0-9-]+$")
LEVELS = ("normative", "advisory")

# The pre-relay behaviours issue 2 names as spec gaps: each must have an advisory rule.
REQUIRED_ADVISORY_GAPS = {
    "assistant content null vs \"\"": "loop.assistant-content-null",
    "anthropic system \"\" vs absent": "loop.anthropic-system-empty",
    "maxTurns exhaustion": "loop.max-turns-exhaustion",
    "resume of a non-relay halted call": "resume.non-relay-reexecutes",
}
MIN_RULES = 40

GROUNDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["source", "section"],
    "properties": {
        "source": {"enum": sorted(SOURCE_LEVELS)},
        "section": {"type": "string", "minLength": 1},
        "quote": {"type": "string", "minLength": 1},
        "conflict": {"type": "string", "minLength": 1},
        "note": {"type": "string", "minLength": 1},
    },
}

REGISTRY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "rules"],
    "properties": {
        "version": {"const": 1},
        "rules": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "title", "level", "anchor", "grounding"],
                "properties": {
                    "id": {"type": "string", "pattern": RULE_ID.pattern},
                    "title": {"type": "string", "minLength": 1},
                    "level": {"enum": list(LEVELS)},
                    "anchor": {"type": "string", "minLength": 1},
                    "grounding": GROUNDING_SCHEMA,
                },
            },
        },
    },
}


@cache
def parse_spec() -> ParsedSpec:
    return parse_spec_text(SPEC_PATH.read_text(encoding="utf-8"))


@cache
def load_registry() -> dict[str, Any]:
    return json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))


def registry_rules() -> list[dict[str, Any]]:
    return list(load_registry().get("rules", []))


def _listing(items: list[str] | set[str]) -> str:
    return "\n  " + "\n  ".join(sorted(items))


# --- registry on its own ---------------------------------------------------------------


def test_registry_matches_its_schema() -> None:
    errors = sorted(Draft202012Validator(REGISTRY_SCHEMA).iter_errors(load_registry()), key=str)
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
    assert not problems, f"{REGISTRY_PATH.name} does not match the registry schema:" + _listing(problems)


def test_registry_ids_are_well_formed_and_unique() -> None:
    ids = [str(rule.get("id")) for rule in registry_rules()]
    malformed = {i for i in ids if not RULE_ID.match(i)}
    duplicated = {i for i, n in Counter(ids).items() if n > 1}
    assert not malformed, f"malformed rule ids in {REGISTRY_PATH.name} (want area.slug):" + _listing(malformed)
    assert not duplicated, f"duplicated rule ids in {REGISTRY_PATH.name}:" + _listing(duplicated)


def test_registry_anchor_is_the_rule_id() -> None:
    wrong = {f"{r['id']} (anchor {r.get('anchor')!r})" for r in registry_rules() if r.get("anchor") != r["id"]}
    assert not wrong, "registry anchors must equal the rule id:" + _listing(wrong)


def test_registry_has_enough_rules() -> None:
    count = len(registry_rules())
    assert count >= MIN_RULES, f"only {count} rules in the registry; the catalogue needs at least {MIN_RULES}"


def test_every_named_spec_gap_has_an_advisory_rule() -> None:
    levels = {rule["id"]: rule["level"] for rule in registry_rules()}
    missing = {f"{gap}: {rid} ({levels.get(rid, 'absent')})" for gap, rid in REQUIRED_ADVISORY_GAPS.items()
               if levels.get(rid) != "advisory"}
    assert not missing, "spec gaps from issue 2 without an advisory rule:" + _listing(missing)


# --- SPEC.md on its own ----------------------------------------------------------------


def test_spec_rule_headings_are_well_formed() -> None:
    parsed = parse_spec()
    bad_headings = parsed.malformed_headings
    assert not bad_headings, (
        "level-4 headings starting with a backtick must read #### `area.slug` — Title:" + _listing(bad_headings)
    )
    malformed = {f"{r.id} (line {r.line})" for r in parsed.rules if not RULE_ID.match(r.id)}
    assert not malformed, "malformed rule ids in SPEC.md (want area.slug):" + _listing(malformed)


def test_spec_rule_ids_are_unique() -> None:
    duplicated = {i for i, n in Counter(r.id for r in parse_spec().rules).items() if n > 1}
    assert not duplicated, "rule ids written more than once in SPEC.md:" + _listing(duplicated)


def test_spec_anchors_are_present_and_unique() -> None:
    parsed = parse_spec()
    missing = {f"{r.id} (line {r.line}, found {r.anchor!r})" for r in parsed.rules if r.anchor != r.id}
    duplicated = {a for a, n in Counter(parsed.anchors).items() if n > 1}
    assert not missing, 'rules without <a id="<rule id>"></a> directly above their heading:' + _listing(missing)
    assert not duplicated, "anchors defined more than once in SPEC.md:" + _listing(duplicated)


def test_spec_rules_state_level_why_and_checked_by() -> None:
    rules = parse_spec().rules
    no_level = {f"{r.id} (line {r.line})" for r in rules if r.level is None}
    no_why = {r.id for r in rules if not r.has_why}
    no_check = {r.id for r in rules if not r.has_checked_by}
    assert not no_level, "rules whose first line after the heading is not 'Level: normative|advisory':" + _listing(
        no_level
    )
    assert not no_why, "rules without a 'Why:' paragraph:" + _listing(no_why)
    assert not no_check, "rules without a 'Checked by:' paragraph:" + _listing(no_check)


def test_spec_links_to_rules_resolve() -> None:
    parsed = parse_spec()
    dangling = set(parsed.rule_links) - set(parsed.anchors)
    assert not dangling, "links to rule anchors that do not exist in SPEC.md:" + _listing(dangling)


# --- the two together ------------------------------------------------------------------


def test_same_rule_ids_in_spec_and_registry() -> None:
    in_spec = set(parse_spec().by_id())
    in_registry = {rule["id"] for rule in registry_rules()}
    only_spec = in_spec - in_registry
    only_registry = in_registry - in_spec
    assert not only_registry, f"in {REGISTRY_PATH.name} but not in SPEC.md:" + _listing(only_registry)
    assert not only_spec, f"in SPEC.md but not in {REGISTRY_PATH.name}:" + _listing(only_spec)


@pytest.mark.parametrize("attribute", ["title", "level"])
def test_title_and_level_agree(attribute: str) -> None:
    spec = parse_spec().by_id()
    differing = [
        f"{rule['id']}: registry {rule[attribute]!r} vs SPEC.md {getattr(spec[rule['id']], attribute)!r}"
        for rule in registry_rules()
        if rule["id"] in spec and rule.get(attribute) != getattr(spec[rule["id"]], attribute)
    ]
    assert not differing, f"{attribute} differs between {REGISTRY_PATH.name} and SPEC.md:" + _listing(differing)


def test_registry_anchors_exist_in_spec() -> None:
    anchors = set(parse_spec().anchors)
    missing = {f"{r['id']} -> #{r.get('anchor')}" for r in registry_rules() if r.get("anchor") not in anchors}
    assert not missing, "registry anchors with no matching anchor in SPEC.md:" + _listing(missing)


# --- groundings ------------------------------------------------------------------------


def test_spec_lists_the_owner_decisions() -> None:
    decisions = parse_spec().decisions
    expected = [f"D{n}" for n in range(1, len(decisions) + 1)]
    assert decisions, "SPEC.md §1 lists no owner decision (rows '| D<n> | decision | level |')"
    assert list(decisions) == expected, f"owner decisions are not numbered D1..D{len(decisions)}: {list(decisions)}"


def test_every_registry_rule_is_grounded() -> None:
    decisions = parse_spec().decisions
    problems = [
        p for r in registry_rules() for p in grounding_problems(r["id"], r.get("level"), r.get("grounding"), decisions)
    ]
    assert not problems, f"rules in {REGISTRY_PATH.name} whose grounding does not hold:" + _listing(problems)


def test_every_spec_rule_states_its_grounding() -> None:
    parsed = parse_spec()
    unreadable = [f"{r.id} (line {r.line}): {r.grounding_error}" for r in parsed.rules if r.grounding is None]
    assert not unreadable, "rules in SPEC.md without a readable 'Grounding:' paragraph:" + _listing(unreadable)
    problems = [p for r in parsed.rules for p in grounding_problems(r.id, r.level, r.grounding, parsed.decisions)]
    assert not problems, "rules in SPEC.md whose grounding does not hold:" + _listing(problems)


def test_grounding_agrees_between_spec_and_registry() -> None:
    differing = grounding_differences(parse_spec().by_id(), registry_rules())
    assert not differing, f"grounding differs between {REGISTRY_PATH.name} and SPEC.md:" + _listing(differing)


# Where the documents quoted by groundings live on a machine that has them (never in the repo).
DOCUMENTS = {
    "upstream-spec": ("TOOLNEXUS_SRC", "SPEC.md"),
    "adr-0010": ("TOOLNEXUS_ADR_0010", ""),
}


@pytest.mark.parametrize("source", sorted(DOCUMENTS))
def test_quotes_are_words_of_their_document(source: str) -> None:
    variable, inside = DOCUMENTS[source]
    if not os.environ.get(variable):
        pytest.skip(f"{variable} is not set: the {source} quotes cannot be compared with their document here")
    path = Path(os.environ[variable]) / inside if inside else Path(os.environ[variable])
    try:
        document = path.read_text(encoding="utf-8")
    except OSError as exc:
        pytest.fail(f"{variable}={os.environ[variable]}: cannot read {path}: {exc}")
    missing = quotes_missing(registry_rules(), source, document)
    assert not missing, f"quotes not in {path} (markdown marks dropped, whitespace collapsed):" + _listing(missing)


# --- the grounding checks fail on broken catalogues ---------------------------------------

BROKEN_SPEC = """
| D1 | a decision | normative |

<a id="loop.one"></a>
#### `loop.one` — One

Level: normative

Statement.

Why: because.

Checked by: `requests`.

<a id="loop.two"></a>
#### `loop.two` — Two

Level: advisory

Statement.

Why: because.

Checked by: `requests`.

Grounding: golang-behaviour — port sources
"""


def test_broken_a_spec_rule_without_grounding_fails() -> None:
    parsed = parse_spec_text(BROKEN_SPEC)
    by_id = parsed.by_id()
    assert by_id["loop.one"].grounding is None
    assert by_id["loop.one"].grounding_error == "no 'Grounding:' paragraph"
    assert grounding_problems("loop.one", "normative", by_id["loop.one"].grounding, parsed.decisions) == [
        "loop.one: no grounding (say which document, owner decision or port behaviour it rests on)"
    ]
    assert by_id["loop.two"].grounding == {"source": "golang-behaviour", "section": "port sources"}
    assert grounding_problems("loop.two", "advisory", by_id["loop.two"].grounding, parsed.decisions) == []


def test_broken_a_registry_rule_without_grounding_fails() -> None:
    registry = copy.deepcopy(load_registry())
    victim = registry["rules"][0]
    del victim["grounding"]
    errors = [e.message for e in Draft202012Validator(REGISTRY_SCHEMA).iter_errors(registry)]
    assert "'grounding' is a required property" in errors
    problems = grounding_problems(victim["id"], victim["level"], victim.get("grounding"), parse_spec().decisions)
    assert problems == [
        f"{victim['id']}: no grounding (say which document, owner decision or port behaviour it rests on)"
    ]


def _g(source: str, section: str = "x", quote: str | None = None) -> dict[str, str]:
    return {"source": source, "section": section} | ({"quote": quote} if quote is not None else {})


# (level, grounding, the start of the problem it must raise)
BROKEN_GROUNDINGS = [
    ("normative", _g("golang-behaviour"), "level 'normative' cannot rest on golang-behaviour alone"),
    ("normative", _g("unpinned"), "level 'normative' cannot rest on unpinned alone"),
    ("advisory", _g("adr-0010", "Decision 5", "q"), "level 'advisory' cannot rest on adr-0010 alone"),
    ("advisory", _g("upstream-spec", "§10", "q"), "level 'advisory' cannot rest on upstream-spec alone"),
    ("advisory", _g("ports-agree"), "level 'advisory' cannot rest on ports-agree alone"),
    ("normative", _g("owner-decision", "D2"), "level 'normative' but owner decision D2 is advisory"),
    ("normative", _g("owner-decision", "D99"), "owner decision 'D99' is not in SPEC.md §1's list (D1, D2)"),
    ("normative", _g("adr-0010", "Decision 5"), "grounded in adr-0010 but quotes none of its words"),
    ("normative", _g("upstream-spec", "§8", "w" * 161), "quote of 161 characters; quote a few words"),
    ("normative", _g("golang"), "grounding source 'golang' is none of"),
    ("normative", _g("upstream-spec", " ", "q"), "grounding from upstream-spec names no section"),
]


@pytest.mark.parametrize(("level", "grounding", "expected"), BROKEN_GROUNDINGS)
def test_broken_grounding_inconsistent_with_level_fails(level: str, grounding: dict[str, str], expected: str) -> None:
    problems = grounding_problems("loop.x", level, grounding, {"D1": "normative", "D2": "advisory"})
    assert any(p.startswith(f"loop.x: {expected}") for p in problems), problems


def test_broken_grounding_that_disagrees_between_files_fails() -> None:
    registry = copy.deepcopy(registry_rules())
    victim = next(r for r in registry if r["grounding"].get("quote"))
    victim["grounding"]["quote"] += " (edited)"
    victim["grounding"].pop("note", None)
    differing = grounding_differences(parse_spec().by_id(), registry)
    assert differing and all(d.startswith(f"{victim['id']}: grounding ") for d in differing), differing
    assert any(" quote " in d for d in differing), differing


def test_broken_a_quote_the_document_does_not_contain_fails() -> None:
    document = "The **loop** stamps `id`\n  (the tool cannot know its own call id)."
    rules = [
        {"id": "relay.a", "grounding": _g("upstream-spec", "§10", "The loop stamps id (the tool")},
        {"id": "relay.b", "grounding": _g("upstream-spec", "§10", "The loop stamps ids")},
        {"id": "relay.c", "grounding": _g("adr-0010", "Decision 1", "not in this text")},
    ]
    assert quotes_missing(rules, "upstream-spec", document) == ["relay.b: 'The loop stamps ids'"]
    assert quotes_missing(rules, "adr-0010", document) == ["relay.c: 'not in this text'"]
