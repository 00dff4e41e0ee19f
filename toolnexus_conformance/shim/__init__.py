"""The shim process and how to talk to it: the port registry (:mod:`.ports`, ``ports.toml``),
starting a shim and its process tree, JSON-RPC over its stdio with callbacks, validation of
every message, and the session that restarts it.

How a shim process is started is one seam (:mod:`.launch`): a plain subprocess by default,
or, for the ports the registry marks ``launch = "forked"`` (the reference shims), forked from
a warm zygote (:mod:`.forked` on :mod:`.zygote` and :mod:`.fork_server`); :mod:`.launchers`
turns the registry's choice into a launcher and a session.
"""

__all__ = [
    "callbacks",
    "child",
    "fork_server",
    "forked",
    "launch",
    "launchers",
    "ports",
    "process",
    "process_tree",
    "session",
    "spawn",
    "stdin",
    "streams",
    "validation",
    "zygote",
]
