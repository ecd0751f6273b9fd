"""A guard against sending unscrubbed private chats to a remote model provider.

Imported chat exports are scrubbed by default; a researcher may opt out with
``--no-scrub``. Such a persona still works everywhere, but each time it is about to go to
a provider outside this machine sdtt says so, once per persona and provider.
"""

from __future__ import annotations

import warnings

from sdtt.models.registry import provider_of
from sdtt.personas.persona import Persona


class PrivacyWarning(UserWarning):
    """Personal data is about to leave the machine."""


def is_unscrubbed_private(persona: Persona) -> bool:
    """True for a persona built from a personal export without scrubbing."""
    return persona.info.private and not persona.info.scrubbed


def warn_if_sent_remotely(persona: Persona, model_name: str) -> None:
    """Warn when an unscrubbed private persona is used with a remote provider."""
    provider = provider_of(model_name)
    if (provider is not None and provider.local) or not is_unscrubbed_private(persona):
        return
    warnings.warn(
        PrivacyWarning(
            f"persona '{persona.name}' was imported with --no-scrub, so its chats hold "
            f"unscrubbed personal data, and {model_name} sends them to a remote provider "
            "(unless its --base-url is on this machine). Re-import without --no-scrub "
            "unless the participants agreed to this."
        ),
        stacklevel=2,
    )
