"""One sdtt run per output: a lock held while a command writes a folder or file.

Two runs appending to the same chain files or judgement file would interleave their
records (every turn written twice). A command takes the lock of its output first; a
second run is refused at once, told which process holds it (pid, host, start time and
command line, kept in the lock file by the holder). The lock is the operating system's
(``flock`` through the ``filelock`` package), so a killed run releases it by dying.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from sdtt.errors import OutputInUseError, naming
from sdtt.redact import redact_text

FOLDER_LOCK = ".sdtt.lock"
"""The lock file inside a locked output folder."""

HOLDER_WAIT = 2.0
"""Seconds a refused run waits for the holder's record to appear in the lock file."""


def lock_file(output: Path, *, folder: bool) -> Path:
    """Where the lock of ``output`` lives: inside a folder, or hidden next to a file."""
    return output / FOLDER_LOCK if folder else output.with_name(f".{output.name}.lock")


def holder_record() -> dict[str, object]:
    """What the holder writes into its lock file so a refused run can name it."""
    # Credentials in a URL (http://user:pass@host) never reach the lock file.
    command = " ".join(["sdtt", *sys.argv[1:]])
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command": redact_text(command),
    }


def _write_holder(fd: int) -> None:
    # Through the lock's own descriptor: opening and closing another one on the same
    # file would drop a POSIX lock. One write at offset 0, then the length: a refused run
    # reads the whole record, or whatever a killed holder left (see describe_holder).
    record = json.dumps(holder_record(), ensure_ascii=False).encode("utf-8")
    os.pwrite(fd, record, 0)
    os.ftruncate(fd, len(record))


def _holder_is_current(holder: dict[str, object]) -> bool:
    """False when the record is a killed run's, left in the lock file it never removed."""
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return True
    try:
        os.kill(int(holder["pid"]), 0)  # type: ignore[call-overload]
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def describe_holder(path: Path, *, wait: float = HOLDER_WAIT) -> str:
    """Who holds the lock file ``path``, in words (vague when it cannot be read).

    The holder writes its record just after taking the lock; a run refused in between
    finds the file empty or a killed run's record, so it looks again for up to ``wait``
    seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            holder = json.loads(path.read_text(encoding="utf-8"))
            if _holder_is_current(holder) or time.monotonic() >= deadline:
                return (
                    f"process {holder['pid']} on {holder['host']} since {holder['since']} "
                    f"({holder['command']})"
                )
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            if time.monotonic() >= deadline:
                return "another process (it is starting or ending)"
        time.sleep(0.02)


@contextmanager
def output_lock(output: str | Path, *, folder: bool = False, wait: float = 0) -> Iterator[None]:
    """Hold the lock of ``output`` (a folder when ``folder``, else a file) for the block.

    Raises :class:`OutputInUseError` naming the holder when another run has it after
    ``wait`` seconds. The lock file is removed when the block ends.
    """
    output = Path(output)
    path = lock_file(output, folder=folder)
    path.parent.mkdir(parents=True, exist_ok=True)

    def on_acquired(fd: int) -> None:
        try:
            _write_holder(fd)
        except OSError as error:
            # Disk full: no lock file is left behind (removed while still held).
            with suppress(OSError):
                path.unlink()
            raise naming(error, path) from None

    lock = FileLock(path, timeout=wait, thread_local=False, on_acquired=on_acquired)
    try:
        lock.acquire()
    except Timeout:
        raise OutputInUseError(
            f"{output} is being written by another sdtt run: {describe_holder(path)}. "
            "Wait for it to finish (or stop it), or write to another --out."
        ) from None
    try:
        yield
    finally:
        # Removed while still held, so no other run can be holding this very file.
        with suppress(OSError):
            path.unlink()
        lock.release()
