"""Per-port expectations: the known failures a port is allowed, as a ratchet.

A file (TOML) lists entries, each one root cause: a ``rule`` over the ``variants`` that
show it (``scenario[variant]``; ``*`` may stand for any run of characters), a reason class,
the ``cause`` as a person wrote it (what the port does, kept across updates), optionally
the port ``source`` line that does it, and ``note``: the current observation of the first
variant, rewritten on every update. The older one-outcome form, ``key =
"scenario[variant]::rule"``, is still read. An expected entry must fail *with that class*;
an unexpected failure fails the test; an unexpected pass fails too and prints the command
that rewrites the file; on a full run an entry that matched nothing is an error; a
wildcard ``key`` may match at most ``MAX_WILDCARD`` outcomes. This module is the only one
that knows the file's grammar.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import tomli_w

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.verdict.judge import Listing

REASONS = ("capability", "divergence", "golden", "port-error", "scenario", "transport")
MAX_WILDCARD = 20


class ExpectationsError(HarnessError):
    """An expectations file is malformed or inconsistent with the run."""


@dataclass
class Entry:
    key: str
    reason: str
    note: str = ""
    matched: int = 0
    # A failure that comes and goes with timing inside the port (e.g. golang's data race in
    # mergeRelayCalls): a pass does not make the entry stale, a different failure still fails.
    flaky: bool = False
    # A root-cause entry (``rule`` + ``variants``) stands for every ``variant::rule`` key;
    # ``key`` is then the first of them (how the entry is named in messages).
    rule: str | None = None
    variants: tuple[str, ...] = ()
    cause: str = ""
    source: str = ""
    # A flaky root cause that can also kill the port's process: a shim that died with this
    # text in its stderr, on one of the entry's variants, is this cause showing (e.g. Go's
    # fatal error on the map the race writes). Any other death is still a transport failure.
    crash: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        """Every ``variant::rule`` key (pattern) the entry lists."""
        if self.rule is None:
            return (self.key,)
        return tuple(f"{v}::{self.rule}" for v in self.variants)

    @property
    def wildcard(self) -> bool:
        return "*" in self.key

    @property
    def spans_variants(self) -> bool:
        """A wildcard in the scenario/variant part; only those are capped (``x[v]::*`` is
        bounded by one variant's rules)."""
        return "*" in self.key.split("::", 1)[0]

    def matches(self, key: str) -> bool:
        if not self.wildcard:
            return key == self.key
        return self._pattern.fullmatch(key) is not None

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        # Only `*` is special: keys are full of brackets, which fnmatch would read as classes.
        # Compiled once: a run looks up every rule of every variant (java: ~15k keys against
        # 449 wildcards), and re's own cache holds only 512 patterns.
        return re.compile(".*".join(re.escape(part) for part in self.key.split("*")))

    @property
    def scenario_part(self) -> str | None:
        """The text before the first ``[`` when that lies before any ``*``: every key this
        entry matches starts with it (None when a ``*`` comes first)."""
        literal = self.key.split("*", 1)[0]
        return literal.split("[", 1)[0] if "[" in literal else None


@dataclass(frozen=True)
class _Index:
    """Where a key's candidate entries are, so a lookup does not scan the whole file: exact
    keys by key, wildcards by the scenario part they fix (``None``: could match any)."""

    size: int
    exact: dict[str, tuple[int, Entry]]
    wildcards: dict[str | None, list[tuple[int, _Pattern]]]

    @classmethod
    def of(cls, entries: list[Entry]) -> _Index:
        exact: dict[str, tuple[int, Entry]] = {}
        wildcards: dict[str | None, list[tuple[int, _Pattern]]] = {}
        for position, entry in enumerate(entries):
            for key in entry.keys:
                if "*" in key:
                    part = Entry(key, entry.reason)
                    wildcards.setdefault(part.scenario_part, []).append((position, _Pattern(part, entry)))
                else:
                    exact.setdefault(key, (position, entry))
        return cls(len(entries), exact, wildcards)

    def wildcard_matches(self, key: str) -> list[tuple[int, Entry]]:
        """The entries with a wildcard pattern matching ``key``, in file order."""
        candidates = self.wildcards.get(key.split("[", 1)[0], []) + self.wildcards.get(None, [])
        return sorted(((pos, c.entry) for pos, c in candidates if c.pattern.matches(key)), key=lambda c: c[0])


@dataclass(frozen=True)
class _Pattern:
    """One wildcard key of an entry (a root-cause entry may list several)."""

    pattern: Entry
    entry: Entry


@dataclass
class Expectations:
    path: Path | None
    entries: list[Entry] = field(default_factory=list)
    port: str | None = None  # the port the file records, when it says
    _built_index: _Index | None = field(default=None, init=False, repr=False, compare=False)

    def check_port(self, port: str) -> None:
        """A file written for another port would judge this one by that port's failures."""
        if self.port is not None and self.port != port:
            raise ExpectationsError(
                f"{self.path}: this expectations file is for port {self.port!r}, not {port!r}; "
                f"pass that port's own file (e.g. conformance/{port}.toml)"
            )

    def _index(self) -> _Index:
        # Built on first use and again if entries were added since (entries are not edited).
        if self._built_index is None or self._built_index.size != len(self.entries):
            self._built_index = _Index.of(self.entries)
        return self._built_index

    def first_match(self, key: str) -> Entry | None:
        """The first entry in file order that matches ``key``, exact or wildcard (counts nothing)."""
        index = self._index()
        candidates = index.wildcard_matches(key)[:1]
        if key in index.exact:
            candidates.append(index.exact[key])
        return min(candidates, key=lambda c: c[0])[1] if candidates else None

    def entry_for(self, key: str) -> tuple[int, Entry] | None:
        """The entry listing ``key`` and its position: its exact entry, else the first
        wildcard matching it (counts nothing)."""
        index = self._index()
        exact = index.exact.get(key)
        if exact is not None:
            return exact
        wildcards = index.wildcard_matches(key)
        return wildcards[0] if wildcards else None

    def listing(self, key: str) -> Listing | None:
        """What the file lists for ``key``, as the judge asks it (:class:`Ledger`): the
        listing entry's reason and position, and whether the first entry matching the key
        marks it flaky. Counts nothing: matches are counted from the verdicts afterwards."""
        found = self.entry_for(key)
        if found is None:
            return None
        position, entry = found
        first = self.first_match(key)
        return Listing(entry.reason, first is not None and first.flaky, position)

    def crashed(self, node_id: str, stderr: str) -> tuple[str, str] | None:
        """The rule and ``crash`` text of the root-cause entry whose crash text the dead
        shim's ``stderr`` holds, when the entry lists ``node_id`` (:class:`Ledger`)."""
        for entry in self.entries:
            if entry.crash and entry.rule is not None and entry.crash in stderr and f"{node_id}::{entry.rule}" in entry.keys:
                return entry.rule, entry.crash
        return None

    def count_matches(self, positions: Iterable[int]) -> None:
        """Count each listed entry (by position) as matched once per time it is given; a
        wildcard spanning variants may match at most ``MAX_WILDCARD`` outcomes."""
        for position in positions:
            found = self.entries[position]
            found.matched += 1
            if found.rule is None and found.spans_variants and found.matched > MAX_WILDCARD:
                raise ExpectationsError(
                    f"{self.path}: wildcard entry {found.key!r} matches more than {MAX_WILDCARD} outcomes; list them"
                )

    def unmatched(self) -> list[Entry]:
        return [e for e in self.entries if e.matched == 0]


def load(path: Path | None) -> Expectations:
    if path is None:
        return Expectations(None)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExpectationsError(f"{path}: cannot read expectations: {exc}") from None
    entries, seen = [], set()
    for i, item in enumerate(raw.get("expected", [])):
        where = f"{path}: expected[{i}]"
        entry = _entry(item, where)
        for key in entry.keys:
            if key in seen:
                raise ExpectationsError(f"{where}: duplicate key {key!r}")
            seen.add(key)
        entries.append(entry)
    unknown = set(raw) - {"expected", "port"}
    if unknown:
        raise ExpectationsError(f"{path}: unknown top-level key(s) {sorted(unknown)}")
    port = raw.get("port")
    if port is not None and not isinstance(port, str):
        raise ExpectationsError(f"{path}: port must be a string, got {port!r}")
    return Expectations(path, entries, port)


ENTRY_FIELDS = {"key", "rule", "variants", "reason", "note", "flaky", "cause", "source", "crash"}


def _entry(item: dict[str, object], where: str) -> Entry:
    unknown = set(item) - ENTRY_FIELDS
    if unknown:
        raise ExpectationsError(f"{where}: unknown field(s) {sorted(unknown)}; an entry has {sorted(ENTRY_FIELDS)}")
    reason = item.get("reason")
    if reason not in REASONS:
        raise ExpectationsError(f"{where}: reason {reason!r} is not one of {', '.join(REASONS)}")
    flaky = item.get("flaky", False)
    if not isinstance(flaky, bool):
        raise ExpectationsError(f"{where}: flaky must be true or false, got {flaky!r}")
    texts: dict[str, str] = {}
    for name in ("note", "cause", "source", "crash"):
        text = item.get(name, "")
        if not isinstance(text, str):
            raise ExpectationsError(f"{where}: {name} must be a string, got {text!r}")
        texts[name] = text
    if "\n" in texts["crash"]:
        raise ExpectationsError(f"{where}: crash must be one line of the dead shim's stderr")
    if texts["crash"] and not flaky:
        raise ExpectationsError(f"{where}: crash needs flaky = true (a cause that kills the port only sometimes)")
    rule, variants = item.get("rule"), item.get("variants")
    if rule is not None or variants is not None:
        if "key" in item:
            raise ExpectationsError(f"{where}: give either key or rule + variants, not both")
        if not isinstance(rule, str) or not rule or "::" in rule:
            raise ExpectationsError(f"{where}: rule must be a rule id (or *), got {rule!r}")
        if not isinstance(variants, list) or not variants or not all(isinstance(v, str) and "[" in v for v in variants):
            raise ExpectationsError(f"{where}: variants must be a non-empty list of 'scenario[variant]', got {variants!r}")
        return Entry(
            f"{variants[0]}::{rule}", str(reason), texts["note"], flaky=flaky, rule=rule, variants=tuple(variants),
            cause=texts["cause"], source=texts["source"], crash=texts["crash"],
        )
    if texts["crash"]:
        raise ExpectationsError(f"{where}: crash belongs to a root-cause entry (rule + variants)")
    key = item.get("key")
    if not isinstance(key, str) or "::" not in key:
        raise ExpectationsError(f"{where}: key must look like 'scenario[variant]::rule', got {key!r}")
    return Entry(key, str(reason), texts["note"], flaky=flaky, cause=texts["cause"], source=texts["source"])


def write(
    path: Path, port: str, failures: dict[str, tuple[str, str]], previous: Expectations, regenerate: str
) -> int:
    """Rewrite ``path`` from observed failures {key: (reason, one-line observation)}; return
    how many entries it wrote.

    One entry per root cause: the failures of one rule and reason class form one entry,
    split as the previous file's entries split them (each keeps its ``cause``, ``source``
    and ``flaky``); its ``note`` is rewritten from this run's observation. A variant that
    failed only for a missing capability is grouped with the others missing the same ones
    under rule ``*``. A flaky entry keeps the variants this run happened to pass."""
    failures = collapse_capability(failures)
    groups: dict[tuple[str, str, int | None], list[str]] = {}
    owners = previous.entries
    for key in sorted(failures):
        variant, rule = key.split("::", 1)
        reason, observed = failures[key]
        owner = previous.first_match(key)
        slot = owners.index(owner) if owner is not None and owner.rule is not None and owner.reason == reason else None
        if rule == "*" and slot is None:
            rule = f"*{observed}"  # capability entries: grouped by what is missing
        elif slot is None and owner is not None and owner.flaky:
            rule = f"{rule}\x00flaky"  # a flaky failure is a root cause of its own, never lumped
        groups.setdefault((rule, reason, slot), []).append(key)
    flaky_keys = {key for key in failures if (e := previous.first_match(key)) is not None and e.flaky}
    for position, entry in enumerate(owners):
        if entry.flaky:
            for key in entry.keys:
                if "*" not in key and key not in failures:
                    failures[key] = (entry.reason, entry.note.split(": ", 1)[-1] if entry.rule else entry.note)
                    flaky_keys.add(key)
                    slot = position if entry.rule is not None else None
                    rule = key.split("::", 1)[1] + ("" if slot is not None else "\x00flaky")
                    groups.setdefault((rule, entry.reason, slot), []).append(key)
    expected = []
    def shown(rule: str) -> str:
        return "*" if rule.startswith("*") else rule.split("\x00", 1)[0]

    # Ordered by what the file shows, so a second update of the same run writes the same file.
    for (rule, reason, slot), keys in sorted(groups.items(), key=lambda g: (shown(g[0][0]), g[0][1], sorted(g[1])[0])):
        rule = shown(rule)
        owner_entry = owners[slot] if slot is not None else None
        variants = sorted(dict.fromkeys(k.split("::", 1)[0] for k in keys))
        first = keys[0]
        item: dict[str, object] = {"rule": rule, "reason": reason}
        if owner_entry is not None and owner_entry.cause:
            item["cause"] = owner_entry.cause
        if owner_entry is not None and owner_entry.source:
            item["source"] = owner_entry.source
        if owner_entry is not None and owner_entry.crash:
            item["crash"] = owner_entry.crash
        item["note"] = _note(f"{first.split('::', 1)[0]}: {failures[first][1]}")
        if any(k in flaky_keys for k in keys):
            item["flaky"] = True
        item["variants"] = variants
        expected.append(item)
    document = {"port": port, "expected": expected}
    header = f"# Known failures of port {port!r}, kept by the harness's ratchet.\n# Regenerate: {_one_line(regenerate)}\n"
    # tomli_w escapes every control character, so what it writes tomllib reads back.
    path.write_text(header + tomli_w.dumps(document, multiline_strings=False), encoding="utf-8")
    return len(expected)


def collapse_capability(failures: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    by_variant: dict[str, list[str]] = {}
    for key in failures:
        by_variant.setdefault(key.split("::", 1)[0], []).append(key)
    out: dict[str, tuple[str, str]] = {}
    for variant, keys in by_variant.items():
        reasons = {failures[k][0] for k in keys}
        if reasons == {"capability"} and len(keys) > 1:
            out[f"{variant}::*"] = ("capability", failures[keys[0]][1])
        else:
            out.update({k: failures[k] for k in keys})
    return out


def _note(text: str) -> str:
    """A note reads as one line of at most 300 characters (an observation can be a whole
    diff); any other control character is kept, and escaped by the TOML writer."""
    return text.replace("\r\n", " ").replace("\n", " ")[:300]


def _one_line(text: str) -> str:
    """For a TOML comment, which cannot escape anything: control characters become spaces."""
    return "".join(c if c.isprintable() else " " for c in text)
