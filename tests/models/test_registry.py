"""The provider registry and ``sdtt models``."""

from __future__ import annotations

import argparse
import io
import sys
import types
from typing import Any

import pytest
from rich.console import Console

from sdtt.commands import models_parser as models_command
from sdtt.errors import ConfigError, ProviderUnavailableError
from sdtt.models import PROVIDERS, MockModelAPI, Model, get_model
from sdtt.models.registry import Provider, all_provider_status, provider_status, split_name

PLANTED_KEY = "sk-test-PLANTED-registry-777"


@pytest.mark.parametrize("name", ["gpt-4o", "openai/", "/gpt-4o", ""])
def test_a_name_without_provider_and_model_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="provider/model") as caught:
        get_model(name)
    assert "mock, openai, anthropic, local" in str(caught.value)


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        get_model("gemini/pro")
    message = str(caught.value)
    assert "Unknown model provider 'gemini'" in message
    assert "mock, openai, anthropic, local" in message
    assert "sdtt models" in message


def test_the_model_part_may_contain_slashes() -> None:
    provider, model = split_name("openai/meta-llama/Llama-3-8B")
    assert (provider.name, model) == ("openai", "meta-llama/Llama-3-8B")


def test_get_model_wraps_the_provider_in_a_model() -> None:
    model = get_model("mock/echo", max_concurrency=3, seed=1)
    assert isinstance(model, Model)
    assert (model.name, model.provider, model.max_concurrency) == ("mock/echo", "mock", 3)


def test_an_option_the_provider_does_not_take_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="does not take this option"):
        get_model("mock/echo", base_url="http://localhost")


def test_options_left_at_none_are_not_passed_on() -> None:
    # CLI code passes base_url=args.base_url whatever the provider; mock takes none.
    assert get_model("mock/echo", base_url=None).name == "mock/echo"


def test_local_names_are_created_by_the_local_module(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def create(model: str, **options: Any) -> MockModelAPI:
        seen.append((model, options))
        return MockModelAPI(["hi"], name=f"local/{model}")

    stand_in = types.ModuleType("sdtt.models.local")
    stand_in.create = create  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sdtt.models.local", stand_in)
    model = get_model("local/gemma-3-270m", n_ctx=512)
    assert seen == [("gemma-3-270m", {"n_ctx": 512})]
    assert model.name == "local/gemma-3-270m"


def test_a_provider_that_fails_to_import_is_unusable_not_fatal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = Provider("broken", "sdtt.models.no_such_module", "broken/x", "test only")
    monkeypatch.setitem(PROVIDERS, "broken", broken)
    status = provider_status("broken")
    assert not status.usable
    assert "missing from this installation" in status.reason
    with pytest.raises(ProviderUnavailableError, match="broken"):
        get_model("broken/x")


def test_a_missing_dependency_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # A provider module that exists but whose own import fails (its SDK is missing).
    import dataclasses

    broken = dataclasses.replace(PROVIDERS["local"], module="tests.models.needs_missing_sdk")
    monkeypatch.setitem(PROVIDERS, "local", broken)
    status = provider_status("local")
    assert not status.usable
    assert "pip install 'sdtt[local]'" in status.reason


def test_every_provider_reports_a_status(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    statuses = {status.provider.name: status for status in all_provider_status()}
    assert list(statuses) == ["mock", "openai", "anthropic", "local", "eliza", "replay"]
    assert statuses["mock"].usable
    assert statuses["replay"].usable
    assert not statuses["openai"].usable
    assert "OPENAI_API_KEY is not set" in statuses["openai"].reason
    assert statuses["anthropic"].usable
    assert "ANTHROPIC_API_KEY is set" in statuses["anthropic"].reason
    assert statuses["local"].reason  # whatever its state, it says why


def test_an_openai_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    status = provider_status("openai")
    assert status.usable
    assert "OPENAI_BASE_URL" in status.reason


def test_sdtt_models_prints_the_table_without_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    parser = argparse.ArgumentParser(prog="sdtt")
    models_command.register(parser.add_subparsers())
    args = parser.parse_args(["models"])
    out = io.StringIO()
    code = args.func(args, console=Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert code == 0
    for name in ("mock", "openai", "anthropic", "local", "mock/chatty"):
        assert name in text
    assert "OPENAI_API_KEY is set" in text
    assert "PLANTED" not in text


def test_a_new_provider_is_one_registry_entry_whose_facts_every_caller_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import warnings

    from sdtt.generate.chain import resolve_style
    from sdtt.generate.pricing import estimate_cost
    from sdtt.models import Usage
    from sdtt.models.batch import batch_backend
    from sdtt.models.model import provider_limiter
    from sdtt.personas.persona import Persona, PersonaInfo
    from sdtt.personas.privacy import warn_if_sent_remotely

    entry = Provider(
        "offline",
        "sdtt.models.mock",
        "offline/x",
        "an offline test provider",
        local=True,
        free=True,
        completion=True,
        max_connections=3,
    )
    monkeypatch.setitem(PROVIDERS, "offline", entry)
    private = Persona(
        info=PersonaInfo(name="ann", source="t", license="x", attribution="x", private=True),
        conversations=[],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_sent_remotely(private, "offline/x")  # local: nothing leaves the machine
    assert estimate_cost("offline/x", Usage(input_tokens=10**6)) == 0.0
    assert resolve_style("auto", "offline/x") == "lines"
    assert provider_limiter("offline").total_tokens == 3
    with pytest.raises(ConfigError, match="openai/ and anthropic/ models only"):
        batch_backend(MockModelAPI(["hi"], name="offline/x"))


def test_every_provider_with_a_batch_api_has_a_backend() -> None:
    import importlib

    batched = [p for p in PROVIDERS.values() if p.batch]
    assert batched
    for provider in batched:
        assert callable(importlib.import_module(provider.batch).create_batch), provider.name
