"""How fast this machine runs Python right now: the CPU time of one fixed pure-Python workload.

    python benchmarks/machine_speed.py [--rounds 5]

A script (and a function the other benchmarks call): it prints figures. On a shared container
the same work costs a different CPU time from one minute to the next (measured: 0.70 to 0.98 s
for the workload below, back to back), so a wall or CPU figure means little without the speed
it was measured at. Print the probe beside a figure, and compare figures taken at different
times by their ratio to it. The workload does what the harness does most: integer arithmetic in a
loop, building and reading a dict of string keys, and JSON round trips of a small object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

SAMPLE = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_0", "arguments": '{"city": "Oslo"}'}]}


def probe() -> float:
    """Milliseconds of this process's CPU time spent on the fixed workload."""
    began = time.process_time()
    total = 0
    for i in range(300_000):
        total += i * i % 7
    table = {str(i): i for i in range(60_000)}
    total += sum(table[str(i)] for i in range(0, 60_000, 3))
    for _ in range(3_000):
        total += len(json.loads(json.dumps(SAMPLE)))
    assert total > 0  # the work is used, so no future interpreter may skip it
    return 1000 * (time.process_time() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures = [probe() for _ in range(max(args.rounds, 1))]
    print(f"speed probe: median {statistics.median(figures):.0f} ms of CPU "
          f"(min {min(figures):.0f}, max {max(figures):.0f}, {len(figures)} rounds); lower is faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
