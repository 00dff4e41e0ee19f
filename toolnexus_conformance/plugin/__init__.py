"""The pytest plugin (the ``pytest11`` entry point is :mod:`.hooks`): command-line options,
session set-up, collecting scenario files as one item per variant, running and reporting an
item, judging the session as a whole at its end, and the cross-port resume items. It owns what is pytest-specific; what a verdict is
lives in :mod:`toolnexus_conformance.verdict`.
"""

__all__ = ["collection", "cross_hooks", "cross_item", "hooks", "items", "rerun", "session_end", "usage"]
