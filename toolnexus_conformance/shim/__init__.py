"""The shim process and how to talk to it: the port registry (:mod:`.ports`, ``ports.toml``),
starting a shim and its process tree, JSON-RPC over its stdio with callbacks, validation of
every message, the session that restarts it, and the warm starts (zygote, fork server) the
reference shim can be launched with.
"""

__all__ = [
    "callbacks",
    "child",
    "fork_client",
    "fork_server",
    "forked",
    "ports",
    "process",
    "process_tree",
    "session",
    "spawn",
    "stdin",
    "streams",
    "validation",
    "warm_ports",
    "warm_session",
    "zygote",
]
