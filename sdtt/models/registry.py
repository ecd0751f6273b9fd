"""The provider registry: what each provider is, and its bare API for a ``provider/model``
name (:func:`create_api`; :func:`sdtt.models.model.get_model` wraps it in a ``Model``).

Each provider is a module with ``create(model: str, **options) -> ModelAPI`` and
``availability() -> tuple[bool, str]``, imported only when first used, so a missing SDK
or the embedded model's weights cost nothing until someone asks for them.

Adding a provider is one :class:`Provider` entry in :data:`PROVIDERS`: its module, and
the facts the rest of sdtt asks of it instead of keeping lists of provider names (runs on
this machine? costs nothing, or what? a baseline bot? continues text rather than chats?
its batch API? its key's variable? how many calls in flight?). Ask them with
:func:`provider_of`.

=============  ======================================================================
``mock``       scripted replies, offline (``mock/echo``, ``mock/chatty``, ``mock/fail``)
``openai``     OpenAI, or any OpenAI-compatible server with ``base_url``
``anthropic``  Anthropic's Messages API, with the persona prefix marked for caching
``local``      the embedded GGUF model, run in-process by llama.cpp
``eliza``      ELIZA's rules (``eliza/classic``), the baseline bot every study should include
``replay``     a study's recorded answers again (``replay/openai/gpt-4o-mini``), offline
=============  ======================================================================
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sdtt.errors import ConfigError, ProviderUnavailableError
from sdtt.models import prices as price_tables
from sdtt.models.base import ModelAPI
from sdtt.models.prices import Price

DEFAULT_MODEL = "local/gemma-3-270m"
"""The model used when none is named: the embedded one, which works offline."""


@dataclass(frozen=True)
class Provider:
    """A registered provider: where its code lives and how to name its models."""

    name: str
    module: str
    """The module holding ``create`` and ``availability``, imported lazily."""
    example: str
    """A model name to show users."""
    summary: str
    takes_base_url: bool = False
    """Whether it talks to a server whose address ``base_url=`` can change."""
    key_env: str = ""
    """The environment variable its API key is read from ('' when it needs none)."""
    base_url_env: str = ""
    """The environment variable giving the server's address when ``base_url=`` does not."""
    own_hosts: frozenset[str] = frozenset()
    """The provider's own API hosts: the only ones the key in ``key_env`` is sent to."""
    local: bool = False
    """Whether its models run on this machine, so chats sent to them never leave it
    (no privacy warning for unscrubbed private personas)."""
    free: bool = False
    """Whether its calls cost nothing (no cost estimate is shown)."""
    prices: Mapping[str, Price] = field(default_factory=dict, compare=False)
    """Its price table, model (the part after ``provider/``) -> list price, kept in
    :mod:`sdtt.models.prices`; a model it does not list gets no cost estimate."""
    baseline: bool = False
    """Whether its bots are baselines (manipulation checks, like ELIZA) rather than
    contenders: reports mark them."""
    completion: bool = False
    """Whether its models continue text rather than chat: pseudo-dialogue chains on them
    write one message per call (style 'lines' when 'auto')."""
    batch: str = ""
    """The module of its batch API, which ``sdtt generate --batch`` uses: it holds
    ``create_batch(model) -> BatchBackend`` (:mod:`sdtt.models.batch`) and is imported
    only then. '' when it has none."""
    virtual_time: bool = False
    """Whether its models wait only through trio's clock (scripted delays), so they run
    on a simulation's virtual clock as they are; others get real time for their calls."""
    logprobs: bool = False
    """Whether its replies can carry token log-probabilities (``top_logprobs``), which a
    reveal-mode judge reads beliefs from."""
    rule_based: bool = False
    """Whether its replies come from rules that only reflect what they are told (ELIZA):
    fine as a baseline bot, no use as a simulated interrogator (two of them talk in
    circles), so ``sdtt simulate`` gives it :data:`DEFAULT_MODEL` as the interrogator."""
    scripted: bool = False
    """Whether its replies come from scripts or rules (mock, ELIZA): the same prompt and
    seed get the same answer on every run, so asking again cannot help, and a model name
    (``mock/short``) names a script, an ordinary word, not a model judges could know."""
    image_input: bool = False
    """Whether its models can be shown images (``Prompt.images``): image captioning asks a
    model that can; :class:`sdtt.models.Model` refuses images for one that cannot."""
    install: str = ""
    """The command that installs what it needs, when loading it fails (default:
    ``pip install <name>``, its SDK)."""
    max_connections: int = 8
    """Calls in flight to it at once, over every model of the process, unless a model is
    given another ``max_concurrency``."""


PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider(
            "mock",
            "sdtt.models.mock",
            "mock/chatty",
            "scripted replies, offline",
            local=True,
            logprobs=True,
            free=True,
            virtual_time=True,
            scripted=True,
            image_input=True,
            max_connections=100,
        ),
        Provider(
            "openai",
            "sdtt.models.openai_api",
            "openai/gpt-4o-mini",
            "OpenAI, or an OpenAI-compatible server via --base-url",
            takes_base_url=True,
            key_env="OPENAI_API_KEY",
            base_url_env="OPENAI_BASE_URL",
            own_hosts=frozenset({"api.openai.com"}),
            prices=price_tables.OPENAI,
            batch="sdtt.models.openai_batch",
            logprobs=True,
            image_input=True,
        ),
        Provider(
            "anthropic",
            "sdtt.models.anthropic_api",
            "anthropic/claude-sonnet-4-5",
            "Anthropic Messages API",
            takes_base_url=True,
            key_env="ANTHROPIC_API_KEY",
            base_url_env="ANTHROPIC_BASE_URL",
            own_hosts=frozenset({"api.anthropic.com"}),
            prices=price_tables.ANTHROPIC,
            batch="sdtt.models.anthropic_batch",
            image_input=True,
        ),
        Provider(
            "local",
            "sdtt.models.local",
            DEFAULT_MODEL,
            "embedded GGUF model, offline",
            local=True,
            free=True,
            completion=True,
            install="pip install 'sdtt[local]'",
            # One model in memory computes one answer at a time.
            max_connections=1,
        ),
        Provider(
            "eliza",
            "sdtt.models.eliza",
            "eliza/classic",
            "rule-based ELIZA (Weizenbaum 1966), the baseline bot, offline",
            local=True,
            free=True,
            baseline=True,
            virtual_time=True,
            max_connections=100,
            rule_based=True,
            scripted=True,
        ),
        Provider(
            "replay",
            "sdtt.models.replay",
            "replay/openai/gpt-4o-mini",
            "the answers a study recorded, again (sdtt study verify --rerun), offline",
            local=True,
            free=True,
            virtual_time=True,
            max_connections=100,
        ),
    )
}


def split_name(name: str) -> tuple[Provider, str]:
    """The provider and the model part of ``provider/model``; ConfigError if malformed."""
    known = ", ".join(PROVIDERS)
    provider_name, slash, model = name.partition("/")
    if not slash or not provider_name or not model:
        raise ConfigError(
            f"Model name {name!r} is not of the form provider/model "
            f"(e.g. {PROVIDERS['mock'].example}); known providers: {known}."
        )
    provider = PROVIDERS.get(provider_name)
    if provider is None:
        raise ConfigError(
            f"Unknown model provider {provider_name!r} in {name!r}; known providers: "
            f"{known}. Run 'sdtt models' to see which are usable here."
        )
    return provider, model


def check_model(name: str) -> None:
    """Raise a :class:`ConfigError` when ``name`` cannot name a model: a malformed name,
    an unknown provider, or a model its provider does not have (mock scripts, ELIZA and
    the embedded models are a closed list; remote providers are asked only when called).
    Cheap: commands check every name they are given before any work starts."""
    provider, model = split_name(name)
    try:
        check = load(provider, "check_name")
    except (AttributeError, ProviderUnavailableError):
        return
    check(model)


