"""A fake OpenAI-compatible chat completions server (``POST /v1/chat/completions``).

Point the ``openai`` SDK (or ``sdtt``'s ``openai/...`` provider) at ``server.base_url``.
By default it answers every request with ``reply`` and a usage block counted in words;
``enqueue`` scripted replies (errors, 429 with ``retry-after``, malformed bodies) to test
failure paths. With ``expected_key`` set, a request carrying another key gets a 401 whose
message echoes the key it received, as careless servers do: callers must not leak it.

    with FakeOpenAIServer(reply="hi there", latency=0.2) as server:
        model = get_model("openai/gpt-test", base_url=server.base_url)

``reply=chatty_reply`` answers as ``mock/chatty`` would; ``jitter`` adds a random wait to
each answer, so a test sees a served model whose answers are fixed but whose latency
is not.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.mock import chatty_script
from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply

ReplyText = str | Callable[[Mapping[str, Any]], str]
"""A fixed reply, or a function of the decoded request body."""


def chat_completion(
    text: str,
    *,
    model: str = "gpt-test",
    prompt_tokens: int = 10,
    cached_tokens: int | None = 0,
    completion_tokens: int = 5,
) -> dict[str, Any]:
    """A chat completion response body with one choice.

    ``cached_tokens=None`` leaves ``prompt_tokens_details`` out, as llama.cpp's server does.
    """
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def openai_error(
    status: int,
    message: str = "scripted failure",
    *,
    kind: str = "server_error",
    headers: Mapping[str, str] | None = None,
) -> ScriptedReply:
    """An error reply in OpenAI's body format."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return ScriptedReply(status=status, body=body, headers=dict(headers or {}))


def rate_limited(retry_after: str = "1", *, header: str = "retry-after") -> ScriptedReply:
    """A 429 reply asking the client to wait ``retry_after`` (seconds, or ms for ``-ms``)."""
    return openai_error(
        429, "Rate limit reached: slow down.", kind="requests", headers={header: retry_after}
    )


def chatty_reply(body: Mapping[str, Any]) -> str:
    """What ``mock/chatty`` would answer to the chat completion request ``body``."""
    parts = {"system": "", "user": ""}
    for message in body["messages"]:
        parts[message["role"]] += str(message["content"])
    prompt = Prompt(instructions=parts["system"], task=parts["user"])
    return str(chatty_script()(prompt, GenerateConfig(seed=body.get("seed"))))


def _words(body: Mapping[str, Any]) -> int:
    messages = body.get("messages") or []
    return sum(len(str(m.get("content", "")).split()) for m in messages)


class FakeOpenAIServer(FakeHTTPServer):
    """A fake OpenAI chat completions API on 127.0.0.1 with a free port."""

    def __init__(
        self,
        reply: ReplyText = "Response: [2024-05-01 10:00:05] sounds good",
        *,
        latency: float = 0.0,
        jitter: float = 0.0,
        cached_tokens: int | None = 0,
        expected_key: str | None = None,
        prompt_tokens: int | None = None,
    ) -> None:
        super().__init__(self._respond, latency=latency)
        self.reply = reply
        self.jitter = jitter
        """Each answer waits a further random 0 to ``jitter`` seconds (unseeded)."""
        self._random = random.Random()
        self.cached_tokens = cached_tokens
        """Reported cached tokens; ``None`` reports no cache use at all (llama.cpp)."""
        self.expected_key = expected_key
        self.prompt_tokens = prompt_tokens
        """Input tokens to report instead of the words sent (a server that dropped some)."""

    @property
    def base_url(self) -> str:
        """The base URL to give an OpenAI client (ends in ``/v1``)."""
        return f"{self.url}/v1"

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        if request.path.rstrip("/") != "/v1/chat/completions":
            return openai_error(404, f"unknown path {request.path}", kind="invalid_request_error")
        if self.expected_key is not None:
            sent = request.headers.get("authorization", "").removeprefix("Bearer ")
            if sent != self.expected_key:
                return openai_error(
                    401, f"Incorrect API key provided: {sent}.", kind="invalid_request_error"
                )
        body = request.json()
        text = self.reply(body) if callable(self.reply) else self.reply
        return ScriptedReply(
            body=chat_completion(
                text,
                model=str(body.get("model", "gpt-test")),
                prompt_tokens=_words(body) if self.prompt_tokens is None else self.prompt_tokens,
                cached_tokens=self.cached_tokens,
                completion_tokens=len(text.split()),
            ),
            delay=self._random.uniform(0.0, self.jitter),
        )
