"""The published numbers from a judgement table: X-Turn Pass Rate and its companions.

``P_X = 1 - (1/N) sum_i C_i / K_i`` over the N test pairs (``K_i`` usable judgements of
pair i, ``C_i`` of them correct) and the decision-pooled ``1 - sum C / sum K``; they
differ when pairs have different numbers of judges. Excluded judgements are counted and
reported, never used. Paired LLM judges contribute one judgement per order asked.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdtt.analysis import stats
from sdtt.analysis.defaults import BREAKDOWNS as BREAKDOWNS  # kept importable from here
from sdtt.analysis.defaults import DEFAULT_BOOTSTRAP, DEFAULT_MARGIN
from sdtt.analysis.table import (
    ANSWER_COLUMNS,
    combined_codes,
    demographic_columns,
    usable,
    with_base_columns,
)
from sdtt.dialogue.condition import Condition
from sdtt.models.registry import provider_of
from sdtt.tasks.judgements import reason_category

NAN = float("nan")
CONDITION = ("model", "mode", "interrogator", "turns", "n", "x")
"""What makes a condition: one headline row per model x mode x interrogator x total
turns, keyed by N and X too, so the last 3 and the last 10 turns of one chat (both at the
same turn index) stay apart, and so do N=0 (live turns 8-10) and N=7 (live 1-3) at turn
10."""
NONE = "(none)"
BOOTSTRAP = "cluster bootstrap"
WILSON_EFFECTIVE = "Wilson, effective n"
NO_INTERVAL = "-"
"""The methods of a pass rate's interval (``Summary.interval_method``); ``-`` with no
usable judgement, where there is no interval."""
SUMMARISED = ("judge_id", "judge_kind", "pair_id", "pair_kind", *ANSWER_COLUMNS)
"""The columns :func:`summarise` reads."""


@dataclass
class Confusion:
    """Judges' verdicts by truth: ``said_truth`` counts (H = human, M = machine)."""

    hh: int = 0
    mh: int = 0
    hm: int = 0
    mm: int = 0

    def rate(self, said: str, truth: str) -> float:
        """p(said | truth), e.g. ``rate("H", "M")`` is p(H|M)."""
        count = {"HH": self.hh, "MH": self.mh, "HM": self.hm, "MM": self.mm}
        total = count["H" + truth] + count["M" + truth]
        return count[said + truth] / total if total else NAN

    @property
    def detectability(self) -> float:
        """Imitation detectability ``(p(H|H) + p(M|M)) / 2``; 0.5 means a perfect imitator."""
        return (self.rate("H", "H") + self.rate("M", "M")) / 2


@dataclass
class Summary:
    """Every number reported for one group of judgements."""

    pairs: int
    judges: int
    judgements: int
    excluded: int
    correct: int
    pass_rate: float
    pass_rate_pooled: float
    wilson_low: float
    wilson_high: float
    """Wilson interval of ``pass_rate_pooled`` (judgements as independent trials)."""
    boot_low: float
    boot_high: float
    """Interval of ``pass_rate`` (the pair-averaged rate), by ``interval_method``: the
    wider of the percentile two-way cluster bootstrap and Wilson's interval on the
    effective number of judgements (a bootstrap has nothing to resample with few pairs
    or one judge, and gave [50%, 50%] from three pairs each judged one right, one wrong)."""
    interval_method: str
    """``BOOTSTRAP`` or ``WILSON_EFFECTIVE``: the method of this row's ``boot_low``/``high``."""
    effective_n: float
    """Kish's effective number of judgements (:func:`stats.effective_n`)."""
    binomial_p: float
    tost_p: float
    margin: float
    equivalent: bool
    dprime: float
    confusion: Confusion = field(default_factory=Confusion)
    position_bias: float = NAN
    order_consistency: float = NAN
    exclusions: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """A flat dict (for tables), confusion rates included."""
        out = asdict(self)
        out.pop("confusion")
        out.pop("exclusions")
        for said, truth in (("H", "H"), ("M", "H"), ("H", "M"), ("M", "M")):
            out[f"p({said}|{truth})"] = self.confusion.rate(said, truth)
        # With no usable judgement there is nothing to detect (excluded ties would
        # otherwise read as a perfect imitator, 50%).
        out["detectability"] = self.confusion.detectability if self.judgements else NAN
        return out


