"""Real provider APIs: paid, so skipped unless the key is set (``-m live_api`` selects them).

OPENAI_API_KEY=... python -m pytest tests/models/test_live_api.py -m live_api
"""

from __future__ import annotations

import os

import pytest

from sdtt.models import GenerateConfig, Prompt, get_model

pytestmark = pytest.mark.live_api

PROMPT = Prompt(
    instructions="You are a terse assistant. Answer with one word.",
    history="",
    dialogue="User: [2024-05-01 10:00:00] Say the word hello.",
    task="Answer now.",
)
CONFIG = GenerateConfig(max_tokens=20, timeout=60.0)


@pytest.mark.trio
@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY is not set")
async def test_openai_answers() -> None:
    name = os.environ.get("SDTT_LIVE_OPENAI_MODEL", "openai/gpt-4o-mini")
    async with get_model(name) as model:
        output = await model.generate(PROMPT, CONFIG)
    assert output.text.strip()
    assert output.usage.input_tokens > 0
    assert output.usage.output_tokens > 0


@pytest.mark.trio
@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY is not set")
async def test_anthropic_answers() -> None:
    name = os.environ.get("SDTT_LIVE_ANTHROPIC_MODEL", "anthropic/claude-haiku-4-5")
    async with get_model(name) as model:
        output = await model.generate(PROMPT, CONFIG)
    assert output.text.strip()
    assert output.usage.input_tokens > 0
    assert output.usage.output_tokens > 0
