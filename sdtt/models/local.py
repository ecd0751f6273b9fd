"""The embedded provider: ``local/<model>`` runs a GGUF model in-process with llama.cpp.

The default, ``local/gemma-3-270m``, is a base model without a chat template, so it
continues the prompt's transcript as raw text: it is given ``prompt.completion_text()``
(ending with e.g. ``Response: [``) and stops where the other side's line would start.
It usually writes one message per call and sometimes an empty or off-topic one; the
caller parses, retries and continues with the next ``Response: [`` line for a burst.

Each process keeps one loaded model per file and serves one call at a time with it, so
llama.cpp's KV cache still holds the previous prompt: a persona history followed by a
growing dialogue is evaluated once, and later calls only process the appended tokens.
"""

from __future__ import annotations

import ctypes
import logging
import os
import random
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from sdtt.errors import (
    BadRequestError,
    ConfigError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, Usage
from sdtt.models.gguf import (
    DEFAULT_MODEL,
    KNOWN_MODELS,
    LOCAL_EXTRA_HINT,
    canonical_name,
    caveat_of,
    check_model_name,
    default_n_ctx,
    gguf_file,
    is_gguf_path,
    is_installed,
    reused_prefix,
    stop_strings,
    trim_partial_stop,
    weights_path,
)

PROVIDER = "local"

_llama_log = logging.getLogger("sdtt.models.local.llama_cpp")
_status_log = logging.getLogger("sdtt.retries")
"""The lines every command shows as it goes (retries, and the caveat of a toy model)."""
_told: set[str] = set()
_log_callback: Any = None
_guard_lock = threading.Lock()
_load_lock = threading.Lock()


def import_llama_cpp() -> Any:
    """Import llama-cpp-python, or say how to install it."""
    try:
        import llama_cpp
    except ImportError:
        raise ProviderUnavailableError(
            f"The local provider needs llama-cpp-python: {LOCAL_EXTRA_HINT}"
        ) from None
    except OSError as exc:
        raise ProviderUnavailableError(
            f"llama-cpp-python is installed but its library does not load ({exc}); "
            "reinstall it: pip install --force-reinstall --no-cache-dir llama-cpp-python"
        ) from None
    return llama_cpp


def install_amx_guard(llama_cpp: Any) -> None:
    """Make every ``Llama`` built in this process load without "extra buffer types".

    On CPUs with AMX the native build crashes on the first forward pass inside ggml's AMX
    kernel, which is only used when weights are repacked into extra buffer types.
    ``Llama()`` has no argument for that, but it takes its model parameters from
    ``llama_cpp.llama_cpp.llama_model_default_params``, so that function is wrapped.
    """
    low_level = llama_cpp.llama_cpp
    with _guard_lock:
        original = low_level.llama_model_default_params
        if getattr(original, "_sdtt_amx_guard", False):
            return

        def guarded_default_params() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        guarded_default_params._sdtt_amx_guard = True  # type: ignore[attr-defined]
        low_level.llama_model_default_params = guarded_default_params


def _route_llama_logs(llama_cpp: Any) -> None:
    """Send llama.cpp's own log lines to Python logging (debug level) instead of stderr.

    llama-cpp-python maps ggml's log levels with an outdated table and prints some
    warnings to stderr even with ``verbose=False``; a chat UI must not show them.
    """
    global _log_callback
    if _log_callback is not None:
        return
    low_level = llama_cpp.llama_cpp

    @low_level.llama_log_callback  # type: ignore[untyped-decorator]
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if _llama_log.isEnabledFor(logging.DEBUG):
            _llama_log.debug("%s", text.decode("utf-8", errors="replace").rstrip("\n"))

    low_level.llama_log_set(forward, ctypes.c_void_p(0))
    _log_callback = forward  # keep the ctypes callback alive for the process


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class LoadedModel:
    """A loaded ``Llama`` shared by every :class:`LocalModel` of the process for one file."""

    llm: Any
    path: Path
    n_ctx: int
    lock: threading.Lock
    steps: list[int] = field(default_factory=lambda: [0])
    """How many steps of work the model has done, for any call: each batch of prompt
    tokens evaluated and each token sampled adds one. A caller that sees it grow knows
    the model is making progress (a call queued behind one that is making
    progress is not idle either)."""

    def step(self) -> None:
        """Count one step of work (from the thread running the model)."""
        self.steps[0] += 1


_loaded: dict[tuple[Path, int], LoadedModel] = {}


def load_model(path: Path, *, n_ctx: int, n_threads: int | None = None) -> LoadedModel:
    """Load ``path`` once per process (per context size) with the AMX guard active."""
    key = (path.resolve(), n_ctx)
    with _load_lock:
        loaded = _loaded.get(key)
        if loaded is not None:
            return loaded
        llama_cpp = import_llama_cpp()
        install_amx_guard(llama_cpp)
        _route_llama_logs(llama_cpp)
        threads = n_threads or cpu_count()
        try:
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                # Gemma 3 keeps only a 512-token window for most layers; without the full
                # cache, rolling back to a shared prefix reuses stale window entries and the
                # continuation differs from a fresh evaluation of the same prompt.
                swa_full=True,
                # Cuts the cost of a long prompt under the full window cache by about a third.
                flash_attn=True,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ProviderUnavailableError(
                f"Could not load the model file {path}: {exc}. If the file is damaged, delete "
                "it and run again (packaged weights are re-assembled)."
            ) from None
        loaded = LoadedModel(llm=llm, path=path, n_ctx=n_ctx, lock=threading.Lock())
        count_prompt_batches(loaded)
        _loaded[key] = loaded
        return loaded


def count_prompt_batches(loaded: LoadedModel) -> None:
    """Count each batch the model's context decodes as a step of work: evaluating a long
    prompt on a slow CPU takes minutes before the first token is sampled, and is progress
    too. (llama-cpp-python decodes a prompt ``n_batch`` tokens at a time through its
    context's ``decode``; a build without one counts sampled tokens only.)"""
    context: Any = getattr(loaded.llm, "_ctx", None)
    decode = getattr(context, "decode", None)
    if context is None or decode is None:
        return

    def counted(*args: Any, **kwargs: Any) -> Any:
        loaded.step()
        return decode(*args, **kwargs)

    try:
        context.decode = counted
    except AttributeError:  # a context that takes no new attributes: tokens only
        return


def unload_all() -> None:
    """Forget every loaded model (its memory is freed once no call still uses it)."""
    with _load_lock:
        _loaded.clear()


@dataclass(frozen=True)
class Completion:
    """What one blocking call to the model produced."""

    text: str
    usage: Usage
    finish_reason: str


def complete(
    loaded: LoadedModel,
    text: str,
    config: GenerateConfig,
    *,
    prefix_reuse: bool = True,
    cancel: threading.Event | None = None,
) -> Completion:
    """Continue ``text`` with the loaded model (blocking; one call at a time per model).

    With ``prefix_reuse`` the tokens shared with the previous call come from the KV cache;
    without it the whole prompt is evaluated again (for measurements).
    """
    llama_cpp = import_llama_cpp()
    stopped = cancel or threading.Event()
    with loaded.lock:
        if stopped.is_set():  # abandoned (timed out) while waiting for the model
            raise ProviderTimeoutError("The call was cancelled before the model was free.")
        llm = loaded.llm
        tokens: list[int] = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) >= loaded.n_ctx:
            raise BadRequestError(
                f"The prompt has {len(tokens)} tokens but the local model's context holds "
                f"{loaded.n_ctx}; shorten the persona history or pass a larger n_ctx."
            )
        if not prefix_reuse:
            llm.reset()
        evaluated: list[int] = llm.input_ids[: llm.n_tokens].tolist()
        cached = reused_prefix(
            evaluated, tokens, logits_live=not getattr(llm, "_requires_eval", True)
        )
        stops = stop_strings(config.stop)
        seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**31)

        loaded.step()

        def should_stop(_ids: Any, _logits: Any) -> bool:
            loaded.step()  # a token: the call is making progress
            return stopped.is_set()

        try:
            result = llm.create_completion(
                tokens,
                max_tokens=max(1, config.max_tokens),
                temperature=config.temperature,
                stop=stops,
                seed=seed,
                stopping_criteria=llama_cpp.StoppingCriteriaList([should_stop]),
            )
        except (ValueError, RuntimeError) as exc:
            raise ProviderError(f"The local model failed: {exc}") from None
    choice = result["choices"][0]
    usage = result["usage"]
    finish_reason = str(choice.get("finish_reason") or "")
    reply: str = choice["text"]
    if finish_reason == "length":
        reply = trim_partial_stop(reply, stops)
    return Completion(
        text=reply,
        usage=Usage(
            input_tokens=usage["prompt_tokens"],
            cached_input_tokens=cached,
            output_tokens=usage["completion_tokens"],
        ),
        finish_reason=finish_reason,
    )