def test_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The test-pair rows of ``frame`` (``frame`` itself when it holds no others: a
    group of :func:`grouped` does not)."""
    test = frame["pair_kind"] == "test"
    return frame if test.all() else frame.loc[test]


def confusion(frame: pd.DataFrame) -> Confusion:
    """Verdict counts: a paired judgement labels both chats (bot as M if correct, else H);
    a single-transcript judgement labels each chat on its own (ties included), and a
    single-witness verdict labels its one witness."""
    test = test_rows(frame)
    single = test["label1"].notna() & test["label2"].notna()
    one_witness = test["witness"].notna()
    has_single, has_witness = bool(single.any()), bool(one_witness.any())
    # Most files hold paired judgements only: the other kinds' masks and copies are
    # left out then (every group of every table computes this).
    paired = usable(test.loc[~single & ~one_witness] if has_single or has_witness else test)
    correct = int(paired["correct"].sum())
    wrong = len(paired) - correct
    counts = Confusion(hh=correct, mm=correct, mh=wrong, hm=wrong)
    if has_single:
        reasons = test["exclusion_reason"].fillna("")
        single_rows = test.loc[single & (~test["excluded"] | reasons.str.startswith("tie"))]
        for chat in (1, 2):
            said_ai = (single_rows[f"label{chat}"] == "ai").to_numpy()
            is_bot = (single_rows["bot_position"] == chat).to_numpy()
            counts.mm += int((said_ai & is_bot).sum())
            counts.hm += int((~said_ai & is_bot).sum())
            counts.mh += int((said_ai & ~is_bot).sum())
            counts.hh += int((~said_ai & ~is_bot).sum())
    if has_witness:
        verdicts = test.loc[one_witness & ~test["excluded"] & test["verdict"].notna()]
        said_ai = (verdicts["verdict"] == "ai").to_numpy()
        is_bot = (verdicts["witness"] == "bot").to_numpy()
        counts.mm += int((said_ai & is_bot).sum())
        counts.hm += int((~said_ai & is_bot).sum())
        counts.mh += int((said_ai & ~is_bot).sum())
        counts.hh += int((~said_ai & ~is_bot).sum())
    return counts


def position_bias(frame: pd.DataFrame) -> float:
    """Share of answered paired LLM judgements that named chat 1 (position 1) as the AI."""
    rows = frame.loc[(frame["judge_kind"] == "paired") & frame["choice"].notna()]
    return float((rows["choice"] == "A").mean()) if len(rows) else NAN


def order_consistency(frame: pd.DataFrame) -> float:
    """Share of (judge, pair) asked in both orders, answered both times, where the judge
    picked the same conversation both times."""
    rows = frame.loc[
        (frame["judge_kind"] == "paired") & frame["correct"].notna() & frame["order"].notna()
    ]
    if rows.empty:
        return NAN
    asked = combined_codes([rows["judge_id"], rows["pair_id"]])
    correct = rows["correct"].to_numpy()
    firsts = []
    for order in ("original", "swapped"):
        shown = (rows["order"] == order).to_numpy()
        if not shown.any():
            return NAN
        firsts.append(pd.Series(correct[shown]).groupby(asked[shown]).first())
    original, swapped = firsts
    both = original.index.intersection(swapped.index)
    if not len(both):
        return NAN
    return float((original.loc[both] == swapped.loc[both]).mean())


def exclusion_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Excluded judgements by reason (the part before ':' for LLM reasons)."""
    reasons = frame.loc[frame["excluded"], "exclusion_reason"]
    short = reasons.map(reason_category)
    return {str(k): int(v) for k, v in short.value_counts().items()}


def summarise(
    frame: pd.DataFrame,
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
) -> Summary:
    """All numbers for the judgements in ``frame`` (excluded and catch rows are skipped)."""
    frame = with_base_columns(frame, SUMMARISED)
    used = usable(frame)
    test = test_rows(frame)
    return _summary(
        used["correct"].to_numpy(dtype=float),
        pd.factorize(used["pair_id"])[0].astype(np.int64),
        pd.factorize(used["judge_id"])[0].astype(np.int64),
        pairs=int(used["pair_id"].nunique()),
        judges=int(used["judge_id"].nunique()),
        excluded=int(test["excluded"].sum()),
        counts=confusion(frame),
        bias=position_bias(test),
        consistency=order_consistency(test),
        exclusions=exclusion_counts(test),
        reps=reps,
        seed=seed,
        margin=margin,
        alpha=alpha,
    )


