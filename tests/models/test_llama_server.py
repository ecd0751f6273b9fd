"""The launcher of llama-cpp-python's server: a clear error when it cannot run here."""

from __future__ import annotations

import sys

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
