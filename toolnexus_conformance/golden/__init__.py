"""Goldens and the comparison against them: reading and writing golden files, the
normalization table (data in fixtures/normalization.json) and the normalization it drives,
and the comparison of observables with its readable diff.
"""

__all__ = ["compare", "files", "normalize", "normtable"]
