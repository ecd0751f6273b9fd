"""Checking ``--base-url`` before a command loads anything.

A command's own imports (pandas, scipy, the providers' SDKs) took 1.5-3 minutes on a
loaded machine before the first call found nothing listening at a mistyped address. The
command line knocks on the address first (one TCP connection, no request), right after
parsing: a malformed URL, a host that does not resolve or a refused connection is one
line at once. An address that does not answer within :data:`KNOCK_SECONDS` is left to the
calls' own retries (a slow network is not a wrong address).
"""

from __future__ import annotations

import argparse
import os
import socket
from urllib.parse import urlsplit

from sdtt.errors import ConfigError, SdttError
from sdtt.models.registry import split_name

KNOCK_SECONDS = 3.0
"""How long the knock waits for a connection before leaving it to the calls."""


def knock(base_url: str) -> None:
    """Raise :class:`ConfigError` when nothing can be listening at ``base_url``.

    A malformed address is left alone: the provider says what is wrong with it, and
    without echoing a password it may hold.
    """
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return
    try:
        with socket.create_connection((parts.hostname, port), timeout=KNOCK_SECONDS):
            return
    except TimeoutError:
        return
    except socket.gaierror:
        raise ConfigError(
            f"--base-url: could not reach {parts.hostname}: the name does not resolve. "
            "Check the address."
        ) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(
            f"--base-url: could not reach {parts.hostname}:{port} ({reason}). Start the "
            "server first (its ready line gives the URL), or check the port."
        ) from None


def knock_for(args: argparse.Namespace) -> None:
    """:func:`knock` on ``args.base_url`` unless none of the command's models is sent there
    (the command then says so itself, which says more)."""
    names: list[str] = []
    for field in ("model", "interrogator"):
        value = getattr(args, field, None)
        values = [value] if isinstance(value, str) else value or []
        names.extend(name for name in values if isinstance(name, str))
    if names and not any(_served(name) for name in names):
        return
    key_env = getattr(args, "api_key_env", None)
    if key_env and not os.environ.get(key_env):
        return  # the command says first that the key's variable is not set
    knock(args.base_url)


def _served(name: str) -> bool:
    try:
        return split_name(name)[0].takes_base_url
    except SdttError:
        return False
