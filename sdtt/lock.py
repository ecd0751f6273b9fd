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
import re
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from sdtt.errors import OutputInUseError

FOLDER_LOCK = ".sdtt.lock"
"""The lock file inside a locked output folder."""

_USERINFO = re.compile(r"(://)[^/@\s]+@")


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
        "command": _USERINFO.sub(r"\1***@", command),
    }


def _write_holder(fd: int) -> None:
    # Through the lock's own descriptor: opening and closing another one on the same
    # file would drop a POSIX lock.
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, json.dumps(holder_record(), ensure_ascii=False).encode("utf-8"))


def describe_holder(path: Path) -> str:
    """Who holds the lock file ``path``, in words (vague when it cannot be read)."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
        return (
            f"process {holder['pid']} on {holder['host']} since {holder['since']} "
            f"({holder['command']})"
        )
    except (OSError, ValueError, TypeError, KeyError):
        return "another process (it is starting or ending)"


@contextmanager
def output_lock(output: str | Path, *, folder: bool = False, wait: float = 0) -> Iterator[None]:
    """Hold the lock of ``output`` (a folder when ``folder``, else a file) for the block.

    Raises :class:`OutputInUseError` naming the holder when another run has it after
    ``wait`` seconds. The lock file is removed when the block ends.
    """
    output = Path(output)
    path = lock_file(output, folder=folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=wait, thread_local=False, on_acquired=_write_holder)
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