def _summary(
    correct_values: np.ndarray,
    pair_codes: np.ndarray,
    judge_codes: np.ndarray,
    *,
    pairs: int,
    judges: int,
    excluded: int,
    counts: Confusion,
    bias: float,
    consistency: float,
    exclusions: dict[str, int],
    reps: int,
    seed: int,
    margin: float,
    alpha: float,
) -> Summary:
    """The rates, intervals and tests of one group's usable judgements (0/1
    ``correct_values``, pair and judge codes numbered by first appearance), beside its
    counts already taken."""
    n = correct_values.size
    k = int(correct_values.sum())
    pc_pair = stats.pair_averaged_pc(pair_codes, correct_values)
    pc_pooled = k / n if n else NAN
    low, high = stats.wilson(n - k, n, 1 - alpha)
    averaged, _ = stats.cluster_bootstrap(
        pair_codes, judge_codes, correct_values, reps=reps, seed=seed
    )
    boot_low_pc, boot_high_pc = stats.percentile_interval(averaged, 1 - alpha)
    # The bootstrap cannot see what it has too few pairs or judges to resample (every
    # replicate is the point when all agree, or when one judge got each pair half
    # right), so the row takes Wilson's interval on the effective n where that is wider.
    n_eff = stats.effective_n(pair_codes, correct_values)
    low_eff, high_eff = stats.wilson(pc_pair * n_eff, n_eff, 1 - alpha) if n else (NAN, NAN)
    method = BOOTSTRAP if n else NO_INTERVAL
    boot_width = boot_high_pc - boot_low_pc
    if n and (math.isnan(boot_width) or high_eff - low_eff > boot_width):
        boot_low_pc, boot_high_pc, method = low_eff, high_eff, WILSON_EFFECTIVE
    tost = stats.tost_p(k, n, margin)
    return Summary(
        pairs=pairs,
        judges=judges,
        judgements=n,
        excluded=excluded,
        correct=k,
        pass_rate=1 - pc_pair,
        pass_rate_pooled=1 - pc_pooled,
        wilson_low=low,
        wilson_high=high,
        boot_low=1 - boot_high_pc,
        boot_high=1 - boot_low_pc,
        interval_method=method,
        effective_n=n_eff,
        binomial_p=stats.binomial_p(k, n),
        tost_p=tost,
        margin=margin,
        equivalent=bool(n and tost < alpha),
        dprime=stats.dprime_2afc(pc_pooled, n),
        confusion=counts,
        position_bias=bias,
        order_consistency=consistency,
        exclusions=exclusions,
    )


def expand_by(frame: pd.DataFrame, by: Sequence[str]) -> list[str]:
    """Resolve ``--by`` names: ``demographics`` means every ``demo.*`` column, ``x``,
    ``model`` etc. are columns; unknown names raise ``KeyError`` with the name."""
    columns: list[str] = []
    for name in by:
        if name == "demographics":
            columns += demographic_columns(frame)
        elif name in frame.columns:
            columns.append(name)
        elif f"demo.{name}" in frame.columns:
            columns.append(f"demo.{name}")
        else:
            raise KeyError(name)
    return columns


def breakdown(
    frame: pd.DataFrame,
    column: str,
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
) -> pd.DataFrame:
    """One summary row per value of ``column`` over the test pairs (missing values shown
    as "(none)")."""
    return grouped(frame, [column], reps=reps, seed=seed, margin=margin)


def group_keys(values: pd.Series) -> pd.Series:
    """Display keys of a column: whole numbers without ``.0``, missing as ``(none)``."""
    codes, keys = _key_codes(values)
    return pd.Series(keys[codes] if len(codes) else [], index=values.index, dtype=object)


