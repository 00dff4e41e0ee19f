"""Release history: run the conformance suite for one port over a range of its releases and
print, per rule, the releases where it passes and fails and where that changed (the table is
``reports/history_table.py``'s).

    python -m toolnexus_conformance.reports.history --port=python --releases=0.1.1..0.21.0
    python -m toolnexus_conformance.reports.history --port=golang --checkout=PATH --tags=v0.12.0..v0.16.0 -o docs/history-golang.md

python releases come from the package index (a private venv per version under the cache,
``toolnexus==X`` installed, the python shim started in it); golang and java releases are tags
of a git checkout the user gives (each tag exported with ``git archive`` into the cache and
built with ``--port-src``). A range ``A..B`` takes every release between A and B inclusive
(for python, as the index lists them; for tags, the tags with A's prefix); a comma list
takes exactly those. Each release runs without an expectations file; its report lands in
``<cache>/history/<port>/<release>/report.json`` and ``--reuse`` keeps an existing one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.helpers.paths import fixtures_dir, shims_dir
from toolnexus_conformance.reports.history_table import ReleaseResult, render
from toolnexus_conformance.reports.parity_summary import summarize
from toolnexus_conformance.shim.ports import cache_dir, load_registry

VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
COMPILER_ERROR = re.compile(r"\.(go|java):\d+")
ABSOLUTE_PATH = re.compile(r"/(?:[^\s/'\"():]+/)+([^\s/'\"():]*)")
# What a tag's build needs from the checkout (the port's folder; the CHANGELOG names the
# version): exporting only these is quicker and survives a mirror missing unrelated blobs.
TAG_PATHS = {"golang": ("golang", "CHANGELOG.md"), "golang-race": ("golang", "CHANGELOG.md"), "java": ("java", "CHANGELOG.md")}
TAG_PORTS = tuple(TAG_PATHS)
RUN_TIMEOUT = 3600


class HistoryError(HarnessError):
    """The releases cannot be listed or the options do not fit the port."""


def version_key(name: str) -> tuple[int, int, int]:
    found = VERSION.search(name)
    if found is None:
        raise HistoryError(f"{name!r} is not a release version (expected N.N.N)")
    return int(found[1]), int(found[2]), int(found[3])


def select(available: list[str], spec: str) -> list[str]:
    """The releases ``spec`` names (``A..B`` or ``A,B,...``), oldest first."""
    if ".." in spec:
        low, high = (part.strip() for part in spec.split("..", 1))
        found = VERSION.search(low)
        prefix = low[: found.start()] if found else ""
        lo, hi = version_key(low), version_key(high)
        chosen = [
            name for name in available
            if name.startswith(prefix) and VERSION.fullmatch(name[len(prefix):]) and lo <= version_key(name) <= hi
        ]  # fmt: skip
    else:
        chosen = [part.strip() for part in spec.split(",") if part.strip()]
        unknown = [name for name in chosen if name not in available]
        if unknown:
            raise HistoryError(f"not available: {', '.join(unknown)} (available: {', '.join(available)})")
    if not chosen:
        raise HistoryError(f"no release matches {spec!r} (available: {', '.join(available)})")
    return sorted(set(chosen), key=version_key)


def pypi_versions(package: str = "toolnexus") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = re.search(r"Available versions:\s*(.+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise HistoryError(f"cannot list {package}'s releases on the package index: {(done.stdout + done.stderr).strip()[-300:]}")
    return [v.strip() for v in found[1].split(",")]


def git_tags(checkout: Path) -> list[str]:
    done = subprocess.run(["git", "-C", str(checkout), "tag", "--list"], check=False, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise HistoryError(f"--checkout={checkout}: not a git repository with tags: {done.stderr.strip()}")
    return done.stdout.split()


def release_dir(port: str, release: str) -> Path:
    return cache_dir() / "history" / port / release.replace("/", "_")


def run_suite(port: str, release: str, selector: list[str], extra: list[str], env: dict[str, str] | None = None) -> tuple[int, str, Path]:
    """pytest for one release, isolated from any project's pytest settings."""
    work = release_dir(port, release)
    work.mkdir(parents=True, exist_ok=True)
    (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    report = work / "report.json"
    report.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", "-c", str(work / "pytest.ini"), "--rootdir", str(work), "-p", "no:cacheprovider",
            "-q", *selector, f"--conformance-report={report}", *extra]  # fmt: skip
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=RUN_TIMEOUT, env={**os.environ, **(env or {})})
    output = done.stdout + done.stderr
    (work / "pytest.log").write_text(f"$ {shlex.join(argv)}\n{output}", encoding="utf-8")
    return done.returncode, output, report


