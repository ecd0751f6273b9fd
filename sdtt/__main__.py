"""The ``sdtt`` console script (and ``python -m sdtt``): Ctrl-C answered from the start.

A console script imports its entry module before calling it. Importing ``sdtt.cli``
(Rich, the parser) takes tens of milliseconds, and a Ctrl-C in that time used to print
a ``KeyboardInterrupt`` traceback; this module imports nothing heavy at the top, so the
command line is imported inside the handler.
"""

from __future__ import annotations

import os
import signal
import sys

INTERRUPTED = "interrupted; everything written so far is kept"
"""The one line every interrupted command ends with."""
EXIT_INTERRUPTED = 130


def _redeliver_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    # A Ctrl-C that lands inside a __del__ method (trio's, among others) is "ignored" by
    # Python, and the command would run on; send it again a moment later, when the
    # finaliser is over (sent now, it would land in this hook and be ignored as well).
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import threading

        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    sys.__unraisablehook__(unraisable)


def main() -> int:
    """Run ``sdtt`` with the command line of this process; the exit status."""
    sys.unraisablehook = _redeliver_interrupt
    try:
        from sdtt.cli import main as run

        code = run()
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
        sys.stderr.write(INTERRUPTED + "\n")
    # Nothing is left to do: a Ctrl-C while Python shuts down (which puts the default
    # handler back, so the process would die of the signal) changes nothing now.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code


if __name__ == "__main__":
    sys.exit(main())
