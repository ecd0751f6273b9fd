"""What a ``with`` block needs of an object that holds something until it is closed.

A class that releases a file, a connection or a model's weights defines ``close()`` (or
``aclose()``) and inherits the block's entry and exit from here, so ``with`` (``async
with``) means the same everywhere: the object itself is entered, and leaving the block,
by an error too, closes it.
"""

from __future__ import annotations

from typing import Self


class Closing:
    """Closed on leaving a ``with`` block; subclasses define :meth:`close`."""

    def close(self) -> None:
        """Release what the object holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClosing:
    """Closed on leaving an ``async with`` block; subclasses define :meth:`aclose`."""

    async def aclose(self) -> None:
        """Release what the object holds."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
