"""A fake OpenAI-compatible moderation endpoint (``POST /v1/moderations``).

By default a text is flagged when it contains one of ``flag_words`` (each word names the
category it flags), or any text once ``flag_all`` is set; ``enqueue`` scripted replies
(HTTP errors, delays, garbage bodies) to test the failure paths. With ``expected_key``
set, a request carrying another key gets a 401 whose message echoes the key it received,
as careless servers do: callers must not pass it on.

    with FakeModerationServer({"insult": "harassment"}) as server:
        client = EndpointClient(server.base_url, "omni-moderation-latest", key)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply
from tests.fakes.openai_fake import openai_error

CATEGORIES = ("harassment", "hate", "self-harm", "sexual", "violence")
"""Category names the fake reports (a subset of OpenAI's)."""


def moderation_result(flagged: Mapping[str, bool], model: str = "omni-moderation-latest") -> Any:
    """A moderation answer with one result; ``flagged`` maps category to flagged."""
    categories = {name: bool(flagged.get(name)) for name in CATEGORIES}
    return {
        "id": "modr-fake",
        "model": model,
        "results": [
            {
                "flagged": any(categories.values()),
                "categories": categories,
                "category_scores": {k: 0.9 if v else 0.01 for k, v in categories.items()},
            }
        ],
    }


class FakeModerationServer(FakeHTTPServer):
    """A fake moderation API on 127.0.0.1 with a free port."""

    def __init__(
        self,
        flag_words: Mapping[str, str] | None = None,
        *,
        latency: float = 0.0,
        expected_key: str | None = None,
    ) -> None:
        super().__init__(self._respond, latency=latency)
        self.flag_words = dict(flag_words or {})
        """Word (lower case) → the category a text containing it is flagged for."""
        self.expected_key = expected_key
        self.flag_all = False
        """Flag every text (for harassment), whatever its words."""

    @property
    def base_url(self) -> str:
        """The base URL to put in a study spec's ``[moderation] base_url``."""
        return f"{self.url}/v1"

    def inputs(self) -> list[str]:
        """The texts asked about so far, in order."""
        return [str(r.json()["input"]) for r in self.requests if r.path == "/v1/moderations"]

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        if request.path.rstrip("/") != "/v1/moderations":
            return openai_error(404, f"unknown path {request.path}", kind="invalid_request_error")
        if self.expected_key is not None:
            sent = request.headers.get("authorization", "").removeprefix("Bearer ")
            if sent != self.expected_key:
                return openai_error(
                    401, f"Incorrect API key provided: {sent}.", kind="invalid_request_error"
                )
        body = request.json()
        words = set(str(body.get("input", "")).lower().split())
        flagged = {category: True for word, category in self.flag_words.items() if word in words}
        if self.flag_all:
            flagged["harassment"] = True
        return ScriptedReply(body=moderation_result(flagged, str(body.get("model"))))
