"""What the providers built on an official SDK share (``openai``, ``anthropic``).

Both read a key from an environment variable (or need none for a ``base_url`` server),
import their SDK only when used, create one async client with the SDK's own retries off
(``max_retries=0``: :class:`sdtt.models.Model` applies the one retry policy) and map the
SDK's exceptions to the typed errors of :mod:`sdtt.errors`. The key never appears in a
``repr``, an error or a log: provider messages are scrubbed of it, and the SDK's
exceptions (whose text may quote a response body) are never chained to ours.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from importlib import metadata, util
from typing import Any, ClassVar, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

from sdtt.errors import (
    AuthenticationError,
    ConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.cpu_hold import CpuHold
from sdtt.models.retry import error_for_status, parse_retry_after, provider_message, scrub
from sdtt.redact import redact_url

NO_KEY = "not-needed"
"""Sent to a ``base_url`` server given no key of its own; local servers ignore the key."""


class Closable(Protocol):
    """An SDK client: all the shared code needs of it beyond the calls is ``close``."""

    async def close(self) -> None:
        """Close the client's HTTP connections."""
        ...


ClientT = TypeVar("ClientT", bound=Closable)
T = TypeVar("T")


def import_sdk(package: str) -> Any:
    """The SDK module ``package``, or a :class:`ProviderUnavailableError` saying how to get it."""
    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise ProviderUnavailableError(
            f"The {package} provider needs the '{package}' package ({error.msg}). "
            f"Install it with: pip install {package}"
        ) from None


def count(value: object) -> int:
    """A token count from a provider's usage, or 0 when it is missing or not a count."""
    return value if isinstance(value, int) and value > 0 else 0


def reported_count(value: object) -> int | None:
    """A token count the provider may leave out: ``None`` (unknown) when it did."""
    return value if isinstance(value, int) and value >= 0 else None


