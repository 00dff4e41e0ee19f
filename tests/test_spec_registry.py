"""SPEC.md's rule catalogue and fixtures/rules.json must say the same thing.

This module owns the parser for the catalogue format documented at the top of SPEC.md §3
(anchor line, level-4 heading with backticked id and title, ``Level:`` line, ``Why:`` and
``Checked by:`` paragraphs) and the checks that tie it to the registry. Every failure message
lists the offending rule ids so a spec author can fix them without reading this file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]
SPEC_PATH = ROOT / "SPEC.md"
REGISTRY_PATH = ROOT / "fixtures" / "rules.json"

RULE_ID = re.compile(r"^[a-z]+\.[a-z0-9-]+$")
ANCHOR = re.compile(r'<a id="([^"]*)"></a>')
ANCHOR_LINE = re.compile(r'^<a id="([^"]*)"></a>$')
RULE_HEADING = re.compile(r"^#### `(?P<id>[^`]+)` — (?P<title>\S.*)$")
LEVEL_LINE = re.compile(r"^Level: (?P<level>normative|advisory)$")
RULE_LINK = re.compile(r"\]\(#([a-z]+\.[a-z0-9-]+)\)")
LEVELS = ("normative", "advisory")

# The pre-relay behaviours issue 2 names as spec gaps: each must have an advisory rule.
REQUIRED_ADVISORY_GAPS = {
    "assistant content null vs \"\"": "loop.assistant-content-null",
    "anthropic system \"\" vs absent": "loop.anthropic-system-empty",
    "maxTurns exhaustion": "loop.max-turns-exhaustion",
    "resume of a non-relay halted call": "resume.non-relay-reexecutes",
}
MIN_RULES = 40

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
                "required": ["id", "title", "level", "anchor"],
                "properties": {
                    "id": {"type": "string", "pattern": RULE_ID.pattern},
                    "title": {"type": "string", "minLength": 1},
                    "level": {"enum": list(LEVELS)},
                    "anchor": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class SpecRule:
    """One rule as written in SPEC.md."""

    id: str
    title: str
    level: str | None
    anchor: str | None
    line: int
    has_why: bool
    has_checked_by: bool


@dataclass
class ParsedSpec:
    rules: list[SpecRule] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    malformed_headings: list[str] = field(default_factory=list)
    rule_links: list[str] = field(default_factory=list)

    def by_id(self) -> dict[str, SpecRule]:
        return {rule.id: rule for rule in self.rules}


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, where the format example lives."""
    out: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def _rule_at(lines: list[tuple[int, str]], index: int, match: re.Match[str]) -> SpecRule:
    before = next((line for _, line in reversed(lines[:index]) if line.strip()), "")
    anchor = ANCHOR_LINE.match(before.strip())
    body: list[str] = []
    for _, line in lines[index + 1 :]:
        if line.startswith("#"):
            break
        body.append(line)
    first = next((line for line in body if line.strip()), "")
    level = LEVEL_LINE.match(first.strip())
    return SpecRule(
        id=match["id"],
        title=match["title"].rstrip(),
        level=level["level"] if level else None,
        anchor=anchor[1] if anchor else None,
        line=lines[index][0],
        has_why=any(line.startswith("Why:") for line in body),
        has_checked_by=any(line.startswith("Checked by:") for line in body),
    )


@cache
def parse_spec() -> ParsedSpec:
    lines = _prose_lines(SPEC_PATH.read_text(encoding="utf-8"))
    parsed = ParsedSpec()
    for index, (number, line) in enumerate(lines):
        parsed.anchors.extend(ANCHOR.findall(line))
        parsed.rule_links.extend(RULE_LINK.findall(line))
        if not line.startswith("#### `"):
            continue
        match = RULE_HEADING.match(line)
        if match is None:
            parsed.malformed_headings.append(f"line {number}: {line}")
            continue
        parsed.rules.append(_rule_at(lines, index, match))
    return parsed


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
