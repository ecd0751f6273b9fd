"""From judgements to published numbers: pass rates, intervals, tests, tells, plots, reports."""
