"""``python -m toolnexus_conformance.differential``: the command line of the differential search.

This module owns the arguments, the exit status and what the search prints and writes: the
rule reach of the scenarios tried (differential/rules.py), and a find as a scenario citing
the rules it breaks, with its goldens and the pytest command that judges it
(differential/finds.py). The search itself is differential/pool.py (workers, each running
ahead on its shim pairs, differential/ahead.py), or differential/known.py with ``--expectations``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from contextlib import ExitStack
from pathlib import Path

from toolnexus_conformance.differential.finds import pytest_command, write_find
from toolnexus_conformance.differential.pool import DEFAULT_PAIRS, SearchResult, default_workers, search
from toolnexus_conformance.differential.rules import RELATIONS
from toolnexus_conformance.differential.search import Features, shim_for
from toolnexus_conformance.fake_provider import FakeProvider
from toolnexus_conformance.helpers.errors import HarnessError
from toolnexus_conformance.shim.ports import ResolvedPort, resolve

DESCRIPTION = "Differential runs: generated scenarios, run through two ports, compared observable by observable."
EXIT_CODES = """exit status: 0 the ports agree on every generated scenario; 1 they differ (the minimal
scenario is written to --out); 2 usage or harness error (a shim that cannot start, a build
that fails); 130 interrupted."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolnexus_conformance.differential", description=DESCRIPTION,
                                     epilog=EXIT_CODES)
    parser.add_argument("--port", help="registry name of the port under test")
    parser.add_argument("--port-cmd", help="command line of an ad-hoc shim (instead of --port)")
    parser.add_argument("--port-src", help="a toolnexus checkout, for a port that builds from one")
    parser.add_argument("--against", default="reference", help="registry name of the expected port")
    parser.add_argument("--examples", type=int, default=50, help="how many scenarios to try")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes, each with its own shim pairs (default: the number of cores); "
                             "the scenarios tried depend on it, never on timing")
    parser.add_argument("--pairs", type=int, default=None,
                        help=f"shim pairs per worker, each running one scenario at a time (default: {DEFAULT_PAIRS}); "
                             "the difference reported does not depend on it")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder the minimal failing scenario goes in")
    parser.add_argument("--expectations", type=Path,
                        help="the port's expectations file: skip differences it explains and search on (differential/known.py)")
    parser.add_argument("--shrink-budget", type=int, default=200,
                        help="shrink candidates one find may run (with --expectations: port runs one shrink may spend)")
    args = parser.parse_args(argv)
    if not args.port and not args.port_cmd:
        parser.error("give --port=NAME or --port-cmd=COMMAND")
    if args.examples < 1 or (args.workers is not None and args.workers < 1) or (args.pairs is not None and args.pairs < 1):
        parser.error("--examples, --workers and --pairs must be at least 1")
    try:
        return _search(args)
    except HarnessError as exc:
        print(f"differential: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("differential: interrupted; nothing written", file=sys.stderr)
        return 130


def _search(args: argparse.Namespace) -> int:
    if args.expectations is not None:
        return _search_past_known(args)

    under_test = resolve(args.port, args.port_cmd, args.port_src, None)
    expected = resolve(args.against, None, None, None)
    label = args.port or shlex.split(args.port_cmd)[-1]
    result = search(expected, under_test, examples=args.examples, workers=args.workers or default_workers(),
                    pairs=args.pairs or DEFAULT_PAIRS, shrink_budget=args.shrink_budget)
    pace = f"{result.workers} worker{'s' if result.workers > 1 else ''}, {result.seconds:.1f} s, {result.rate:.1f} scenarios/s"
    for line in result.reach.render():
        print(line)
    if result.found is None:
        print(f"differential: {label} and {args.against} agree on {result.tried} generated scenarios ({pace})")
        return 0
    pace = f"{result.tried} scenarios run, shrinking included; {pace}"
    path = _write_find(args, result, label, expected)
    print(f"differential: {label} differs from {args.against} under {', '.join(result.rules)}; "
          f"minimal scenario written to {path} ({pace})")
    for line in result.failures:
        print(line)
    port_args = [f"--port={args.port}"] if args.port else [f"--port-cmd={args.port_cmd}"]
    port_args += [f"--port-src={args.port_src}"] if args.port_src else []
    print(f"judge it: {pytest_command(path, port_args)}")
    return 1


def _write_find(args: argparse.Namespace, result: SearchResult, label: str, expected: ResolvedPort) -> Path:
    """The find as a scenario citing the rules it breaks, with its goldens from the expected
    port (differential/finds.py)."""
    assert result.found is not None
    cited = [r for r in result.rules if r not in RELATIONS]  # the comparison is the goldens'
    scenario = {**result.found, "rules": list(dict.fromkeys([*result.found["rules"], *cited]))}
    with ExitStack() as stack:
        provider = FakeProvider().start()
        stack.callback(provider.stop)
        return write_find(scenario, port=label, against=args.against, rule=", ".join(result.rules), reason="differential",
                          expected=shim_for(expected, stack), provider=provider, out=args.out)


def _search_past_known(args: argparse.Namespace) -> int:
    """The search that skips what the expectations explain runs in this one process: it
    shrinks each new kind as it meets it, which the worker pool does not do."""
    if args.workers not in (None, 1):
        print("differential: --expectations searches in one process; --workers is ignored", file=sys.stderr)
    from toolnexus_conformance.differential.known import run_known  # it imports this module

    with ExitStack() as stack:
        under_test = shim_for(resolve(args.port, args.port_cmd, args.port_src, None), stack)
        expected = shim_for(args.against, stack)
        features = Features.shared_by(under_test, expected)
        provider = FakeProvider().start()
        stack.callback(provider.stop)
        label = args.port or shlex.split(args.port_cmd)[-1]
        return run_known(args, expected, under_test, features, provider, label)
