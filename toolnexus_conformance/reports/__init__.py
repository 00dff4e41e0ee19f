"""What a run leaves behind for people: the session's terminal summary and report files
(:mod:`.run_report`), the parity matrix and its HTML (``python -m
toolnexus_conformance.reports.parity``, ``.parity_html``) and the release history (``python -m
toolnexus_conformance.reports.history``). Reports read results; they judge nothing.
"""

__all__ = [
    "history",
    "history_table",
    "parity",
    "parity_cross",
    "parity_html",
    "parity_summary",
    "run_report",
]
