"""Shared test configuration: deterministic property tests that tolerate a busy machine."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Derandomised so every run (and CI) checks the same examples; no deadline or speed health
# check because CI machines share two cores with other work.
settings.register_profile(
    "sdtt",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    max_examples=100,
)
settings.load_profile("sdtt")


def pytest_unconfigure(config: object) -> None:
    """Close the two ``/dev/null`` handles llama-cpp-python opens at import and never closes.

    Python reports them as unclosed files at interpreter exit, after the test summary,
    whenever a test loaded the embedded model; the noise hides real warnings.
    """
    import sys

    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None:
            handle.close()
