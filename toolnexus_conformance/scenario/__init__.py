"""Scenario files and what they say: loading and validating a scenario into its variants
(:mod:`.model`), how variants relate to each other (:mod:`.relations`) and the toolkit's
declared and builtin tool names (:mod:`.declarations`).
"""

__all__ = ["declarations", "model", "relations"]
