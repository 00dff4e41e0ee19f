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
from pathlib import Path

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
        # Only `*` is special: keys are full of brackets, which fnmatch would read as classes.
        pattern = ".*".join(re.escape(part) for part in self.key.split("*"))
        return re.fullmatch(pattern, key) is not None


@dataclass
class Expectations:
    path: Path | None
    entries: list[Entry] = field(default_factory=list)

    def lookup(self, key: str) -> Entry | None:
        exact = next((e for e in self.entries if not e.wildcard and e.key == key), None)
        found = exact or next((e for e in self.entries if e.wildcard and e.matches(key)), None)
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
        entries.append(Entry(key, reason, str(item.get("note", ""))))
    unknown = set(raw) - {"expected", "port"}
    if unknown:
        raise ExpectationsError(f"{path}: unknown top-level key(s) {sorted(unknown)}")
    return Expectations(path, entries)


def write(
    path: Path, port: str, failures: dict[str, tuple[str, str]], previous: Expectations, regenerate: str
) -> None:
    """Rewrite ``path`` from observed failures {key: (reason, one-line observation)}.

    A variant that failed only for a missing capability gets one ``variant::*`` entry, so a
    port without relay does not need one line per rule per relay variant."""
    notes = {e.key: e.note for e in previous.entries}
    failures = collapse_capability(failures)
    lines = [
        f"# Known failures of port {port!r}, kept by the harness's ratchet.",
        f"# Regenerate: {regenerate}",
        f'port = "{port}"',
        "",
    ]
    for key in sorted(failures):
        reason, observed = failures[key]
        note = notes.get(key) or observed
        lines += ["[[expected]]", f"key = {_toml_str(key)}", f"reason = {_toml_str(reason)}", f"note = {_toml_str(note)}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


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


def _toml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped[:300]}"'