def _key_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A code a row for its :func:`group_keys` key (values with one key, one code), and
    the key of each code."""

    def key(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return NONE
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    # Each distinct value once: a million rows hold a handful.
    codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=False)
    same, keys = pd.factorize(np.array([key(value) for value in uniques], dtype=object))
    return same[codes].astype(np.int64), np.asarray(keys, dtype=object)


def _order(value: str) -> tuple[int, float, str]:
    """Numbers first, in numeric order, then text; ``(none)`` last."""
    if value == NONE:
        return (2, 0.0, value)
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def grouped(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
) -> pd.DataFrame:
    """One summary row per combination of ``columns`` over the test pairs, numbers in
    numeric order, missing values as "(none)"."""
    frame, test = _test_rows(frame)
    return _grouped_parts(frame, columns, [test], reps=reps, seed=seed, margin=margin)[0]


def grouped_by_judges(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
) -> list[tuple[str, pd.DataFrame]]:
    """:func:`grouped` of each part of :func:`test_parts`, with its title: the same
    tables, from the test rows read where they are and grouped once."""
    frame, test = _test_rows(frame)
    names, parts = _judge_rows(frame[list(JUDGE_COLUMNS)].iloc[test])
    tables = _grouped_parts(
        frame, columns, [test[part] for part in parts], reps=reps, seed=seed, margin=margin
    )
    return list(zip(names, tables, strict=True))


def _test_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """``frame`` with every column summarise reads, and the positions of its test-pair
    rows (not a copy of them: a table of millions is read where it is)."""
    frame = with_base_columns(frame)
    return frame, np.flatnonzero((frame["pair_kind"] == "test").to_numpy())


def _grouped_parts(
    frame: pd.DataFrame,
    columns: Sequence[str],
    parts: Sequence[np.ndarray],
    *,
    reps: int,
    seed: int,
    margin: float,
) -> list[pd.DataFrame]:
    """For each part of the test rows of ``frame`` (their positions, in file order),
    one summary row per combination of ``columns`` (see :func:`grouped`)."""
    columns = list(columns)
    if not any(len(part) for part in parts):
        return [_no_groups(frame, columns, margin) for _ in parts]
    keyed = [_key_codes(frame[column]) for column in columns]
    codes = np.zeros(len(frame), dtype=np.int64)
    for column, _ in keyed:
        codes = pd.factorize(codes * (int(column.max(initial=0)) + 1) + column)[0]
    table = _TestColumns(frame)
    tables = []
    for part in parts:
        # Each group's rows in file order, one slice of one stable sort; groups in
        # order of first appearance (codes number them so), as groupby gives.
        order = part[np.argsort(codes[part], kind="stable")]
        starts = np.flatnonzero(np.diff(codes[order], prepend=-1))
        ends = [*starts[1:], len(order)]
        rows = []
        for start, end in zip(starts, ends, strict=True):
            rows_of = order[start:end]
            first = rows_of[0]
            values = [keys[column[first]] for column, keys in keyed]
            summary = table.summary(rows_of, reps=reps, seed=seed, margin=margin)
            rows.append({**dict(zip(columns, values, strict=True)), **summary.row()})
        if not rows:
            tables.append(_no_groups(frame, columns, margin))
            continue
        rows.sort(key=lambda row: [_order(str(row[column])) for column in columns])
        tables.append(pd.DataFrame(rows).reset_index(drop=True))
    return tables


def _no_groups(frame: pd.DataFrame, columns: Sequence[str], margin: float) -> pd.DataFrame:
    empty = summarise(frame.iloc[0:0], reps=0, margin=margin).row()
    return pd.DataFrame(columns=[*columns, *empty])


class _TestColumns:
    """What :func:`summarise` reads of a table (each row's), as arrays of codes taken
    once, so that each group's summary is a few array operations on its test rows'
    positions rather than a table of its own (a million judgements make hundreds of
    groups)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.correct = frame["correct"].to_numpy(dtype=float)
        self.excluded = frame["excluded"].to_numpy(dtype=bool)
        answered = ~np.isnan(self.correct)
        self.usable = (
            ~self.excluded
            & answered
            & (frame["witness"].isna() | (frame["witness"] == "bot")).to_numpy()
        )
        self.pairs = pd.factorize(frame["pair_id"])[0].astype(np.int64)
        self.judges = pd.factorize(frame["judge_id"])[0].astype(np.int64)
        # One code per (judge, pair), missing ones alike (each factorized to -1).
        span = int(self.pairs.max(initial=0)) + 2
        self.asked = pd.factorize(self.judges * span + self.pairs + 1)[0]
        paired = (frame["judge_kind"] == "paired").to_numpy()
        self.chose = paired & frame["choice"].notna().to_numpy()
        self.chose_a = (frame["choice"] == "A").to_numpy()
        order = frame["order"]
        self.order = np.where(order.notna().to_numpy() & paired & answered, 2, -1)
        self.order[(order == "original").to_numpy() & (self.order == 2)] = 0
        self.order[(order == "swapped").to_numpy() & (self.order == 2)] = 1
        self.other_kinds = (
            (frame["label1"].notna() & frame["label2"].notna()) | frame["witness"].notna()
        ).to_numpy()

    def summary(self, rows: np.ndarray, *, reps: int, seed: int, margin: float) -> Summary:
        """:func:`summarise` of the rows at positions ``rows`` (in file order)."""
        used = rows[self.usable[rows]]
        correct = self.correct[used]
        pairs, judges = self.pairs[used], self.judges[used]
        if self.other_kinds[rows].any():
            # Single-transcript and single-witness verdicts: rare, counted as summarise does.
            counts = confusion(self.frame.iloc[rows])
        else:
            right = int(correct.sum())
            counts = Confusion(hh=right, mm=right, mh=len(used) - right, hm=len(used) - right)
        excluded = rows[self.excluded[rows]]
        chose = rows[self.chose[rows]]
        return _summary(
            correct,
            pd.factorize(pairs)[0].astype(np.int64),
            pd.factorize(judges)[0].astype(np.int64),
            pairs=int(np.unique(pairs[pairs >= 0]).size),
            judges=int(np.unique(judges[judges >= 0]).size),
            excluded=len(excluded),
            counts=counts,
            bias=float(self.chose_a[chose].mean()) if len(chose) else NAN,
            consistency=self._consistency(rows),
            exclusions=exclusion_counts(self.frame.iloc[excluded]) if len(excluded) else {},
            reps=reps,
            seed=seed,
            margin=margin,
            alpha=0.05,
        )

    def _consistency(self, rows: np.ndarray) -> float:
        """:func:`order_consistency` of the rows at ``rows``."""
        order = self.order[rows]
        if not (order >= 0).any():
            return NAN
        firsts = []
        for shown in (0, 1):
            asked = rows[order == shown]
            if not len(asked):
                return NAN
            keys, first = np.unique(self.asked[asked], return_index=True)
            firsts.append((keys, self.correct[asked[first]]))
        (original, said), (swapped, resaid) = firsts
        _, left, right = np.intersect1d(original, swapped, assume_unique=True, return_indices=True)
        if not len(left):
            return NAN
        return float(np.mean(said[left] == resaid[right]))


def condition_tables(
    frame: pd.DataFrame,
    *,
    reps: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
) -> list[tuple[str, pd.DataFrame]]:
    """The headline: one row per condition (model x mode x total turns); human judges in
    one table, each LLM judge (judge id, see :func:`judge_groups`) in its own.

    Returns ``(title, rows)`` per table; the rows carry the grouping columns and a
    readable ``condition`` label (see :func:`condition_label`).
    """
    tables = []
    for title, rows in grouped_by_judges(frame, CONDITION, reps=reps, seed=seed, margin=margin):
        labels = [
            condition_label({str(k): v for k, v in row.items()}) for row in rows.to_dict("records")
        ]
        rows.insert(0, "condition", labels)
        tables.append((f"{title}, one row per condition", rows))
    return tables


def judge_groups(frame: pd.DataFrame) -> pd.Series:
    """Who judged each row, as the score tables keep judges apart: ``Human judges``, or
    ``LLM judge <model> (<kind>)`` per LLM judge id, so that two runs of one judge model
    (say one asking both orders of every pair, one asking a random order) are never
    merged, where the first would weigh twice per pair; the judge id is named when one
    model and kind has several."""
    if frame.empty:
        return _judge_group_names(frame)
    codes, names = _judge_codes(frame)
    return pd.Series(names[codes], index=frame.index, dtype=object)


def _judge_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """A code a row for its :func:`judge_groups` name, and the name of each code."""
    # Worked out once per distinct judge (a million rows hold a few dozen), then spread.
    codes = combined_codes([frame[column] for column in JUDGE_COLUMNS])
    first = np.unique(codes, return_index=True)[1]
    same, names = pd.factorize(_judge_group_names(frame.iloc[first]).to_numpy())
    return same[codes], np.asarray(names, dtype=object)


def _judge_group_names(frame: pd.DataFrame) -> pd.Series:
    """:func:`judge_groups` of a table holding each judge once."""
    llm = frame["judge_type"] == "llm"
    named = (
        "LLM judge "
        + group_keys(frame["judge_model"])
        + " ("
        + group_keys(frame["judge_kind"])
        + ")"
    )
    runs = frame.loc[llm].groupby(named.loc[llm])["judge_id"].nunique()
    several = named.isin(runs.index[runs > 1]) & llm
    named = named.where(~several, named + ", judge id " + group_keys(frame["judge_id"]))
    humans = frame["judge_type"].map(JUDGE_TYPE_TITLES).fillna("Judges")
    return named.where(llm, humans)


JUDGE_TYPE_TITLES = {"human": "Human judges", "llm": "LLM judges"}


def judge_parts(frame: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """``frame`` split by :func:`judge_groups`: human judges first, then each LLM judge
    (one part at a time: together they are a copy of the frame)."""
    if frame.empty:
        return
    groups = judge_groups(frame)
    order = sorted(groups.unique(), key=lambda name: (name != "Human judges", name))
    for name in order:
        yield name, frame.loc[groups == name]


JUDGE_COLUMNS = ("judge_type", "judge_model", "judge_kind", "judge_id")
"""The columns :func:`judge_groups` reads."""


def test_parts(frame: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """:func:`judge_parts` of the test-pair rows of ``frame``, copying one part at a
    time (a table of millions is not copied whole first)."""
    test = (frame["pair_kind"] == "test").to_numpy()
    if not test.any():
        return
    rows = np.flatnonzero(test)
    names, parts = _judge_rows(frame[list(JUDGE_COLUMNS)].iloc[rows])
    for name, part in zip(names, parts, strict=True):
        yield name, frame.iloc[rows[part]]


def _judge_rows(frame: pd.DataFrame) -> tuple[list[str], list[np.ndarray]]:
    """The names of :func:`judge_groups` of ``frame`` (human judges first) and the
    positions of each one's rows."""
    if frame.empty:
        return [], []
    codes, names = _judge_codes(frame)
    order = sorted(range(len(names)), key=lambda code: (names[code] != "Human judges", names[code]))
    return [names[code] for code in order], [np.flatnonzero(codes == code) for code in order]


def condition_name(bot: Condition | None, *, x: int, n: int | None, turns: int | None) -> str:
    """The name of a condition for people: of the bot chat shown (``bot``), X of its live
    turns shown at total turn index ``turns`` (N + live_to). Every table, figure and
    ledger row names a condition so (a score table from its columns, through
    :func:`condition_label`), so their rows join."""
    bot = bot or Condition()

    def text(value: str | None) -> str:
        return NONE if value in (None, "") else str(value)

    row: dict[str, Any] = {
        "model": text(bot.model),
        "mode": bot.mode,
        "interrogator": text(bot.interrogator),
        "n": NONE if n is None else n,
        "x": x,
        "turns": NONE if turns is None else turns,
    }
    return condition_label(row)


def chain_name(persona: str, model: str, mode: str, n: int) -> str:
    """The name for people of a pseudo-dialogue chain, which the conditions of its bot
    at N = ``n`` share (their X apart): said as :func:`condition_name` says a condition
    (model, then mode), so a cost table lists both alike."""
    return f"{model}, {mode}, pseudo-dialogue of N={n} turns (persona {persona})"


def condition_label(row: dict[str, Any]) -> str:
    """``model, mode, turn 110 (N=100, X=10)``: a condition as people read it, from the
    score table's condition columns of a row (see :func:`condition_name`); a chat with a
    simulated interrogator (User A a model, not a person) says so."""
    turns = row.get("turns", NONE)
    shown = "?" if turns == NONE else turns
    n = row.get("n", NONE)
    model = str(row.get("model", NONE))
    if is_baseline(model):
        model += " (baseline)"
    label = f"{model}, {row.get('mode', NONE)}, turn {shown} ("
    label += f"N={'?' if n == NONE else n}, X={row.get('x', NONE)})"
    interrogator = str(row.get("interrogator", NONE))
    if interrogator not in (NONE, "human"):
        label += f", simulated User A ({interrogator})"
    return label


def is_baseline(model: str) -> bool:
    """True for a baseline bot (a manipulation check, not a contender: marked in reports),
    as its provider's registry entry says (ELIZA's)."""
    provider = provider_of(model) if "/" in model else None
    return provider is not None and provider.baseline
