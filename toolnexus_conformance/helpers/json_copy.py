"""Deep copies of decoded JSON data, for the run path.

Every run copies what it hands on or keeps (a resume's pending Request and history, the
store's transcripts, the host's logs), so that no later change to one can reach another.
``copy.deepcopy`` is general and slow; JSON data (dicts, lists, strings, numbers, booleans,
None, and the tuples the harness builds itself) round-trips exactly through ``marshal``,
in C. Anything marshal refuses (a subclass such as an OrderedDict) goes to ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
import marshal
from typing import Any, TypeVar, cast

T = TypeVar("T")


def copy_json(value: T) -> T:
    """A deep copy of ``value``: equal, of the same types, sharing no container with it."""
    try:
        return cast(T, marshal.loads(marshal.dumps(cast(Any, value))))
    except ValueError:  # not plain data all the way down
        return copy.deepcopy(value)
