"""The error tree. Every error a user can cause or meet is an :class:`SdttError`.

Messages say what was wrong, where (file, line, field) and what to do, so the CLI can
print them as one paragraph instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path


def naming(error: OSError, path: str | Path, *, instead_of: str | Path | None = None) -> OSError:
    """``error`` with ``path`` as its file name when it has none (or names ``instead_of``).

    A failed ``write`` on an open file (disk full, file-size limit) names no file; the
    command line prints the file name, so the user learns which file could not be written
    (the file they asked for, not the temporary one written first).
    """
    if error.filename is not None and (instead_of is None or error.filename != str(instead_of)):
        return error
    named = OSError(error.errno, error.strerror or type(error).__name__, str(path))
    named.__cause__ = error
    return named


class SdttError(Exception):
    """Root of every error sdtt raises on purpose."""


class InputError(SdttError):
    """A file or value given by the user is malformed.

    ``path``, ``line`` and ``field`` locate the problem; ``hint`` says what to do.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.hint = hint
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.field is not None:
            where = f"{where} field '{self.field}'" if where else f"field '{self.field}'"
        text = f"{where}: {self.problem}" if where else self.problem
        if self.hint:
            text = f"{text} {self.hint}"
        return text


class ConfigError(SdttError):
    """A setting, option or environment variable is missing or inconsistent."""


class OutputInUseError(SdttError):
    """Another sdtt run is writing the same output (folder or file) right now."""


class ModelError(SdttError):
    """A model provider failed or answered with something unusable."""

    out_of_character: int = 0
    """Messages of earlier attempts that broke character (set by the persona bot): each
    was left unsent and asked again before this error ended the reply."""


class ModelOutputError(ModelError):
    """The model answered, but the text could not be used (garbage or wrong format)."""


class EmptyReplyError(ModelOutputError):
    """The model's reply held no message at all."""


class OutOfCharacterError(EmptyReplyError):
    """A reply repeated the model's own instructions or said it is an AI: no person's
    message, so it is never sent (a chat holding one would be worthless to judges).
    :attr:`out_of_character` counts the messages that did so."""


class ProviderError(ModelError):
    """A call to a provider failed. ``retryable`` tells the retry policy what to do."""

    retryable: bool = False

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.attempts = 1
        """Provider calls made before giving up, retries included."""
        self.base_message = message
        """The message without any note on the attempts made."""


class ProviderConnectionError(ProviderError):
    """The provider could not be reached."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    retryable = True


class RateLimitError(ProviderError):
    """The provider asked us to slow down (HTTP 429)."""

    retryable = True


class ServerError(ProviderError):
    """The provider failed on its side (HTTP 408, 409 or 5xx)."""

    retryable = True


class AuthenticationError(ProviderError):
    """The API key is missing, wrong or lacks permission (HTTP 401/403)."""


class BadRequestError(ProviderError):
    """The provider rejected the request itself (HTTP 400/404/422...)."""


class ProviderUnavailableError(ModelError):
    """A provider cannot be used here: SDK missing, key unset, or weights absent."""


class IncompleteFileWarning(UserWarning):
    """A file ends in a cut-off record: it was copied, downloaded or written incompletely."""
