"""Provider wire styles: one module per style behind the :class:`Provider` protocol."""

from __future__ import annotations

from ..errors import ToolnexusError
from .anthropic import AnthropicProvider
from .base import Call, Provider, Turn
from .openai import OpenAIProvider

STYLES = ("openai", "anthropic")


def provider_for(style: str) -> Provider:
    """The provider for a style name; an unknown style is a one-line error."""
    if style == "openai":
        return OpenAIProvider()
    if style == "anthropic":
        return AnthropicProvider()
    raise ToolnexusError(f"unknown style {style!r} (expected one of: {', '.join(STYLES)})")


__all__ = ["STYLES", "Call", "Provider", "Turn", "provider_for"]
