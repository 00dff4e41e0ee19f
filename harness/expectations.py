"""Per-port expectations: the known failures a port is allowed, as a ratchet.

A file (TOML) lists entries keyed ``scenario[variant]::rule`` — ``*`` may stand for any run
of characters — each with a reason class. An expected entry must fail *with that class*;
an unexpected failure fails the test; an unexpected pass fails too and prints the command
that rewrites the file; on a full run an entry that matched nothing is an error; a
wildcard may match at most ``MAX_WILDCARD`` outcomes. This module is the only one that
knows the file's grammar.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import tomli_w

from .errors import HarnessError

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
    wildcards: dict[str | None, list[tuple[int, Entry]]]

    @classmethod
    def of(cls, entries: list[Entry]) -> _Index:
        exact: dict[str, tuple[int, Entry]] = {}
        wildcards: dict[str | None, list[tuple[int, Entry]]] = {}
        for position, entry in enumerate(entries):
            if entry.wildcard:
                wildcards.setdefault(entry.scenario_part, []).append((position, entry))
            else:
                exact.setdefault(entry.key, (position, entry))
        return cls(len(entries), exact, wildcards)

    def wildcard_matches(self, key: str) -> list[tuple[int, Entry]]:
        """The wildcard entries matching ``key``, in file order."""
        candidates = self.wildcards.get(key.split("[", 1)[0], []) + self.wildcards.get(None, [])
        return sorted((c for c in candidates if c[1].matches(key)), key=lambda c: c[0])


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

    def lookup(self, key: str) -> Entry | None:
        """The entry listing ``key``: its exact entry, else the first wildcard matching it."""
        index = self._index()
        exact = index.exact.get(key)
        wildcards = index.wildcard_matches(key) if exact is None else []
        found = exact[1] if exact is not None else (wildcards[0][1] if wildcards else None)
        if found is not None:
            found.matched += 1
            if found.spans_variants and found.matched > MAX_WILDCARD:
                raise ExpectationsError(
                    f"{self.path}: wildcard entry {found.key!r} matches more than {MAX_WILDCARD} outcomes; list them"
                )
        return found

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
        key, reason = item.get("key"), item.get("reason")
        if not isinstance(key, str) or "::" not in key:
            raise ExpectationsError(f"{where}: key must look like 'scenario[variant]::rule', got {key!r}")
        if reason not in REASONS:
            raise ExpectationsError(f"{where}: reason {reason!r} is not one of {', '.join(REASONS)}")
        if key in seen:
            raise ExpectationsError(f"{where}: duplicate key {key!r}")
        seen.add(key)
        flaky = item.get("flaky", False)
        if not isinstance(flaky, bool):
            raise ExpectationsError(f"{where}: flaky must be true or false, got {flaky!r}")
        entries.append(Entry(key, reason, str(item.get("note", "")), flaky=flaky))
    unknown = set(raw) - {"expected", "port"}
    if unknown:
        raise ExpectationsError(f"{path}: unknown top-level key(s) {sorted(unknown)}")
    port = raw.get("port")
    if port is not None and not isinstance(port, str):
        raise ExpectationsError(f"{path}: port must be a string, got {port!r}")
    return Expectations(path, entries, port)


def write(
    path: Path, port: str, failures: dict[str, tuple[str, str]], previous: Expectations, regenerate: str
) -> None:
    """Rewrite ``path`` from observed failures {key: (reason, one-line observation)}.

    A variant that failed only for a missing capability gets one ``variant::*`` entry, so a
    port without relay does not need one line per rule per relay variant."""
    notes = {e.key: e.note for e in previous.entries}
    failures = collapse_capability(failures)
    # A flaky entry stays although this run happened to pass it: its next run may not.
    flaky = {e.key: e for e in previous.entries if e.flaky}
    for key, entry in flaky.items():
        failures.setdefault(key, (entry.reason, entry.note))
    document = {
        "port": port,
        "expected": [
            {"key": key, "reason": failures[key][0], "note": _note(notes.get(key) or failures[key][1])}
            | ({"flaky": True} if key in flaky else {})
            for key in sorted(failures)
        ],
    }
    header = f"# Known failures of port {port!r}, kept by the harness's ratchet.\n# Regenerate: {_one_line(regenerate)}\n"
    # tomli_w escapes every control character, so what it writes tomllib reads back.
    path.write_text(header + tomli_w.dumps(document, multiline_strings=False), encoding="utf-8")


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
