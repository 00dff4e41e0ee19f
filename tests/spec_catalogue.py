"""The parser for SPEC.md's rule catalogue and the grounding rules, shared by the registry tests.

This module owns reading the catalogue format documented at the top of SPEC.md §3 (anchor
line, level-4 heading with backticked id and title, ``Level:`` line, ``Why:``, ``Checked
by:`` and ``Grounding:`` paragraphs, optional ``Conflict:`` and ``Note:``), the owner-decision
table of SPEC.md §1, and the pure functions that say what is wrong with a rule's grounding.
Every function takes its data as arguments so a test can feed it a deliberately broken
catalogue; each problem is one readable line naming the rule id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ANCHOR = re.compile(r'<a id="([^"]*)"></a>')
ANCHOR_LINE = re.compile(r'^<a id="([^"]*)"></a>$')
RULE_HEADING = re.compile(r"^#### `(?P<id>[^`]+)` — (?P<title>\S.*)$")
LEVEL_LINE = re.compile(r"^Level: (?P<level>normative|advisory)$")
RULE_LINK = re.compile(r"\]\(#([a-z]+\.[a-z0-9-]+)\)")
DECISION_ROW = re.compile(r"^\| (?P<id>D\d+) \| (?P<decision>.+) \| (?P<level>normative|advisory) \|$")

# Source class -> the levels a rule grounded in it may have (SPEC.md §1 "Grounding").
# owner-decision takes the level its decision gives, checked separately.
SOURCE_LEVELS: dict[str, frozenset[str]] = {
    "adr-0010": frozenset({"normative"}),
    "upstream-spec": frozenset({"normative"}),
    "owner-decision": frozenset({"normative", "advisory"}),
    "ports-agree": frozenset({"normative"}),
    "golang-behaviour": frozenset({"advisory"}),
    "unpinned": frozenset({"advisory"}),
}
DOCUMENT_SOURCES = frozenset({"adr-0010", "upstream-spec"})
GROUNDING_FIELDS = ("source", "section", "quote", "conflict", "note")
PARAGRAPH_FIELDS = {"Grounding": "grounding", "Conflict": "conflict", "Note": "note"}
# "a short quote for facts, not copied paragraphs"
MAX_QUOTE = 160


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
    grounding: dict[str, str] | None = None
    grounding_error: str | None = None


@dataclass
class ParsedSpec:
    rules: list[SpecRule] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    malformed_headings: list[str] = field(default_factory=list)
    rule_links: list[str] = field(default_factory=list)
    decisions: dict[str, str] = field(default_factory=dict)

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


def _paragraphs(body: Iterable[str]) -> list[str]:
    """Blank-line separated paragraphs, each joined into one line."""
    out: list[str] = []
    current: list[str] = []
    for line in body:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    if current:
        out.append(" ".join(current))
    return out


def parse_grounding(paragraphs: Iterable[str]) -> tuple[dict[str, str] | None, str | None]:
    """The grounding a rule's paragraphs state, or None and why it could not be read."""
    found: dict[str, str] = {}
    for paragraph in paragraphs:
        label, sep, rest = paragraph.partition(": ")
        if sep and label in PARAGRAPH_FIELDS:
            found[PARAGRAPH_FIELDS[label]] = rest.strip()
    head = found.pop("grounding", None)
    if head is None:
        return None, "no 'Grounding:' paragraph"
    parts = head.split(" — ", 2)
    if len(parts) < 2:
        return None, f"'Grounding: {head}' is not '<source> — <section>[ — \"<quote>\"]'"
    grounding = {"source": parts[0], "section": parts[1]}
    if len(parts) == 3:
        quote = parts[2]
        if not (len(quote) >= 2 and quote.startswith('"') and quote.endswith('"')):
            return None, f"the quote in 'Grounding: {head}' is not in double quotes"
        grounding["quote"] = quote[1:-1]
    grounding.update(found)
    return grounding, None


def _rule_at(lines: list[tuple[int, str]], index: int, match: re.Match[str]) -> SpecRule:
    before = next((line for _, line in reversed(lines[:index]) if line.strip()), "")
    anchor = ANCHOR_LINE.match(before.strip())
    body: list[str] = []
    for _, line in lines[index + 1 :]:
        if line.startswith("#") or ANCHOR_LINE.match(line.strip()):
            break
        body.append(line)
    first = next((line for line in body if line.strip()), "")
    level = LEVEL_LINE.match(first.strip())
    grounding, error = parse_grounding(_paragraphs(body))
    return SpecRule(
        id=match["id"],
        title=match["title"].rstrip(),
        level=level["level"] if level else None,
        anchor=anchor[1] if anchor else None,
        line=lines[index][0],
        has_why=any(line.startswith("Why:") for line in body),
        has_checked_by=any(line.startswith("Checked by:") for line in body),
        grounding=grounding,
        grounding_error=error,
    )


