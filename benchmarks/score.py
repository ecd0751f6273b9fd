"""How long scoring a million judgements takes, against a plain per-row loop.

Builds a synthetic judgement table (pairs x judges, unequal judges per pair, some
excluded rows), scores it with :func:`sdtt.analysis.metrics.summarise` (pass rates,
Wilson, exact tests, d', confusion, and a cluster bootstrap) and breakdowns by X, and
times a per-row Python loop computing only the two pass rates for comparison.

Usage: PYTHONPATH=. python benchmarks/score.py [--rows 1000000] [--bootstrap 200]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np
import pandas as pd
from _quick import add_quick

from sdtt.analysis.metrics import breakdown, summarise


def synthetic(rows: int, seed: int = 0) -> pd.DataFrame:
    """A judgement table shaped like :func:`sdtt.analysis.table.judgement_table`."""
    rng = np.random.default_rng(seed)
    pairs = max(10, rows // 200)
    judges = max(10, rows // 500)
    pair = rng.integers(0, pairs, rows)
    correct = (rng.random(rows) < 0.6).astype(float)
    excluded = rng.random(rows) < 0.03
    return pd.DataFrame(
        {
            "judge_id": pd.Series(rng.integers(0, judges, rows)).map("j{}".format),
            "judge_type": "human",
            "judge_model": None,
            "judge_kind": "human",
            "pair_id": pd.Series(pair).map("p{}".format),
            "pair_kind": "test",
            "x": np.where(pair % 3 == 0, 3, np.where(pair % 3 == 1, 10, 110)),
            "choice": np.where(rng.random(rows) < 0.5, "A", "B"),
            "bot_position": 1,
            "correct": correct,
            "excluded": excluded,
            "exclusion_reason": np.where(excluded, "failed catch pairs", None),
            "order": None,
            "label1": None,
            "label2": None,
            "model": np.where(pair % 2 == 0, "m1", "m2"),
        }
    )


def loop_pass_rates(frame: pd.DataFrame) -> tuple[float, float]:
    """The two pass rates with a per-row Python loop (the slow baseline)."""
    c: dict[str, float] = defaultdict(float)
    k: dict[str, int] = defaultdict(int)
    for row in frame.itertuples(index=False):
        if row.excluded or row.pair_kind != "test" or row.correct != row.correct:
            continue
        c[row.pair_id] += row.correct
        k[row.pair_id] += 1
    averaged = 1 - sum(c[p] / k[p] for p in k) / len(k)
    pooled = 1 - sum(c.values()) / sum(k.values())
    return averaged, pooled


def main() -> None:
    """Run the benchmark and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    add_quick(parser, rows=5000, bootstrap=20)
    args = parser.parse_args()
    frame = synthetic(args.rows)
    started = time.perf_counter()
    summary = summarise(frame, reps=0)
    vectorised = time.perf_counter() - started
    started = time.perf_counter()
    loop = loop_pass_rates(frame)
    looped = time.perf_counter() - started
    assert (
        abs(loop[0] - summary.pass_rate) < 1e-9 and abs(loop[1] - summary.pass_rate_pooled) < 1e-9
    )
    started = time.perf_counter()
    summarise(frame, reps=args.bootstrap)
    by_x = breakdown(frame, "x", reps=args.bootstrap)
    full = time.perf_counter() - started
    print(f"{args.rows:,} judgements, {summary.pairs:,} pairs, {summary.judges:,} judges")
    print(f"  vectorised score (no bootstrap):  {vectorised:.2f} s")
    print(f"  per-row loop (pass rates only):   {looped:.2f} s")
    print(f"  ratio loop / vectorised:          {looped / vectorised:.1f}x")
    print(f"  full score + by-X breakdown with {args.bootstrap} bootstrap replicates: {full:.2f} s")
    print(f"  pass rate {summary.pass_rate:.4f}, by X: {list(by_x['pass_rate'].round(4))}")


if __name__ == "__main__":
    main()
