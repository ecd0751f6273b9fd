"""Beliefs over time: belief traces, reveal-mode judging, calibration and market makers."""