def parse_spec_text(text: str) -> ParsedSpec:
    lines = _prose_lines(text)
    parsed = ParsedSpec()
    for index, (number, line) in enumerate(lines):
        parsed.anchors.extend(ANCHOR.findall(line))
        parsed.rule_links.extend(RULE_LINK.findall(line))
        decision = DECISION_ROW.match(line)
        if decision:
            parsed.decisions[decision["id"]] = decision["level"]
        if not line.startswith("#### `"):
            continue
        match = RULE_HEADING.match(line)
        if match is None:
            parsed.malformed_headings.append(f"line {number}: {line}")
            continue
        parsed.rules.append(_rule_at(lines, index, match))
    return parsed


def grounding_problems(rule_id: str, level: Any, grounding: Any, decisions: Mapping[str, str]) -> list[str]:
    """What is wrong with one rule's grounding, judged against SPEC.md §1 (source classes and
    the owner decisions with their levels). Empty when the grounding holds."""
    if not isinstance(grounding, dict):
        return [f"{rule_id}: no grounding (say which document, owner decision or port behaviour it rests on)"]
    source, section, quote = grounding.get("source"), grounding.get("section"), grounding.get("quote")
    if source not in SOURCE_LEVELS:
        return [f"{rule_id}: grounding source {source!r} is none of {sorted(SOURCE_LEVELS)}"]
    problems: list[str] = []
    if not isinstance(section, str) or not section.strip():
        problems.append(f"{rule_id}: grounding from {source} names no section")
    if source in DOCUMENT_SOURCES and not (isinstance(quote, str) and quote.strip()):
        problems.append(f"{rule_id}: grounded in {source} but quotes none of its words")
    if isinstance(quote, str) and len(quote) > MAX_QUOTE:
        problems.append(f"{rule_id}: quote of {len(quote)} characters; quote a few words (at most {MAX_QUOTE})")
    if level not in SOURCE_LEVELS[source]:
        allowed = " or ".join(sorted(SOURCE_LEVELS[source]))
        problems.append(f"{rule_id}: level {level!r} cannot rest on {source} alone (it allows {allowed})")
    if source == "owner-decision" and isinstance(section, str):
        decided = decisions.get(section.strip())
        if decided is None:
            listed = ", ".join(decisions)
            problems.append(f"{rule_id}: owner decision {section!r} is not in SPEC.md §1's list ({listed})")
        elif decided != level:
            problems.append(f"{rule_id}: level {level!r} but owner decision {section} is {decided}")
    return problems


def grounding_differences(spec: Mapping[str, SpecRule], registry: Iterable[Mapping[str, Any]]) -> list[str]:
    """Rules whose grounding SPEC.md and the registry state differently (field by field)."""
    differing: list[str] = []
    for rule in registry:
        written = spec.get(str(rule.get("id")))
        if written is None:
            continue
        stated: Mapping[str, Any] = written.grounding or {}
        raw = rule.get("grounding")
        recorded: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        for name in GROUNDING_FIELDS:
            if stated.get(name) != recorded.get(name):
                differing.append(
                    f"{rule['id']}: grounding {name} — registry {recorded.get(name)!r} vs SPEC.md {stated.get(name)!r}"
                )
    return differing


def normalized_document(text: str) -> str:
    """A document as quotes are compared with it: markdown emphasis and code marks dropped,
    whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[`*]", "", text)).strip()


def quotes_missing(registry: Iterable[Mapping[str, Any]], source: str, document: str) -> list[str]:
    """Rules grounded in ``source`` whose quote is not words of ``document`` (compared after
    :func:`normalized_document` on both sides)."""
    text = normalized_document(document)
    missing: list[str] = []
    for rule in registry:
        grounding = rule.get("grounding")
        if not isinstance(grounding, dict) or grounding.get("source") != source:
            continue
        quote = str(grounding.get("quote", ""))
        if not quote or normalized_document(quote) not in text:
            missing.append(f"{rule.get('id')}: {quote!r}")
    return missing
