"""The bottom layer, importing nothing else of the package: JSON helpers (copying, type
names, the fast codec, the JSON-RPC message codec), where the data lives (:mod:`.paths`), the
error hierarchy, the JSON Schemas and their validation, and garbage-collector tuning for the
processes the harness owns.
"""

__all__ = [
    "errors",
    "fast_json",
    "gc_tuning",
    "json_copy",
    "json_types",
    "jsonrpc",
    "paths",
    "schema_fast",
    "schemas",
]
