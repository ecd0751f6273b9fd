"""Image input: the request bodies of OpenAI and Anthropic carry a prompt's images in
each API's own format (checked on the local HTTP fakes), and a text-only provider is
refused before any call."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from sdtt.errors import ConfigError
from sdtt.models import GenerateConfig, Prompt, get_model
from sdtt.models.anthropic_api import CACHE_MARKS_ENV
from sdtt.models.base import Image
from sdtt.models.registry import PROVIDERS, require_image_input
from tests.fakes.anthropic_fake import FakeAnthropicServer
from tests.fakes.openai_fake import FakeOpenAIServer

PNG = b"\x89PNG\r\n\x1a\nnot-really-a-png-but-bytes-all-the-same"
IMAGE = Image(PNG, "image/png", name="0001.png")
PROMPT = Prompt(
    instructions="Describe all the important parts of the scene.",
    task="Write one caption.",
    images=(IMAGE,),
)
FAST = GenerateConfig(timeout=5.0, max_tokens=40)


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield


@pytest.mark.trio
async def test_openai_gets_the_image_as_a_data_uri_part(no_env: None) -> None:
    with FakeOpenAIServer(reply="A dog on a porch.") as server:
        async with get_model("openai/gpt-test", base_url=server.base_url) as model:
            output = await model.generate(PROMPT, FAST)
        body = server.requests[0].json()
    assert output.text == "A dog on a porch."
    user = body["messages"][-1]
    assert user["role"] == "user"
    image_part, text_part = user["content"]
    assert image_part["type"] == "image_url"
    url = image_part["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    assert base64.b64decode(url[len(prefix) :]) == PNG
    assert text_part == {"type": "text", "text": "Write one caption."}
    # The file's name is ours, never sent.
    assert "0001.png" not in server.requests[0].body.decode()


@pytest.mark.trio
@pytest.mark.parametrize("marks", ["1", "0"])
async def test_anthropic_gets_a_base64_image_block_before_the_text(
    no_env: None, monkeypatch: pytest.MonkeyPatch, marks: str
) -> None:
    monkeypatch.setenv(CACHE_MARKS_ENV, marks)
    with FakeAnthropicServer(reply="A dog on a porch.") as server:
        async with get_model("anthropic/claude-test", base_url=server.base_url) as model:
            output = await model.generate(PROMPT, FAST)
        body = server.requests[0].json()
    assert output.text == "A dog on a porch."
    (message,) = body["messages"]
    image_block, text_block = message["content"]
    assert image_block["type"] == "image"
    assert image_block["source"]["type"] == "base64"
    assert image_block["source"]["media_type"] == "image/png"
    assert base64.b64decode(image_block["source"]["data"]) == PNG
    assert text_block["type"] == "text"
    assert text_block["text"] == "Write one caption."


@pytest.mark.trio
async def test_text_prompts_keep_their_plain_string_content(no_env: None) -> None:
    with FakeOpenAIServer(reply="hi") as server:
        async with get_model("openai/gpt-test", base_url=server.base_url) as model:
            await model.generate(Prompt(instructions="x", task="Say hi."), FAST)
        assert server.requests[0].json()["messages"][-1]["content"] == "Say hi."


@pytest.mark.trio
async def test_a_text_only_provider_is_refused_before_any_call() -> None:
    async with get_model("eliza/classic") as model:
        with pytest.raises(ConfigError, match=r"eliza/classic cannot be shown images.*openai"):
            await model.generate(PROMPT, FAST)
        assert model.calls == 0


def test_the_registry_says_which_providers_take_images() -> None:
    takes = {name for name, provider in PROVIDERS.items() if provider.image_input}
    assert {"openai", "anthropic"} <= takes
    assert "local" not in takes and "eliza" not in takes
    require_image_input("openai/gpt-4o-mini")
    with pytest.raises(ConfigError, match="local/gemma-3-270m cannot be shown images"):
        require_image_input("local/gemma-3-270m")
    with pytest.raises(ConfigError, match="nosuch/model"):
        require_image_input("nosuch/model")
