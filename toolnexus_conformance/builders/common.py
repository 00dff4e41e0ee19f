"""What the ports' build helpers share: their error type, running one build command, and
the command-line frame (parse arguments, build, print one line, exit 0 or 1).

A helper runs as its own process (``python -m toolnexus_conformance.builders.<name>``) from
a checkout or an installed wheel; of the rest of the package it needs only the port
registry's note prefix, the protocol by which a build step tells the registry what to show.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from toolnexus_conformance.shim.ports import NOTE_PREFIX

TAIL_LINES = 25  # enough of a compiler's or pip's output to show the first real error

NOTES_FILE = "build.notes"  # where a build keeps its notes, so a reused build says them again


def note(text: str) -> None:
    print(NOTE_PREFIX + text, flush=True)


def keep_notes(out: Path, notes: list[str]) -> None:
    """Say ``notes`` and keep them in ``out`` for the runs that reuse this build."""
    for text in notes:
        note(text)
    path = out / NOTES_FILE
    if notes:
        path.write_text("\n".join(notes) + "\n", encoding="utf-8")
    else:
        path.unlink(missing_ok=True)


def replay_notes(out: Path) -> None:
    """Say again the notes of the build kept in ``out`` (a run that reuses it)."""
    try:
        kept = (out / NOTES_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    for text in kept:
        if text.strip():
            note(text)


class BuildError(Exception):
    """A shim cannot be built; the first line of the message says what, for the user."""


def run_command(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    shown_as: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one build step. A failure raises BuildError naming the command (``shown_as``, else
    its command line and folder) and quoting the tail of what it printed."""
    shown = shown_as or shlex.join(argv) + (f" (in {cwd})" if cwd is not None else "")
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{shown} failed: {exc}") from None
    if done.returncode != 0:
        raise BuildError(f"{shown} failed (exit {done.returncode})\n{output_tail(done.stdout + done.stderr)}")
    return done


def output_tail(output: str) -> str:
    """The last lines a command printed, indented so they read as quoted output."""
    return "\n".join(f"  | {line}" for line in output.strip().splitlines()[-TAIL_LINES:])


def cli(
    name: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    build: Callable[[argparse.Namespace], str],
    argv: list[str] | None,
) -> int:
    """A helper's ``main``: parse ``argv``, run ``build`` (it returns what it did, in a few
    words), then print ``<name>: <that>`` and return 0, or on a BuildError print
    ``<name>: <message>`` on stderr and return 1."""
    parser = argparse.ArgumentParser(description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        done = build(args)
    except BuildError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    print(f"{name}: {done}")
    return 0
