"""What /proc says about the processes a test started: children, descendants, command lines."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> set[int]:
    """The live children of ``pid`` (every thread's), zombies excluded."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.update(int(p) for p in task.read_text().split())
        except OSError:
            continue
    return {p for p in found if state(p) not in {"Z", "X", None}}


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children(todo.pop()) - found:
            found.add(child)
            todo.append(child)
    return found


def state(pid: int) -> str | None:
    """The process's state letter (R, S, Z, ...), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def cmdline(pid: int) -> list[str]:
    try:
        return [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []
