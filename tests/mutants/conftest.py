"""The mutation tests' shims: one series (the mutants' zygote and the baseline's) per test
module, stopped with it (``warm_shims``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kill_runner import MutantShims
from warm_shims import mutant_shims


@pytest.fixture(scope="module")
def shims() -> Iterator[MutantShims]:
    with mutant_shims() as started:
        yield started
