"""A spawn the OS refuses transiently is retried; a lasting refusal is reported at once."""

from __future__ import annotations

import errno

import pytest

from toolnexus_conformance.shim.spawn import with_spawn_retry


def flaky(failures: list[int]):
    calls: list[int] = []

    def spawn() -> str:
        calls.append(1)
        if failures:
            code = failures.pop(0)
            raise OSError(code, "refused")
        return "started"

    return spawn, calls


def test_transient_refusal_is_retried() -> None:
    spawn, calls = flaky([errno.EFAULT, errno.EAGAIN])
    assert with_spawn_retry(spawn, pause=0) == "started"
    assert len(calls) == 3


def test_lasting_refusal_fails_at_once() -> None:
    spawn, calls = flaky([errno.ENOENT])
    with pytest.raises(FileNotFoundError):
        with_spawn_retry(spawn, pause=0)
    assert len(calls) == 1


def test_transient_refusal_gives_up_after_the_attempts() -> None:
    spawn, calls = flaky([errno.EFAULT] * 5)
    with pytest.raises(OSError, match="refused"):
        with_spawn_retry(spawn, attempts=3, pause=0)
    assert len(calls) == 3
