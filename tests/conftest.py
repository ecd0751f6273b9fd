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
