"""Compact JSON on the run path, through orjson wherever its answer is the stdlib's.

Every JSON-RPC line and streamed event of a run is encoded at least once, and every line a
shim writes is decoded; with the stdlib's ``json`` that is a large share of a differential
scenario's CPU (``benchmarks/differential_throughput.py``). orjson does the
same work in C, but its answers differ from the stdlib's at the edges:

- decoding, it reads an integer beyond 64 bits as a float, and refuses lone surrogates, an
  overflowing number (``1e400``) and the non-JSON constants (``NaN``, ``Infinity``) that
  ``json.loads`` reads. So orjson decodes only a line it would have written itself
  (:func:`canonical`), or a text with no run of 19 digits that it accepts (:func:`loads`);
  anything else goes to the stdlib;
- encoding, it refuses keys that are not strings and integers beyond 64 bits (:func:`dumps`
  then asks the stdlib), and writes a float NaN or infinity as ``null`` where the stdlib
  writes ``NaN``. No such float reaches an encoder here: scenario files refuse the constants
  when they are read (``scenario.read_json_file``), a shim's lines when they are parsed
  (``jsonrpc.parse_message``), and the differential's generator draws no floats.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON (no spaces, non-ASCII kept): what
    ``json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()`` gives, up to
    how a float is spelled (``1e-05`` there, ``0.00001`` here)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def canonical(line: bytes) -> Any | None:
    """The value on ``line`` when the line is exactly its compact encoding (a trailing
    newline apart), else None. Such a line holds no duplicate key (an object decoded from it
    has none to write back) and no integer beyond 64 bits (orjson reads one as a float, and
    writes it back as a float)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if orjson.dumps(value) == line.rstrip(b"\r\n") else None


def loads(data: bytes) -> Any:
    """What ``json.loads`` reads from UTF-8 ``data``; raises ValueError where it does."""
    if _LONG_DIGITS.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the stdlib reads some of what orjson refuses, and says why it refuses the rest
    return json.loads(data.decode("utf-8"))


_LONG_DIGITS = re.compile(rb"\d{19}")  # maybe an integer beyond 64 bits (the largest has 20 digits)
