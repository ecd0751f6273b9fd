"""A stand-in provider module whose SDK is missing (used by test_registry)."""

import sdtt_no_such_sdk  # type: ignore[import-not-found]  # noqa: F401
