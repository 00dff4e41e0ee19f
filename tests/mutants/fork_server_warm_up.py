"""Imported by the fork server of ``forked_pytest.pool`` only (its preload): warms it up.

A module of its own because the fork server can only be told which modules to import; a
failed warm-up leaves a slower start, never a wrong run, so it is not fatal here.
"""

from __future__ import annotations

import sys

import forked_pytest

try:
    forked_pytest.warm_up()
except Exception as exc:  # noqa: BLE001 - the runs themselves report any real problem
    print(f"fork server warm-up failed (runs start cold): {exc!r}", file=sys.stderr)
