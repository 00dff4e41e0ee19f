"""The reference's error types: one base class, one subclass per kind of refusal.

Every refusal a user can cause (bad wire data, a bad toolkit, a bad resume, a provider
that answers with something that is not the contract) raises a subclass of
:class:`ToolnexusError` with a one-line message, so callers never see a deep traceback.
"""

from __future__ import annotations


class ToolnexusError(Exception):
    """Base of every error the reference raises on purpose."""


class WireError(ToolnexusError, ValueError):
    """A Request, Answer or other wire object is malformed."""


class ToolkitError(ToolnexusError):
    """A toolkit cannot be built (e.g. the relay collision guard)."""


class ResumeError(ToolnexusError):
    """An answer-carrying resume was refused (wrong answer id, no halted turn, …)."""


class ProviderError(ToolnexusError):
    """The provider answered with a non-2xx status or a body that is not the contract."""


class UnknownToolError(ToolnexusError):
    """The model called a tool the toolkit does not have."""
