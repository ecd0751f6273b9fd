"""The moderation hook of ``sdtt serve``: a message is checked against the spec's
``[chat] blocked_words`` and, when ``[moderation]`` names one, an OpenAI-compatible
moderation endpoint (``POST {base_url}/moderations``) before it is stored or shown.

The endpoint's key is read from the environment variable the spec names; it goes into
the request's header and nowhere else (not the event log, an export or an error). An
endpoint that fails (an HTTP error, no answer within the time limit, an answer that is
not a moderation result) never holds up or drops the chat: the message is delivered and
``moderation_unavailable`` recorded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Protocol

import trio

from sdtt.engine.virtual_clock import VirtualClock
from sdtt.errors import InputError
from sdtt.models.sdk import NO_KEY
from sdtt.serve.spec import Study, spec_line


def blocked_word(text: str, words: Sequence[str]) -> str | None:
    """The first of ``words`` that ``text`` contains as a whole word (any case), or None."""
    for word in words:
        if word.strip() and re.search(
            rf"(?<!\w){re.escape(word.strip())}(?!\w)", text, re.IGNORECASE
        ):
            return word
    return None


@dataclass(frozen=True)
class Screening:
    """What the moderation endpoint said of one message."""

    flagged: bool = False
    categories: tuple[str, ...] = ()
    """The categories it flagged (sorted)."""
    error: str | None = None
    """Why there is no answer (the message is delivered then); never the key."""


class ModerationClient(Protocol):
    """Asks a moderation service about one text."""

    async def classify(self, text: str) -> Screening:
        """The service's answer (an :attr:`Screening.error` when it has none)."""
        ...

    async def aclose(self) -> None:
        """Close its connections."""
        ...


class EndpointClient:
    """An OpenAI-compatible moderation endpoint, called through the ``openai`` SDK's
    async client (its retries off: a second try would only hold the message up)."""

    def __init__(self, base_url: str, model: str, key: str) -> None:
        import openai

        self.base_url = base_url
        self.model = model
        # An explicit key also keeps the SDK from sending OPENAI_API_KEY to another host.
        self._client = openai.AsyncOpenAI(api_key=key or NO_KEY, base_url=base_url, max_retries=0)

    def __repr__(self) -> str:
        return f"EndpointClient({self.base_url!r}, model={self.model!r})"  # never the key

    async def classify(self, text: str) -> Screening:
        """POST the text; any failure is an :attr:`Screening.error` naming its kind only
        (an error body may quote the request, key and all)."""
        import openai

        try:
            raw = await self._client.moderations.with_raw_response.create(
                model=self.model, input=text
            )
            body = raw.text
        except openai.APIStatusError as error:
            return Screening(error=f"HTTP {error.status_code}")
        except openai.APITimeoutError:
            return Screening(error="timed out")
        except openai.APIConnectionError:
            return Screening(error="could not connect")
        return parse_result(body)

    async def aclose(self) -> None:
        """Close the SDK client's connections."""
        await self._client.close()


def parse_result(body: str) -> Screening:
    """The first result of a moderation answer (``{"results": [{"flagged": ...,
    "categories": {...}}]}``), or an error if the body is not one."""
    try:
        result = json.loads(body)["results"][0]
        flagged = result["flagged"]
        categories = result.get("categories") or {}
        if not isinstance(flagged, bool) or not isinstance(categories, dict):
            raise TypeError
    except (ValueError, LookupError, TypeError, AttributeError):
        return Screening(error="not a moderation answer")
    named = sorted(str(name) for name, on in categories.items() if on is True)
    return Screening(flagged=flagged, categories=tuple(named))


Record = Callable[..., None]
"""The server's event log: ``record(kind, data, room=..., participant=...)``."""


class Screener:
    """Checks messages with a moderation client within a time limit, and records an
    endpoint that did not answer (``moderation_unavailable``)."""

    def __init__(self, client: ModerationClient, time_limit: float, record: Record) -> None:
        self.client = client
        self.time_limit = time_limit
        """Seconds on trio's clock (the study's; see :func:`open_screener`)."""
        self._record = record

    async def screen(
        self, text: str, *, sender: str, room: str | None, participant: str | None = None
    ) -> Screening:
        """The endpoint's verdict on ``text``; on an error or after the time limit, an
        unflagged :class:`Screening` whose ``error`` says why (and it is recorded)."""
        result = Screening(error=f"no answer within {self.time_limit:g} s")
        clock = trio.lowlevel.current_clock()
        # On a virtual clock (tests) the check takes real time, and the chat sees it: a
        # jump would reach the time limit while it waits, and the test measures the wait.
        real = clock.real_time() if isinstance(clock, VirtualClock) else nullcontext()
        with real, trio.move_on_after(self.time_limit):
            try:
                result = await self.client.classify(text)
            except Exception as error:  # a client bug must not drop the message either
                result = Screening(error=type(error).__name__)
        if result.error is not None:
            self._record(
                "moderation_unavailable",
                {"sender": sender, "error": result.error},
                room=room,
                participant=participant,
            )
        return result

    async def aclose(self) -> None:
        """Close the client."""
        with trio.CancelScope(shield=True):
            await self.client.aclose()


def moderation_key(study: Study) -> str:
    """The key of the spec's moderation endpoint, from the environment variable it
    names ('' when it names none); raises :class:`InputError` if that variable is unset."""
    name = study.spec.moderation.api_key_env
    if not name or not study.spec.moderation.base_url:
        return ""
    key = os.environ.get(name, "")
    if not key:
        field = "moderation.api_key_env"
        raise InputError(
            f"names the environment variable {name}, which is not set.",
            path=study.path,
            line=spec_line(study.path, field),
            field=field,
            hint=f"Set it to the moderation endpoint's key before starting: export {name}=...",
        )
    return key


def open_screener(
    study: Study, record: Record, client: ModerationClient | None = None
) -> Screener | None:
    """The screener of ``study``'s ``[moderation]`` endpoint (None when it has none).
    Its time limit is in real seconds, so it is stretched by the study's clock speed."""
    section = study.spec.moderation
    if not section.base_url and client is None:
        return None
    if client is None:
        client = EndpointClient(section.base_url, section.model, moderation_key(study))
    return Screener(client, section.time_limit * study.spec.chat.speed, record)