class SdkAPI(ABC, Generic[ClientT]):
    """A provider that calls its API through the official SDK's async client.

    Subclasses name their SDK and environment in the class variables and write
    ``request`` (the call's keyword arguments), ``_call`` (the SDK call) and
    ``output_of`` (the SDK's answer as a :class:`ModelOutput`).
    """

    package: ClassVar[str]
    """The SDK's import name, also the provider's name (``openai``)."""
    client_class: ClassVar[str]
    """The SDK's async client class (``AsyncOpenAI``)."""
    key_env: ClassVar[str]
    base_url_env: ClassVar[str]
    own_hosts: ClassVar[frozenset[str]]
    """The provider's own API hosts: the only ones its ``key_env`` key is sent to."""
    no_key_hint: ClassVar[str]
    """What to do when the key is missing, after saying so."""
    service: ClassVar[str]
    """The provider's own API, as named in errors (``the OpenAI API``)."""
    reply_kind: ClassVar[str]
    """What a valid answer is, as named in errors (``a chat completion``)."""
    base_url_hint: ClassVar[str]
    """What a ``--base-url`` must point to, as said in errors about malformed answers."""

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key_env: str | None = None
    ) -> None:
        self.name = f"{self.package}/{model}"
        self.model = model
        self.base_url = base_url or os.environ.get(self.base_url_env) or None
        if self.base_url is not None:
            check_url(self.base_url, self.name)
        self._key = self._choose_key(api_key_env)
        self._client: ClientT | None = None
        self._cpu = CpuHold()
        import_sdk(self.package)

    def _choose_key(self, api_key_env: str | None) -> str:
        # The provider's key goes to the provider only: a --base-url elsewhere (a local
        # server, a colleague's proxy, a typo) gets the key the user named for it, or none.
        self._key_env = api_key_env
        if api_key_env is not None:
            key = os.environ.get(api_key_env, "")
            if not key:
                raise ConfigError(
                    f"{self.name}: --api-key-env names {api_key_env}, but that environment "
                    "variable is not set."
                )
            return key
        if self.base_url is not None and not is_own_host(self.base_url, self.own_hosts):
            return NO_KEY
        key = os.environ.get(self.key_env, "")
        if not key:
            raise ProviderUnavailableError(
                f"{self.name}: the {self.key_env} environment variable is not set. "
                f"{self.no_key_hint}"
            )
        return key

    def __repr__(self) -> str:
        # Never show the key (or a password in the URL), even in a debugger or a log.
        return f"{type(self).__name__}({self.name!r}, base_url={self._where()!r})"

    def _get_client(self) -> ClientT:
        # Created on first use, inside the trio run that uses it. An explicit api_key
        # also stops the SDK from looking for profiles or other credentials on disk. The
        # SDK's own HTTP client class keeps its defaults (timeouts, keep-alive) but has
        # no cap on connections: Model's limit already bounds the calls in flight, and a
        # call keeping the hold while it waited for a pooled connection could wait for
        # good (the calls holding the connections need the hold to finish).
        client = self._client
        if client is None:
            sdk = import_sdk(self.package)
            limits = sdk.DEFAULT_CONNECTION_LIMITS
            http_client = sdk.DefaultAsyncHttpxClient(
                limits=type(limits)(
                    max_connections=None,
                    max_keepalive_connections=limits.max_keepalive_connections,
                    keepalive_expiry=limits.keepalive_expiry,
                ),
                event_hooks={"request": [self._cpu.before_sending]},
            )
            client = getattr(sdk, self.client_class)(
                api_key=self._key, base_url=self.base_url, max_retries=0, http_client=http_client
            )
            self._client = client
        return client

    @abstractmethod
    def request(self, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """The keyword arguments of the API call for ``prompt``."""

    @abstractmethod
    async def _call(self, client: ClientT, kwargs: dict[str, Any], timeout: float) -> Any:
        """The SDK call with ``kwargs``; its exceptions are mapped by ``generate``."""

    @abstractmethod
    def output_of(self, answer: Any) -> ModelOutput:
        """The SDK's answer as a ``ModelOutput``; a :class:`ProviderError` if it is not one.

        ``generate`` reads its own call's answer with it; a batch backend reads each
        answer of a batch (the same object, validated from the batch's results) alike."""

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """One API call; typed errors on failure."""
        # The call's own CPU work (building the request, reading and parsing the answer)
        # runs while it has this client's CPU hold, so concurrent calls do not interleave it.
        await self._cpu.take()
        try:
            kwargs = self.request(prompt, config)
            answer = await self.call(
                lambda client: self._call(client, kwargs, config.timeout), config.timeout
            )
            return self.output_of(answer)
        finally:
            self._cpu.give()

    async def call(self, operation: Callable[[ClientT], Awaitable[T]], timeout: float) -> T:
        """One request through the SDK's client, its errors mapped to typed errors.

        ``generate`` makes its chat call through here; a batch API's uploads, polls and
        downloads do too, so they fail (and are retried by ``Model.call``) alike, with
        the provider's own message kept. ``timeout`` is only named in timeout errors.
        """
        sdk = import_sdk(self.package)
        client = self._get_client()
        failure: ProviderError | None = None
        try:
            return await operation(client)
        except sdk.APITimeoutError:
            failure = ProviderTimeoutError(f"{self.name}: no answer within {timeout:g} s.")
        except sdk.APIConnectionError as error:
            failure = ProviderConnectionError(
                f"{self.name}: {self._where()} hung up before its answer was complete; "
                "check the server's log (it may have crashed or hit a proxy's time limit)."
                if _cut_off(error)
                else f"{self.name}: could not reach {self._where()}; check the network "
                "or that the server is running."
            )
        except sdk.APIStatusError as error:
            if error.status_code in (401, 403) and self._key == NO_KEY:
                failure = self._unauthorised(error.status_code)
            else:
                failure = error_for_status(
                    error.status_code,
                    self.name,
                    scrub(provider_message(error.body), [self._key]),
                    key_env=self._key_env or self.key_env,
                    retry_after=parse_retry_after(error.response.headers),
                )
        except (sdk.APIResponseValidationError, ValueError):
            failure = self._malformed("the body is not valid JSON")
        # Raised here, outside the except blocks, so the SDK's exception (whose text may
        # quote a response body) is not chained to ours.
        raise failure

    def _unauthorised(self, status: int) -> ProviderError:
        # No key went to this server (sdtt sends the provider's key to its own hosts
        # only), so naming that key's variable would send the user the wrong way.
        return AuthenticationError(
            f"{self.name}: {self._where()} wants an API key (HTTP {status}), and none was "
            f"sent ({self.key_env} goes only to {', '.join(sorted(self.own_hosts))}). Put "
            "this server's key in an environment variable and name it with --api-key-env."
        )

    def _malformed(self, why: str) -> ProviderError:
        return ProviderError(
            f"{self.name}: the answer from {self._where()} is not {self.reply_kind} "
            f"({why}). If you passed --base-url, check that {self.base_url_hint}."
        )

    def _where(self) -> str:
        return redact_url(self.base_url) if self.base_url else self.service

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def check_url(url: str, name: str) -> None:
    """A :class:`ConfigError` unless ``url`` is an http(s) URL with a host and a numeric
    port, said without the password (the HTTP library's own error would quote it)."""
    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when the port is not a number
    except ValueError:
        problem = "its port is not a number"
    else:
        if parts.scheme.lower() not in ("http", "https"):
            problem = "it does not start with http:// or https://"
        elif not parts.hostname:
            problem = "it names no host"
        elif parts.fragment or (parts.username is None and "@" in url):
            problem = "part of it was read as a fragment or a path"
    if problem is not None:
        raise ConfigError(
            f"{name}: the server address {redact_url(url)} is not a usable URL ({problem}). "
            "Write it as http(s)://host:port/path; a user name or password holding '#', "
            "'/', '?', '@' or ':' must be percent-encoded (%23, %2F, %3F, %40, %3A)."
        )


def _cut_off(error: BaseException) -> bool:
    """Whether a connection error is a server hanging up in the middle of its answer."""
    cause = error.__cause__ or error.__context__
    # httpx: "peer closed connection without sending complete message body (...)" or
    # "... (incomplete chunked read)".
    return type(cause).__name__ == "RemoteProtocolError" and "complete" in str(cause)


def is_own_host(url: str, own_hosts: frozenset[str]) -> bool:
    """Whether ``url`` is one of the provider's own hosts, reached over HTTPS."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    return parts.scheme.lower() == "https" and host in own_hosts


def availability(
    package: str,
    key_env: str,
    base_url_env: str,
    own_hosts: frozenset[str],
    *,
    base_url_note: str,
    no_key_hint: str,
) -> tuple[bool, str]:
    """Whether the SDK provider ``package`` can be used here, and why (never shows the key).

    ``base_url_note`` follows "``base_url_env`` is set" in brackets; ``no_key_hint``
    follows "``key_env`` is not set:". The reason also says where the key is sent.
    """
    if util.find_spec(package) is None:
        return False, f"the {package} package is not installed: pip install {package}"
    sdk = f"{package} {metadata.version(package)} installed"
    base_url = os.environ.get(base_url_env)
    if base_url and not is_own_host(base_url, own_hosts):
        return True, (
            f"{sdk}; {base_url_env} is set ({base_url_note}; {key_env} is not sent there)"
        )
    if os.environ.get(key_env):
        return True, f"{sdk}; {key_env} is set (sent only to {', '.join(sorted(own_hosts))})"
    return False, f"{sdk}, but {key_env} is not set: {no_key_hint}"
