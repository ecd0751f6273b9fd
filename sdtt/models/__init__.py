"""Model providers behind one interface, addressed as ``provider/model``.

    from sdtt.models import get_model

    async with get_model("openai/gpt-4o-mini") as model:
        output = await model.generate(prompt)

Providers: ``mock`` (scripted, offline), ``openai`` (and OpenAI-compatible servers),
``anthropic`` and ``local`` (the embedded model). Their SDKs are imported on first use.
``Model`` adds the retry policy, a per-provider concurrency limit, timing and a usage
tally to every provider alike. ``sdtt models`` shows which providers work here.
"""

from sdtt.models.base import GenerateConfig, Generator, ModelAPI, ModelOutput, Prompt, Usage
from sdtt.models.mock import MockModelAPI, MockReply
from sdtt.models.model import CallRecord, Model
from sdtt.models.pool import ModelPool, NameCache
from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS, get_model
from sdtt.models.retry import RetryPolicy

__all__ = [
    "DEFAULT_MODEL",
    "PROVIDERS",
    "CallRecord",
    "GenerateConfig",
    "Generator",
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
