"""``sdtt serve`` as a real process on a free localhost port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    spec: Path, port: int, token: str = "admin-secret", *, module: str = "sdtt.cli"
) -> subprocess.Popen[bytes]:
    """Start ``sdtt serve SPEC`` (``python -m MODULE serve ...``) and return once it
    answers (at most about a minute)."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, "serve", str(spec), "--port", str(port)],
        env={**os.environ, "SDTT_ADMIN_TOKEN": token},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    for _ in range(300):
        if process.poll() is not None:
            output = process.stdout.read().decode() if process.stdout else ""
            raise AssertionError(f"sdtt serve stopped: {output}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/static/style.css", timeout=2).close()
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise AssertionError("sdtt serve did not start")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop it (if it still runs) and close its pipe."""
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()