def python_release(release: str, extra: list[str], rules: list[dict], reuse: bool, also: tuple[str, ...] = ()) -> ReleaseResult:
    from toolnexus_conformance.builders.common import BuildError
    from toolnexus_conformance.builders.python_venv import build

    work = release_dir("python", release)
    if reuse and (work / "report.json").is_file():
        return from_report("python", release, work / "report.json", rules)
    work.mkdir(parents=True, exist_ok=True)
    requirements = work / "requirements.txt"
    # ``also`` pins what a release's open-ended dependencies have since broken (``mcp<2``).
    requirements.write_text("".join(f"{line}\n" for line in (f"toolnexus=={release}", *also)), encoding="utf-8")
    try:
        build(work / "venv", requirements)
    except BuildError as exc:
        return ReleaseResult(release, "cannot build", _first_error(str(exc)))
    argv = [str(work / "venv" / "bin" / "python"), str(shims_dir() / "python" / "shim.py")]
    broken = start_failure(argv)
    if broken:
        return ReleaseResult(release, "cannot run", f"the shim cannot start with it: {broken}")
    code, output, report = run_suite("python", release, [f"--port=python-{release}", f"--port-cmd={shlex.join(argv)}"], extra)
    return finish("python", release, code, output, report, rules)


def start_failure(argv: list[str]) -> str:
    """Why the shim dies before reading its first message (e.g. the release lacks a module
    the shim imports), or "" when it starts: 400 variants need not learn it one by one."""
    try:
        done = subprocess.run(argv, input="", check=False, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return scrub(str(exc))
    if done.returncode == 0:
        return ""
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return scrub(lines[-1] if lines else f"exit {done.returncode}, no output")


def scrub(text: str) -> str:
    """No machine path in a table meant for committing: a path keeps its file name only."""
    return ABSOLUTE_PATH.sub(lambda m: m[1], text)


def tag_release(port: str, checkout: Path, tag: str, extra: list[str], rules: list[dict], reuse: bool) -> ReleaseResult:
    work = release_dir(port, tag)
    if reuse and (work / "report.json").is_file():
        return from_report(port, tag, work / "report.json", rules)
    src = work / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    listed = subprocess.run(["git", "-C", str(checkout), "ls-tree", "--name-only", tag], check=False, capture_output=True, text=True, timeout=60)
    paths = [p for p in TAG_PATHS[port] if p in listed.stdout.split()]
    if port.split("-")[0] not in paths:
        return ReleaseResult(tag, "cannot build", f"tag {tag} has no {port.split('-')[0]}/ folder")
    archive = subprocess.run(["git", "-C", str(checkout), "archive", "--format=tar", tag, *paths], check=False, capture_output=True, timeout=300)
    if archive.returncode != 0:
        return ReleaseResult(tag, "cannot build", f"git archive {tag} failed: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True, timeout=300)
    env = {"TOOLNEXUS_CONFORMANCE_CACHE": str(work / "build")}
    code, output, report = run_suite(port, tag, [f"--port={port}", f"--port-src={src}"], extra, env)
    return finish(port, tag, code, output, report, rules)


def finish(port: str, release: str, code: int, output: str, report: Path, rules: list[dict]) -> ReleaseResult:
    if report.is_file():
        return from_report(port, release, report, rules)
    if "building port" in output:
        return ReleaseResult(release, "cannot build", _first_error(output))
    return ReleaseResult(release, "cannot run", f"pytest exit {code}: {_first_error(output)}")


def from_report(port: str, release: str, path: Path, rules: list[dict]) -> ReleaseResult:
    report = json.loads(path.read_text(encoding="utf-8"))
    summary = summarize(report, rules, rerun=f"python -m toolnexus_conformance.reports.history --port={port} --releases={release} --")
    advisory_passing = {row["rule"] for row in report.get("rules", []) if row.get("level") == "advisory" and row.get("pass")}
    result = ReleaseResult(release, "ok", library=str(report.get("library", "")), capabilities=list(report.get("capabilities", [])),
                           summary=summary, advisory_passing=advisory_passing)  # fmt: skip
    reasons = {f.reason for f in summary.failing}
    if not summary.passing and summary.failing and reasons <= {"transport"}:
        # Nothing passed and every failure is the shim dying: the release cannot run it.
        result.status, result.note = "cannot run", f"the shim fails: {transport_reason(report)}"
    return result


def transport_reason(report: dict) -> str:
    """The first thing that went wrong with the shim, not the restart budget it exhausted later."""
    texts = [str(f.get("observed", "")) for f in report.get("failures", {}).values() if f.get("reason") == "transport"]
    first = next((t for t in texts if "broke again" not in t), texts[0] if texts else "?")
    return scrub(first.split(" shim command:")[0].strip())[:200]


def _first_error(output: str) -> str:
    lines = [line.strip(" |") for line in output.splitlines() if line.strip(" |")]
    for pattern in (COMPILER_ERROR, re.compile(r"(?i)error")):
        hit = next((line for line in lines if pattern.search(line)), None)
        if hit:
            return scrub(hit)[:200]
    return scrub(lines[-1] if lines else "no output")[:200]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolnexus_conformance.reports.history", description=__doc__.splitlines()[0])
    parser.add_argument("--port", required=True, help="python (by PyPI version), golang or java (by git tag)")
    parser.add_argument("--releases", help="python: A..B or A,B,... (PyPI versions)")
    parser.add_argument("--with", dest="also", action="append", default=[], metavar="REQ",
                        help="python: one more requirement per venv, e.g. 'mcp<2' for releases whose open-ended dependency has since broken")
    parser.add_argument("--checkout", type=Path, help="golang/java: a git checkout (or mirror) holding the release tags")
    parser.add_argument("--tags", help="golang/java: A..B or A,B,... (tags)")
    parser.add_argument("-o", "--output", type=Path, help="also write the markdown table here")
    parser.add_argument("--reuse", action="store_true", help="keep a release's report already in the cache")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest options for every release")
    args = parser.parse_args(argv)
    rules = json.loads((fixtures_dir() / "rules.json").read_text(encoding="utf-8"))["rules"]
    try:
        if args.port == "python":
            if not args.releases:
                raise HistoryError("--port=python needs --releases=A..B (PyPI versions)")
            releases = select(pypi_versions(), args.releases)
            command = f"python -m toolnexus_conformance.reports.history --port=python --releases={args.releases}" + "".join(
                f" --with={shlex.quote(req)}" for req in args.also
            )

            def run(release: str) -> ReleaseResult:
                return python_release(release, args.pytest_args, rules, args.reuse, tuple(args.also))

        elif args.port in TAG_PORTS and args.port in load_registry():
            if not (args.checkout and args.tags):
                raise HistoryError(f"--port={args.port} needs --checkout=PATH (a git checkout with tags) and --tags=A..B")
            releases = select(git_tags(args.checkout), args.tags)
            command = f"python -m toolnexus_conformance.reports.history --port={args.port} --checkout=PATH/TO/toolnexus --tags={args.tags}"
            checkout = args.checkout.resolve()

            def run(release: str) -> ReleaseResult:
                return tag_release(args.port, checkout, release, args.pytest_args, rules, args.reuse)

        else:
            raise HistoryError(f"no release history for port {args.port!r}: python (PyPI versions), golang or java (git tags)")
    except HistoryError as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    results = []
    for release in releases:
        print(f"history: {args.port} {release} ...", file=sys.stderr, flush=True)
        result = run(release)
        print(f"history: {args.port} {release}: {result.status} {result.note}".rstrip(), file=sys.stderr, flush=True)
        results.append(result)
    table = render(args.port, results, rules, command=command)
    print(table)
    if args.output:
        args.output.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
