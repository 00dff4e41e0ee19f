"""The parity report as one static HTML page: the rule x port matrix with filters (port,
rule family, level, status), each port's root causes first, every failing variant's minimal
diff, shim stderr tail and rerun command one click from its cell, and what moved since an
older set of reports.

    python -m toolnexus_conformance.reports.parity_html docs/parity/*.json -o parity.html [--against OLD.json ...]

It reads the JSON reports ``--conformance-report`` writes (the ones ``docs/parity.md`` is
built from; reports of cross-port resume runs are left out, as they are no port column).
Everything the page needs is in the file: the data as an inline JSON block, the CSS and the
script inline, no request to any server, so it opens from a CI artifact or a disk. Older
reports without the evidence/variants keys still render: their failures show the one-line
observation and a reproduce command built from the port's name.

The page is built here, in Python, as far as it can be (cells, statuses, groups, commands);
the script only shows, hides and fills in what the data says. A rule's status on a port:
``fail`` (a failure not in the port's expectations), ``known`` (only expected failures),
``gap`` (advisory differences), ``pass``, ``n/a`` (exercised, never applicable) or
``none`` (not exercised).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from toolnexus_conformance.helpers.paths import fixtures_dir
from toolnexus_conformance.reports.parity import PORT_ORDER
from toolnexus_conformance.reports.parity_summary import SOURCE_PLACEHOLDER, reproduce_command, source_ports

STATUSES = ("fail", "known", "gap", "pass", "n/a", "none")


def load_reports(paths: list[Path]) -> list[dict[str, Any]]:
    """The single-port reports among ``paths`` (cross-port resume reports are skipped)."""
    reports = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    return [r for r in reports if "crossResume" not in r]


def status(row: dict[str, Any] | None) -> str:
    if row is None:
        return "none"
    if row.get("fail"):
        return "fail"
    if row.get("expected"):
        return "known"
    if row.get("gap"):
        return "gap"
    if row.get("pass"):
        return "pass"
    return "n/a"


def cell_text(row: dict[str, Any] | None) -> str:
    if row is None:
        return "—"
    parts = []
    if row.get("fail"):
        parts.append(f"FAIL {row['fail']}")
    if row.get("pass"):
        parts.append(f"pass {row['pass']}")
    for reason, count in sorted((row.get("expectedByReason") or {}).items()):
        parts.append(f"xfail {count} ({reason})")
    if row.get("gap"):
        parts.append(f"gap {row['gap']}")
    return ", ".join(parts) or "n/a"


def _rerun_prefix(report: dict[str, Any], needs_source: frozenset[str]) -> str:
    selector = report.get("selector")
    if selector:
        expectations = report.get("expectations")
        extra = f" --expectations={shlex.quote(expectations)}" if expectations else ""
        return f"python -m pytest {selector}{extra}"
    source = f" --port-src={SOURCE_PLACEHOLDER}" if report["port"] in needs_source else ""
    return f"python -m pytest --port={report['port']}{source}"


def failures_of(report: dict[str, Any], needs_source: frozenset[str]) -> list[dict[str, Any]]:
    """Every failing key of a report, with what the page shows of it."""
    rows = {row["rule"]: row for row in report.get("rules", [])}
    variants: dict[str, Any] = report.get("variants", {})
    evidence: dict[str, list[str]] = report.get("evidence", {})
    prefix = _rerun_prefix(report, needs_source)
    out = []
    for key, failure in sorted(report.get("failures", {}).items()):
        node, _, rule = key.partition("::")
        row = rows.get(rule)
        context = variants.get(node, {})
        if row is not None and not row.get("fail"):
            known = True
        elif "variants" in report:
            known = node not in variants
        else:
            known = rule == "*"  # a capability entry: its rules count as expected failures
        observed = str(failure.get("observed", ""))
        rerun = context.get("rerun") or (
            reproduce_command(prefix, node, rule) if rule != "*" else f"{prefix} -k {shlex.quote(node)}"
        )
        out.append(
            {
                "key": key,
                "node": node,
                "rule": rule,
                "reason": str(failure.get("reason", "?")),
                "known": known,
                "observed": observed,
                "evidence": evidence.get(key) or [observed],
                "stderr": list(context.get("stderr", [])),
                "rerun": rerun,
            }
        )
    return out


def root_causes(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failures grouped by rule and what was observed (an expectations entry's note is that
    observation): the biggest groups first, new ones before known ones."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for failure in failures:
        group = groups.setdefault(
            (failure["rule"], failure["reason"], failure["observed"]),
            {
                "rule": failure["rule"],
                "reason": failure["reason"],
                "note": failure["observed"],
                "known": True,
                "keys": [],
            },
        )
        group["keys"].append(failure["key"])
        group["known"] = group["known"] and failure["known"]
    return sorted(groups.values(), key=lambda g: (g["known"], -len(g["keys"]), g["rule"], g["note"]))


def movement(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """What moved for one port between an older report and this one."""
    old_rows = {row["rule"]: row for row in old.get("rules", [])}
    new_rows = {row["rule"]: row for row in new.get("rules", [])}
    moved = []
    for rule in sorted(set(old_rows) | set(new_rows)):
        before, after = status(old_rows.get(rule)), status(new_rows.get(rule))
        if before != after:
            moved.append({"rule": rule, "before": before, "after": after})
    old_keys, new_keys = set(old.get("failures", {})), set(new.get("failures", {}))
    return {
        "library": [str(old.get("library", "?")), str(new.get("library", "?"))],
        "moved": moved,
        "added": sorted(new_keys - old_keys),
        "removed": sorted(old_keys - new_keys),
    }


def page_data(
    reports: list[dict[str, Any]], against: list[dict[str, Any]], sources: list[str], against_sources: list[str]
) -> dict[str, Any]:
    registry = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]
    needs_source = source_ports()
    ordered = sorted(reports, key=lambda r: (PORT_ORDER.index(r["port"]) if r["port"] in PORT_ORDER else 99, r["port"]))
    old_by_port = {r["port"]: r for r in against}
    ports = []
    for report in ordered:
        rows = {row["rule"]: row for row in report.get("rules", [])}
        failures = failures_of(report, needs_source)
        ports.append(
            {
                "port": report["port"],
                "library": str(report.get("library", "?")),
                "cells": {
                    rule["id"]: {"status": status(rows.get(rule["id"])), "text": cell_text(rows.get(rule["id"]))}
                    for rule in registry
                },
                "failures": failures,
                "causes": root_causes(failures),
                "stale": list(report.get("staleExpectations", [])),
                "diff": movement(report, old_by_port[report["port"]]) if report["port"] in old_by_port else None,
            }
        )
    return {
        "rules": [
            {"id": r["id"], "level": r["level"], "family": r["id"].split(".", 1)[0], "title": r.get("title", "")}
            for r in registry
        ],
        "ports": ports,
        "sources": sources,
        "against": against_sources,
    }


def render(data: dict[str, Any]) -> str:
    # "</" inside the JSON block would end the script element; JSON allows "<\/".
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return PAGE.replace("%%DATA%%", payload)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolnexus_conformance.reports.parity_html", description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JSON reports written by --conformance-report")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the HTML file to write")
    parser.add_argument(
        "--against", action="append", type=Path, default=[], help="an older report to compare with (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.output.suffix.lower() not in {".html", ".htm"}:
        print(f"parity_html: -o {args.output}: the page is HTML; name a .html file", file=sys.stderr)
        return 2
    try:
        reports = load_reports(args.reports)
        against = load_reports(args.against)
    except (OSError, json.JSONDecodeError, KeyError) as exc:
        print(f"parity_html: cannot read a report: {exc}", file=sys.stderr)
        return 2
    if not reports:
        print("parity_html: no single-port report among the files given", file=sys.stderr)
        return 2
    data = page_data(reports, against, [str(p) for p in args.reports], [str(p) for p in args.against])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(data), encoding="utf-8")
    print(
        f"parity_html: wrote {args.output} ({len(reports)} port(s){', compared with ' + str(len(against)) if against else ''})"
    )
    return 0


PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolnexus conformance: parity</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1rem 1.5rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 1.6rem; }
.filters { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .5rem; background: #f4f4f4; position: sticky; top: 0; z-index: 2; }
.filters label { white-space: nowrap; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eee; }
td.cell { cursor: default; font-size: 12px; white-space: nowrap; }
td.fail { background: #f8c9c4; cursor: pointer; font-weight: bold; }
td.known { background: #fbe7b5; cursor: pointer; }
td.gap { background: #dfe8f7; } td.pass { background: #d4efd4; } td.na { background: #f2f2f2; } td.none { color: #999; }
code, pre { font: 12px/1.35 ui-monospace, monospace; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; white-space: pre-wrap; margin: .3rem 0; }
#detail { border: 2px solid #555; padding: .5rem 1rem; margin: 1rem 0; background: #fff; }
#detail[hidden] { display: none; }
.cause { cursor: pointer; } .cause:hover { background: #f0f0ff; }
.new { color: #b00; font-weight: bold; } .muted { color: #666; }
button.copy { font-size: 11px; margin-left: .5rem; }
</style>
</head>
<body>
<h1>toolnexus conformance: rule × port</h1>
<p class="muted" id="sources"></p>
<div class="filters" id="filters">
  <span id="port-filter">Ports:</span>
  <label>Family <select id="family-filter"><option value="">all</option></select></label>
  <label>Level <select id="level-filter"><option value="">all</option><option>normative</option><option>advisory</option></select></label>
  <label>Status <select id="status-filter">
    <option value="">all</option><option value="any-failure">any failure</option><option value="fail">new failure</option>
    <option value="known">known failure</option><option value="gap">spec gap</option><option value="pass">pass</option>
    <option value="none">not exercised</option></select></label>
  <span id="shown" class="muted"></span>
</div>
<section id="detail" hidden></section>
<h2>Matrix</h2>
<table id="matrix"><thead></thead><tbody></tbody></table>
<div id="ports"></div>
<script type="application/json" id="data">%%DATA%%</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const CLASS = {"fail": "fail", "known": "known", "gap": "gap", "pass": "pass", "n/a": "na", "none": "none"};
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v); else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
function copyButton(text) {
  return el("button", {"class": "copy", "type": "button", "onclick": () => { if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {}); }}, "copy");
}
function variantBlock(f, open) {
  const box = el("details", {"class": "variant", "data-key": f.key});
  if (open) box.open = true;
  box.append(el("summary", {}, el("code", {}, f.node), " ", el("span", {"class": f.known ? "muted" : "new"}, f.known ? `known (${f.reason})` : `new (${f.reason})`), " — ", f.rule));
  box.append(el("div", {}, "diff:"), el("pre", {"class": "diff"}, f.evidence.join("\n")));
  if (f.stderr.length) box.append(el("div", {}, "shim stderr (tail):"), el("pre", {"class": "stderr"}, f.stderr.join("\n")));
  box.append(el("div", {}, "rerun:", copyButton(f.rerun)), el("pre", {"class": "rerun"}, f.rerun));
  return box;
}
function showDetail(title, failures) {
  const detail = document.getElementById("detail");
  detail.replaceChildren(el("h2", {}, title), el("button", {"type": "button", "id": "close-detail", "onclick": () => { detail.hidden = true; }}, "close"));
  failures.forEach((f, i) => detail.append(variantBlock(f, i === 0)));
  detail.hidden = false;
  detail.scrollIntoView({block: "nearest"});
}
function buildFilters() {
  const ports = document.getElementById("port-filter");
  for (const p of DATA.ports) {
    const box = el("input", {"type": "checkbox", "value": p.port, "class": "port-toggle"});
    box.checked = true;
    box.addEventListener("change", apply);
    ports.append(" ", el("label", {}, box, " " + p.port));
  }
  const families = [...new Set(DATA.rules.map(r => r.family))].sort();
  const family = document.getElementById("family-filter");
  for (const f of families) family.append(el("option", {"value": f}, f));
  for (const id of ["family-filter", "level-filter", "status-filter"]) document.getElementById(id).addEventListener("change", apply);
}
function buildMatrix() {
  const head = document.querySelector("#matrix thead");
  const row = el("tr", {}, el("th", {}, "rule"), el("th", {}, "level"));
  for (const p of DATA.ports) row.append(el("th", {"data-port": p.port, "title": p.library}, p.port));
  head.append(row);
  const body = document.querySelector("#matrix tbody");
  for (const rule of DATA.rules) {
    const tr = el("tr", {"data-rule": rule.id, "data-family": rule.family, "data-level": rule.level},
      el("td", {"title": rule.title}, el("code", {}, rule.id)), el("td", {}, rule.level));
    for (const p of DATA.ports) {
      const cell = p.cells[rule.id];
      const td = el("td", {"class": "cell " + CLASS[cell.status], "data-port": p.port, "data-status": cell.status}, cell.text);
      const failing = p.failures.filter(f => f.rule === rule.id);
      if (failing.length) {
        td.title = `${failing.length} failing variant(s): click for the diffs`;
        td.addEventListener("click", () => showDetail(`${rule.id} on ${p.port}: ${failing.length} failing variant(s)`, failing));
      }
      tr.append(td);
    }
    body.append(tr);
  }
}
function buildPorts() {
  const holder = document.getElementById("ports");
  for (const p of DATA.ports) {
    const section = el("section", {"class": "port", "data-port": p.port}, el("h2", {}, `${p.port} (${p.library})`));
    if (p.diff) section.append(diffBlock(p));
    const byKey = Object.fromEntries(p.failures.map(f => [f.key, f]));
    if (p.causes.length) {
      section.append(el("h3", {}, `Root causes (${p.causes.length}), new first, then by how many variants they fail`));
      const table = el("table", {"class": "causes"}, el("tr", {}, el("th", {}, "variants"), el("th", {}, "rule"), el("th", {}, "reason"), el("th", {}, "status"), el("th", {}, "what was observed")));
      for (const c of p.causes) {
        const tr = el("tr", {"class": "cause", "data-rule": c.rule},
          el("td", {}, c.keys.length), el("td", {}, el("code", {}, c.rule)), el("td", {}, c.reason),
          el("td", {"class": c.known ? "muted" : "new"}, c.known ? "known" : "new"), el("td", {}, c.note));
        tr.addEventListener("click", () => showDetail(`${c.rule} on ${p.port}: ${c.keys.length} variant(s) with one cause`, c.keys.map(k => byKey[k])));
        table.append(tr);
      }
      section.append(table);
    } else {
      section.append(el("p", {}, "No failing variant."));
    }
    if (p.stale.length) section.append(el("p", {"class": "new"}, `Stale expectations (match nothing): ${p.stale.join(", ")}`));
    holder.append(section);
  }
}
function diffBlock(p) {
  const d = p.diff;
  const box = el("div", {"class": "since"}, el("h3", {}, "Since the older report"));
  if (d.library[0] !== d.library[1]) box.append(el("p", {}, `library ${d.library[0]} → ${d.library[1]}`));
  if (!d.moved.length && !d.added.length && !d.removed.length) { box.append(el("p", {}, "Nothing moved.")); return box; }
  if (d.moved.length) {
    const ul = el("ul", {"class": "moved"});
    for (const m of d.moved) ul.append(el("li", {}, el("code", {}, m.rule), `: ${m.before} → ${m.after}`));
    box.append(el("p", {}, `${d.moved.length} rule(s) changed status:`), ul);
  }
  if (d.added.length) box.append(el("details", {}, el("summary", {}, `${d.added.length} failing key(s) added`), el("pre", {"class": "added"}, d.added.join("\n"))));
  if (d.removed.length) box.append(el("details", {}, el("summary", {}, `${d.removed.length} failing key(s) gone`), el("pre", {"class": "removed"}, d.removed.join("\n"))));
  return box;
}
function apply() {
  const ports = new Set([...document.querySelectorAll(".port-toggle")].filter(b => b.checked).map(b => b.value));
  const family = document.getElementById("family-filter").value;
  const level = document.getElementById("level-filter").value;
  const wanted = document.getElementById("status-filter").value;
  for (const node of document.querySelectorAll("#matrix [data-port], #ports section.port")) node.hidden = !ports.has(node.dataset.port);
  let shown = 0;
  for (const tr of document.querySelectorAll("#matrix tbody tr")) {
    const statuses = [...tr.querySelectorAll("td[data-port]")].filter(td => ports.has(td.dataset.port)).map(td => td.dataset.status);
    const matches = !wanted || statuses.some(s => wanted === "any-failure" ? (s === "fail" || s === "known") : s === wanted);
    const visible = (!family || tr.dataset.family === family) && (!level || tr.dataset.level === level) && matches;
    tr.hidden = !visible;
    if (visible) shown += 1;
  }
  document.getElementById("shown").textContent = `${shown} of ${DATA.rules.length} rules shown`;
}
document.getElementById("sources").textContent = `From ${DATA.sources.join(", ")}` + (DATA.against.length ? `; compared with ${DATA.against.join(", ")}` : "") + ". Click a FAIL or xfail cell for its variants' diffs, stderr and rerun commands.";
buildFilters();
buildMatrix();
buildPorts();
apply();
</script>
</body>
</html>
"""


if __name__ == "__main__":
    raise SystemExit(main())
