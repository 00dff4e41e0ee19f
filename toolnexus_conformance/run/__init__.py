"""Running one scenario variant through a shim and recording what happened: the facts derived
from the scenario, the host's side of the callbacks, the run record, the observables a golden
compares and the value model they are written in, and the counterpart runs a relation needs.
"""

__all__ = ["counterparts", "facts", "host", "observables", "runner", "value_model"]
