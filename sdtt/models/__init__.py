"""Model providers behind one interface, addressed as ``provider/model``.

    from sdtt.models import get_model

    async with get_model("openai/gpt-4o-mini") as model:
        output = await model.generate(prompt)

Providers: ``mock`` (scripted, offline), ``openai`` (and OpenAI-compatible servers),
``anthropic`` and ``local`` (the embedded model). Their SDKs are imported on first use.
``Model`` adds the retry policy, a per-provider concurrency limit, timing and a usage
tally to every provider alike. ``sdtt models`` shows which providers work here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sdtt.models.base import (
        GenerateConfig,
        Generator,
        Image,
        ModelAPI,
        ModelOutput,
        Prompt,
        Usage,
    )
    from sdtt.models.mock import MockModelAPI, MockReply
    from sdtt.models.model import CallRecord, Model, get_model
    from sdtt.models.pool import ModelPool, NameCache
    from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS
    from sdtt.models.retry import RetryPolicy

_HOMES = {
    "GenerateConfig": "base",
    "Generator": "base",
    "Image": "base",
    "ModelAPI": "base",
    "ModelOutput": "base",
    "Prompt": "base",
    "Usage": "base",
    "MockModelAPI": "mock",
    "MockReply": "mock",
    "CallRecord": "model",
    "Model": "model",
    "ModelPool": "pool",
    "NameCache": "pool",
    "DEFAULT_MODEL": "registry",
    "PROVIDERS": "registry",
    "get_model": "model",
    "RetryPolicy": "retry",
}
"""Where each public name lives. They load on first use, so a command that needs only
the registry (as every parser does) does not import trio and the mock provider."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sdtt.models' has no attribute {name!r}")
    return getattr(importlib.import_module(f"sdtt.models.{home}"), name)


__all__ = [
    "DEFAULT_MODEL",
    "PROVIDERS",
    "CallRecord",
    "GenerateConfig",
    "Generator",
    "Image",
    "MockModelAPI",
    "MockReply",
    "Model",
    "ModelAPI",
    "ModelOutput",
    "ModelPool",
    "NameCache",
    "Prompt",
    "RetryPolicy",
    "Usage",
    "get_model",
]