class LocalModel:
    """``local/<model>``: an embedded GGUF model continuing the transcript as raw text."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        prefix_reuse: bool = True,
    ) -> None:
        check_model_name(model)
        model = canonical_name(model)
        self.name = f"{PROVIDER}/{model}"
        self.model = model
        self.n_ctx = n_ctx or default_n_ctx(model)
        """Context tokens (prompt plus reply); by default what the model was trained on."""
        self.n_threads = n_threads
        self.prefix_reuse = prefix_reuse
        self._loaded: LoadedModel | None = None

    def _load(self) -> LoadedModel:
        if self._loaded is None:
            path = weights_path(self.model)
            self._loaded = load_model(path, n_ctx=self.n_ctx, n_threads=self.n_threads)
        return self._loaded

    def _call(
        self, text: str, config: GenerateConfig, cancel: threading.Event, using: list[LoadedModel]
    ) -> Completion:
        loaded = self._load()
        using.append(loaded)  # the caller watches its progress
        return complete(loaded, text, config, prefix_reuse=self.prefix_reuse, cancel=cancel)

    idle_timeout = True
    """``config.timeout`` is how long a call may go without progress (a prompt batch
    evaluated or a token sampled), not how long it may take: work on this machine's CPU
    that is making progress is never cut off and redone (an abandoned call's thread
    would finish its prompt anyway)."""

    POLL = 0.05
    """Seconds between two looks at the model's progress."""

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Continue ``prompt.completion_text()`` until the model's turn ends, or until the
        model has made no progress for ``config.timeout`` seconds (on the trio clock:
        the deadline starts again at each step of work the watcher sees)."""
        text = prompt.completion_text()
        cancel = threading.Event()
        start = trio.current_time()
        result: list[Completion] = []
        using: list[LoadedModel] = []

        async def run() -> None:
            result.append(
                await trio.to_thread.run_sync(
                    partial(self._call, text, config, cancel, using), abandon_on_cancel=True
                )
            )

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                seen = -1
                progressed = start
                while not result:
                    steps = using[0].steps[0] if using else -1
                    if steps != seen:
                        seen, progressed = steps, trio.current_time()
                    if trio.current_time() - progressed >= config.timeout:
                        raise ProviderTimeoutError(
                            f"{self.name} made no progress for {config.timeout:g} s"
                        )
                    await trio.sleep(self.POLL)
        except BaseExceptionGroup as group:
            # The watcher's timeout, or the call's own error: the one that ended it.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            # An abandoned worker thread stops at its next sampled token.
            cancel.set()
        completion = result[0]
        return ModelOutput(
            text=completion.text,
            model=self.name,
            usage=completion.usage,
            latency=trio.current_time() - start,
            continued_from=prompt.continue_with,
        )

    async def aclose(self) -> None:
        """Nothing to release: the loaded model is shared by the process and kept for reuse."""
        self._loaded = None


def check_name(model: str) -> None:
    """Raise a :class:`ConfigError` unless ``local/<model>`` names a known model or a
    GGUF file (whether it can run here is checked when it is opened)."""
    check_model_name(canonical_name(model or DEFAULT_MODEL))


def create(model: str, **options: Any) -> LocalModel:
    """Build ``local/<model>`` for the registry; fails early if it cannot run here.

    Options: ``n_ctx`` (context tokens, default: the model's trained context, 32,768 for
    Gemma 3 270M, about 1 GB of memory), ``n_threads`` (default: all cores) and
    ``prefix_reuse`` (default True; False evaluates every prompt from scratch).
    The weights are located (and the default model assembled) on the first call.
    """
    name = canonical_name(model or DEFAULT_MODEL)
    check_model_name(name)
    if not is_installed("llama_cpp"):
        raise ProviderUnavailableError(
            f"The local provider needs llama-cpp-python: {LOCAL_EXTRA_HINT}"
        )
    if is_gguf_path(name):
        gguf_file(name)
    else:
        usable, why = KNOWN_MODELS[name].status()
        if not usable:
            raise ProviderUnavailableError(f"local/{name}: {why}")
    allowed = {"n_ctx", "n_threads", "prefix_reuse"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigError(
            f"local/{name} does not take the option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(allowed))}."
        )
    caveat = caveat_of(name)
    if caveat and name not in _told:
        # Once a process: a run opens the model for several stages.
        _told.add(name)
        _status_log.info("note: local/%s is %s.", name, caveat)
    return LocalModel(name, **options)


def availability() -> tuple[bool, str]:
    """Whether ``local/...`` can run here, and what to install if not (for ``sdtt models``)."""
    try:
        import_llama_cpp()
    except ProviderUnavailableError as exc:
        return False, str(exc)
    notes: list[str] = []
    any_usable = False
    for name, weights in KNOWN_MODELS.items():
        usable, why = weights.status()
        any_usable = any_usable or usable
        default = " (default)" if name == DEFAULT_MODEL else ""
        caveat = f" ({weights.caveat})" if weights.caveat and usable else ""
        notes.append(f"{name}{default}: {why}{caveat}")
    summary = "; ".join(notes)
    if not any_usable:
        return False, f"no local model weights installed: {summary}"
    return True, summary