def provider_of(name: str) -> Provider | None:
    """The registered provider of model ``name`` (``provider/model``), ``None`` if unknown.

    Unknown providers (a test's own ``ModelAPI``, a typo caught elsewhere) have none of
    the facts: remote, priced, chat-style, no batch API, the default connection limit.
    """
    return PROVIDERS.get(name.partition("/")[0])


def require_image_input(name: str) -> None:
    """Raise a :class:`ConfigError` unless model ``name``'s provider takes image input."""
    provider = provider_of(name)
    if provider is not None and provider.image_input:
        return
    able = ", ".join(p.name for p in PROVIDERS.values() if p.image_input)
    raise ConfigError(
        f"{name} cannot be shown images: its provider takes text only. Use a "
        f"vision-capable model of a provider that takes images ({able}), e.g. "
        "openai/gpt-4o-mini or anthropic/claude-sonnet-4-5."
    )


def base_url_for(name: str, base_url: str | None) -> str | None:
    """``base_url`` when the provider of model ``name`` talks to a server, else None.

    A command gives its ``--base-url`` to every model it opens (bot, interrogator,
    judge...) through this, so a mock or local model next to a server model still works.
    """
    if base_url is None:
        return None
    provider, _ = split_name(name)
    return base_url if provider.takes_base_url else None


def load(provider: Provider, attribute: str, module_name: str = "") -> Callable[..., Any]:
    """``attribute`` of the provider's module (or of ``module_name``, e.g. its batch
    module), imported now; :class:`ProviderUnavailableError` saying how to install what
    is missing when the import fails."""
    module_name = module_name or provider.module
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        if error.name == module_name:
            raise ProviderUnavailableError(
                f"The {provider.name} provider is missing from this installation of sdtt "
                f"(no module {module_name})."
            ) from None
        raise ProviderUnavailableError(
            f"The {provider.name} provider could not be loaded ({error}). "
            + _install_hint(provider)
        ) from None
    return cast(Callable[..., Any], getattr(module, attribute))


def _install_hint(provider: Provider) -> str:
    if provider.install:
        return f"Install what it needs with: {provider.install}"
    return f"Install its SDK with: pip install {provider.name}"


def create_api(name: str, **options: Any) -> ModelAPI:
    """The bare provider for ``name`` (no retries or limits): ``create(model, **options)``.

    Options whose value is ``None`` are not passed on.
    """
    provider, model = split_name(name)
    factory = load(provider, "create")
    # Options left at None are dropped, so CLI code can pass base_url=args.base_url to
    # any provider, including those that take no such option.
    given = {key: value for key, value in options.items() if value is not None}
    if not provider.takes_base_url:
        # --api-key-env names a server's credential; models that call no server have none.
        given.pop("api_key_env", None)
    try:
        api = factory(model, **given)
    except TypeError as error:
        if "unexpected keyword argument" not in str(error):
            raise
        raise ConfigError(
            f"{name}: the {provider.name} provider does not take this option ({error})."
        ) from None
    return cast(ModelAPI, api)


@dataclass(frozen=True)
class ProviderStatus:
    """Whether a provider is usable on this machine, and why (or why not)."""

    provider: Provider
    usable: bool
    reason: str


def provider_status(name: str) -> ProviderStatus:
    """Ask one provider's ``availability()``; a provider that fails to import is unusable."""
    provider = PROVIDERS[name]
    try:
        check = load(provider, "availability")
    except ProviderUnavailableError as error:
        return ProviderStatus(provider, False, str(error))
    except AttributeError:
        return ProviderStatus(provider, False, f"{provider.module} has no availability()")
    try:
        usable, reason = check()
    except Exception as error:  # a broken check must not hide the other providers
        return ProviderStatus(
            provider, False, f"the availability check failed: {type(error).__name__}"
        )
    return ProviderStatus(provider, bool(usable), str(reason))


def all_provider_status() -> list[ProviderStatus]:
    """The status of every registered provider, in registry order."""
    return [provider_status(name) for name in PROVIDERS]
