"""A fake Anthropic Messages API (``POST /v1/messages``).

Point the ``anthropic`` SDK (or ``sdtt``'s ``anthropic/...`` provider) at
``server.base_url``. By default it answers with ``reply`` and a usage block counted in
words; when the request marks a block with ``cache_control`` and the same prompt up to
that block was seen before, its words are reported as ``cache_read_input_tokens`` (a
crude imitation of prompt caching). ``enqueue`` scripted replies to test failures.

    with FakeAnthropicServer(reply="hey") as server:
        model = get_model("anthropic/claude-test", base_url=server.base_url)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply

ReplyText = str | Callable[[Mapping[str, Any]], str]
"""A fixed reply, or a function of the decoded request body."""


def message(
    text: str,
    *,
    model: str = "claude-test",
    input_tokens: int = 10,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    output_tokens: int = 5,
) -> dict[str, Any]:
    """A Messages API response body holding one text block."""
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
            "output_tokens": output_tokens,
        },
    }


def anthropic_error(
    status: int,
    message: str = "scripted failure",
    *,
    kind: str = "api_error",
    headers: Mapping[str, str] | None = None,
) -> ScriptedReply:
    """An error reply in Anthropic's body format."""
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return ScriptedReply(status=status, body=body, headers=dict(headers or {}))


def rate_limited(retry_after: str = "1") -> ScriptedReply:
    """A 429 reply asking the client to wait ``retry_after`` seconds."""
    return anthropic_error(
        429,
        "Number of requests has exceeded your rate limit.",
        kind="rate_limit_error",
        headers={"retry-after": retry_after},
    )


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(item.get("text", item.get("content", ""))) for item in value)
    return 0


class FakeAnthropicServer(FakeHTTPServer):
    """A fake Anthropic Messages API on 127.0.0.1 with a free port."""

    def __init__(
        self,
        reply: ReplyText = "Response: [2024-05-01 10:00:05] sounds good",
        *,
        latency: float = 0.0,
        expected_key: str | None = None,
        string_system_only: bool = False,
    ) -> None:
        super().__init__(self._respond, latency=latency)
        self.reply = reply
        self.expected_key = expected_key
        self.string_system_only = string_system_only
        """Fail with HTTP 500 on a list of system blocks, as LiteLLM's proxy did in front
        of llama.cpp's server; such a stack also reports no cache use."""
        self._cached_prefixes: set[str] = set()

    @property
    def base_url(self) -> str:
        """The base URL to give an Anthropic client (the SDK adds ``/v1/messages``)."""
        return self.url

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        if request.path.split("?")[0].rstrip("/") != "/v1/messages":
            return anthropic_error(404, f"unknown path {request.path}", kind="not_found_error")
        if self.expected_key is not None:
            # The SDK sends the key as ``x-api-key`` or, in newer versions, as a bearer token.
            sent = request.headers.get("x-api-key") or request.headers.get(
                "authorization", ""
            ).removeprefix("Bearer ")
            if sent != self.expected_key:
                return anthropic_error(
                    401, f"invalid x-api-key: {sent}", kind="authentication_error"
                )
        body = request.json()
        if self.string_system_only:
            if isinstance(body.get("system"), list):
                return anthropic_error(500, "Internal Server Error: system must be a string")
            text = self.reply(body) if callable(self.reply) else self.reply
            total = _words(body.get("system")) + _words(body.get("messages", []))
            reply = message(text, input_tokens=total, output_tokens=len(text.split()))
            for field in ("cache_read_input_tokens", "cache_creation_input_tokens"):
                del reply["usage"][field]
            return ScriptedReply(body=reply)
        text = self.reply(body) if callable(self.reply) else self.reply
        cached, created = self._cache(body)
        total = _words(body.get("system")) + _words(body.get("messages", []))
        return ScriptedReply(
            body=message(
                text,
                model=str(body.get("model", "claude-test")),
                input_tokens=total - cached - created,
                cache_read_input_tokens=cached,
                cache_creation_input_tokens=created,
                output_tokens=len(text.split()),
            )
        )

    def _cache(self, body: Mapping[str, Any]) -> tuple[int, int]:
        """Words read from and written to the cache, as Anthropic counts them.

        Each ``cache_control`` mark caches the whole prompt up to the end of its block
        (system blocks, then the messages' blocks). The longest marked prefix seen before
        is read; the rest up to the last mark is written.
        """
        system = body.get("system") or []
        # A plain-string system prompt (what sdtt sends to non-Anthropic hosts) has no marks.
        blocks = [{"text": system}] if isinstance(system, str) else list(system)
        for item in body.get("messages", []):
            content = item.get("content")
            blocks.extend(content if isinstance(content, list) else [{"text": content}])
        prefix, words, cached, last = "", 0, 0, 0
        for block in blocks:
            prefix += "\x00" + str(block.get("text", ""))
            words += _words(block.get("text", ""))
            if block.get("cache_control"):
                last = words
                if prefix in self._cached_prefixes:
                    cached = words
                self._cached_prefixes.add(prefix)
        return cached, last - cached
