"""The launcher of llama-cpp-python's server: a clear error when it cannot run here."""

from __future__ import annotations

import importlib.util

import pytest

from sdtt.models.llama_server import main


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed"
)
def test_without_llama_cpp_the_launcher_says_what_to_install(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "pip install" in err and "Traceback" not in err
