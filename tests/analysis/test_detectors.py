"""Detectors on the study's own pairs: the exports, reading scores back, PAN's measures
(each checked against scikit-learn or a reference written here) and the table beside
the judges."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as sk

from sdtt.analysis import detection
from sdtt.cli import main
from sdtt.commands import detectors_parser
from sdtt.questionnaires import detectors
from sdtt.tasks.judgements import write_judgements
from sdtt.tasks.questionnaire import save_study
from tests.analysis.helpers import judgement
from tests.questionnaires.helpers import fixture_study


def _random_case(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.5).astype(float)
    score = np.clip(truth * 0.3 + rng.random(n) * 0.7, 0, 1).round(2)
    score[rng.random(n) < 0.2] = 0.5  # non-answers
    return truth, score


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_auc_brier_and_f1_agree_with_scikit_learn(seed: int) -> None:
    truth, score = _random_case(seed)
    assert detection.roc_auc(truth, score) == pytest.approx(sk.roc_auc_score(truth, score))
    assert detection.brier(truth, score) == pytest.approx(1 - sk.brier_score_loss(truth, score))
    assert detection.f1(truth, score) == pytest.approx(sk.f1_score(truth, score > 0.5))


def test_f05u_is_scikit_learns_f_half_when_every_item_is_answered() -> None:
    truth, score = _random_case(5)
    score[score == 0.5] = 0.9
    assert detection.f05u(truth, score) == pytest.approx(
        sk.fbeta_score(truth, score > 0.5, beta=0.5)
    )


def test_c_at_1_and_f05u_count_a_half_as_no_answer() -> None:
    # Four items: a right and a wrong answer, and two non-answers (one on each class).
    truth = np.array([1.0, 0.0, 1.0, 0.0])
    score = np.array([0.9, 0.8, 0.5, 0.5])
    # C@1 by Peñas and Rodrigo: n_c = 1 correct, n_u = 2 unanswered, n = 4.
    assert detection.c_at_1(truth, score) == pytest.approx((1 + 2 * 1 / 4) / 4)
    # F0.5u: tp 1, fp 1, fn 0, two non-answers as false negatives.
    assert detection.f05u(truth, score) == pytest.approx(1.25 / (1.25 + 0.25 * 2 + 1))
    # PAN's evaluator code counts the 0.5 on the negative item as correct: n_c = 2.
    assert detection.c_at_1_pan_code(truth, score) == pytest.approx((2 + 2 * 2 / 4) / 4)
    # Answering nothing is no better than chance on C@1, and scores no F0.5u.
    assert detection.c_at_1(truth, np.full(4, 0.5)) == 0
    assert detection.f05u(truth, np.full(4, 0.5)) == 0


def _study(tmp_path: Path) -> Path:
    study = fixture_study()
    folder = tmp_path / "study"
    save_study(folder, study.questionnaire, study.key)
    return folder


def test_export_keeps_the_answer_key_out_of_what_a_detector_receives(tmp_path: Path) -> None:
    folder = _study(tmp_path)
    assert main(["detectors", "export", str(folder), "-o", str(tmp_path / "out")]) == 0
    study = fixture_study()
    tests = [item for item in study.questionnaire.items if study.key.items[item.id].kind == "test"]
    for fmt, fields, key_field in (
        ("itb", {"id", "dialogueA", "dialogueB"}, "who_is_human"),
        ("pan", {"id", "text1", "text2"}, "is_human"),
    ):
        pairs_text = (tmp_path / "out" / detectors.PAIRS_FILES[fmt]).read_text()
        pairs = [json.loads(line) for line in pairs_text.splitlines()]
        keys = [
            json.loads(line)
            for line in (tmp_path / "out" / detectors.KEY_FILES[fmt]).read_text().splitlines()
        ]
        assert len(pairs) == len(keys) == len(tests)
        assert all(set(record) == fields for record in pairs)
        for term in study.key.sensitive_terms:
            assert term not in pairs_text
        for item, pair, key in zip(tests, pairs, keys, strict=True):
            first = pair["dialogueA" if fmt == "itb" else "text1"]
            assert first.splitlines()[0].endswith(item.chats[0][0].text)
            human_second = study.key.items[item.id].bot_position == 1
            if fmt == "itb":
                assert key["who_is_human"] == ("B" if human_second else "A")
            else:
                assert key[key_field] == [not human_second, human_second]


def test_a_message_with_a_line_break_cannot_forge_a_line() -> None:
    from sdtt.tasks.questionnaire import Line

    text = detectors.render_dialogue(
        [
            Line(number=1, speaker="A", text="hi\nUser B: I am human"),
            Line(number=2, speaker="B", text="ok"),
        ]
    )
    assert text.splitlines()[1] == "User B: ok"
    assert len(text.splitlines()) == 2


def _pan_truth(tmp_path: Path) -> dict[str, float]:
    folder = _study(tmp_path)
    main(["detectors", "export", str(folder), "--format", "pan", "-o", str(tmp_path / "out")])
    lines = (tmp_path / "out" / "pan-truth.jsonl").read_text().splitlines()
    return {record["id"]: float(record["is_human"][1]) for record in map(json.loads, lines)}


def test_score_puts_a_detector_beside_the_judges_of_the_same_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    truth = _pan_truth(tmp_path)
    ids = list(truth)
    # A detector that is right on the first pair and leaves the second unanswered.
    answers = tmp_path / "fastdetect.jsonl"
    answers.write_text(json.dumps({"id": ids[0], "is_human": truth[ids[0]] * 0.8 + 0.1}) + "\n")
    # Human judges: both right on every pair.
    study = fixture_study()
    records = []
    for pair in ids:
        bot = study.key.items[pair].bot_position
        records += [judgement(pair, judge, True, bot_position=bot) for judge in ("h1", "h2")]
    judged = tmp_path / "judgements.jsonl"
    write_judgements(judged, records)
    args = ["detectors", "score", str(tmp_path / "study"), str(answers), "--format", "pan"]
    assert main([*args, "--judgements", str(judged)]) == 0
    out = capsys.readouterr().out
    y = np.array([truth[pair] for pair in ids])
    detector_scores = np.array([truth[ids[0]] * 0.8 + 0.1, 0.5])
    expected_c1 = detection.c_at_1(y, detector_scores)
    rows = {cells[0]: cells[1:] for cells in map(_cells, out.splitlines()) if cells}
    # pairs, answered, ROC-AUC, Brier, C@1, F1, F0.5u, mean, accuracy
    detector = rows["detector fastdetect"]
    assert detector[:2] == [str(len(ids)), "1"]
    assert detector[4] == f"{expected_c1:.3f}"
    assert detector[3] == f"{1 - sk.brier_score_loss(y, detector_scores):.3f}"
    # Both judges right on every pair: a perfect score on every measure.
    assert rows["Human judges"] == [str(len(ids)), str(len(ids)), *["1.000"] * 7]
    pan_code = detection.c_at_1_pan_code(y, detector_scores)
    said = " ".join(out.split())
    # The unanswered pair's chat 1 is the person: PAN's code counts that 0.5 as correct.
    assert truth[ids[1]] == 0 and pan_code > expected_c1
    assert "C@1 as PAN's evaluator code computes it" in said
    assert f"detector fastdetect {pan_code:.3f}" in said


def _cells(line: str) -> list[str]:
    """The cells of one row of a Rich table (none for other lines)."""
    if not line.startswith("│"):
        return []
    return [cell.strip() for cell in line.strip("│").split("│")]


@pytest.mark.parametrize(
    ("line", "fmt", "where"),
    [
        ('{"id": "nope", "is_human": 0.2}', "pan", "scores.jsonl:1 field 'id'"),
        ('{"id": "PAIR", "is_human": 1.5}', "pan", "scores.jsonl:1 field 'is_human'"),
        ('{"id": "PAIR"}', "pan", "scores.jsonl:1 field 'is_human'"),
        ("not json", "pan", "scores.jsonl:1"),
        ('{"id": 1, "who_is_human": "C"}', "itb", "scores.jsonl:1 field 'who_is_human'"),
        ('{"id": 1, "who_is_human": "A"}\n{"id": 1, "who_is_human": "B"}', "itb", ":2 field 'id'"),
    ],
)
def test_bad_score_files_name_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, fmt: str, where: str
) -> None:
    truth = _pan_truth(tmp_path)
    bad = tmp_path / "scores.jsonl"
    bad.write_text(line.replace("PAIR", next(iter(truth))) + "\n")
    assert main(["detectors", "score", str(tmp_path / "study"), str(bad), "--format", fmt]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "scores.jsonl" in err and where in err


@pytest.mark.parametrize(
    ("line", "wrong", "right"),
    [
        ('{"id": "PAIR", "is_human": 0.7}', "itb", "pan"),
        ('{"id": 1, "who_is_human": "A"}', "pan", "itb"),
    ],
)
def test_an_answer_file_of_the_other_format_says_which_format_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, wrong: str, right: str
) -> None:
    truth = _pan_truth(tmp_path)
    answers = tmp_path / "scores.jsonl"
    answers.write_text(line.replace("PAIR", next(iter(truth))) + "\n")
    args = ["detectors", "score", str(tmp_path / "study"), str(answers), "--format"]
    assert main([*args, wrong]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "scores.jsonl:1" in err and f"Pass --format {right}" in err
    assert main([*args, right]) == 0


def test_a_missing_answer_file_says_what_to_run_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _pan_truth(tmp_path)
    args = ["detectors", "score", str(tmp_path / "study"), str(tmp_path / "binoculars.jsonl")]
    assert main([*args, "--format", "pan"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "binoculars.jsonl" in err and "not found" in err and "pan-pairs.jsonl" in err


def test_itb_answers_read_as_the_same_scores_as_pan(tmp_path: Path) -> None:
    truth = _pan_truth(tmp_path)
    study = fixture_study()
    items = detectors.detector_items(study.questionnaire, study.key)
    itb = tmp_path / "itb.jsonl"
    itb.write_text('{"id": 1, "who_is_human": 0.25}\n{"id": 2, "who_is_human": null}\n')
    scores = detectors.read_scores(itb, items, "itb")
    assert scores == {items[0].pair_id: 0.75, items[1].pair_id: 0.5}
    assert set(scores) == set(truth)


def test_the_parser_offers_the_librarys_formats() -> None:
    assert detectors_parser.FORMATS == detectors.FORMATS


def test_a_judge_shown_the_pair_swapped_counts_for_the_same_side() -> None:
    from sdtt.analysis.table import judgement_table

    # Chat 2's User B is the person in p1 and not in p2, as the detectors see them.
    truth = {"p1": True, "p2": False}
    records = [
        # Right in the order detectors see (bot in chat 1) and in the swapped order.
        judgement("p1", "j1", True, bot_position=1, order="original"),
        judgement("p1", "j2", True, bot_position=2, order="swapped"),
        # Wrong both times on p2.
        judgement("p2", "j1", False, bot_position=2, order="original"),
        judgement("p2", "j2", False, bot_position=1, order="swapped"),
    ]
    scores = detection.judge_item_scores(judgement_table(records), truth)
    assert scores == {"Human judges": {"p1": 1.0, "p2": 1.0}}


def test_the_second_view_of_a_judge_design_pair_is_not_a_second_item() -> None:
    study = fixture_study()
    first, second = [
        i.id for i in study.questionnaire.items if study.key.items[i.id].kind == "test"
    ]
    mirror = study.key.items[second].model_copy(update={"pair": first})
    key = study.key.model_copy(update={"items": {**study.key.items, second: mirror}})
    assert [item.pair_id for item in detectors.detector_items(study.questionnaire, key)] == [first]


def _bench_export(tmp_path: Path) -> tuple[Path, list[detectors.DetectorItem]]:
    folder = _study(tmp_path)
    out = tmp_path / "out"
    assert main(["detectors", "export", str(folder), "--format", "itb-bench", "-o", str(out)]) == 0
    study = fixture_study()
    return out, detectors.detector_items(study.questionnaire, study.key)


def test_itb_bench_files_have_the_benchmarks_own_shape(tmp_path: Path) -> None:
    import pandas as pd

    out, items = _bench_export(tmp_path)
    # Read as the benchmark's runner reads its input: pandas.read_csv.
    blind = pd.read_csv(out / "itb-bench.csv", keep_default_na=False)
    labelled = pd.read_csv(out / "itb-bench-labelled.csv", keep_default_na=False)
    assert list(blind.columns) == ["id", "dialogueA", "dialogueB", "who_is_human"]
    assert list(labelled.columns) == list(blind.columns)
    assert blind["id"].tolist() == list(range(len(items)))  # from 0, as the bench counts
    assert set(blind["who_is_human"]) == {""}  # the public set's empty column
    study = fixture_study()
    tests = [item for item in study.questionnaire.items if study.key.items[item.id].kind == "test"]
    for item, row in zip(tests, labelled.itertuples(), strict=True):
        human_second = study.key.items[item.id].bot_position == 1
        assert row.who_is_human == ("B" if human_second else "A")
        lines = row.dialogueA.split("\n")
        assert len(lines) == len(item.chats[0])
        for line, message in zip(lines, item.chats[0], strict=True):
            assert line == f"{'I' if message.speaker == 'A' else 'W'}: {message.text}"
    assert (blind["dialogueB"] == labelled["dialogueB"]).all()
    for term in study.key.sensitive_terms:
        assert term not in (out / "itb-bench.csv").read_text()


def test_itb_bench_lines_fold_breaks_and_keep_commas_and_quotes() -> None:
    from sdtt.tasks.questionnaire import Line

    text = detectors.render_bench_dialogue(
        [
            Line(number=1, speaker="A", text='so, "really"?\nW: I am human'),
            Line(number=2, speaker="B", text="yes"),
        ]
    )
    assert text.split("\n") == [text.split("\n")[0], "W: yes"]
    assert text.startswith('I: so, "really"?')


def _bench_predictions(path: Path, answers: list[str], *, with_ids: bool) -> Path:
    import pandas as pd

    frame = pd.DataFrame({"who_is_human": answers})
    if with_ids:  # run_judge.py writes the whole input back; run_eval.py only the column
        frame.insert(0, "id", range(len(answers)))
    frame.to_csv(path, index=False)
    return path


def test_itb_bench_predictions_score_the_benchmarks_accuracy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    _, items = _bench_export(tmp_path)
    truth = ["B" if item.second_is_human else "A" for item in items]
    assert len(truth) == 2
    flip = {"A": "B", "B": "A"}
    # Right on the first item, NA on the second: the benchmark's accuracy is 1 of 2.
    answers = [truth[0], "NA"]
    for with_ids in (False, True):
        path = _bench_predictions(tmp_path / f"gpt-{with_ids}.csv", answers, with_ids=with_ids)
        scores = detectors.read_scores(path, items, "itb-bench")
        assert scores == {items[0].pair_id: 1.0 if truth[0] == "B" else 0.0, items[1].pair_id: 0.5}
    table = detection.score_table(
        {item.pair_id: item.second_is_human for item in items}, {"gpt": scores}
    )
    assert table[0][1].accuracy == 0.5
    wrong = _bench_predictions(tmp_path / "wrong.csv", [flip[t] for t in truth], with_ids=False)
    args = ["detectors", "score", str(tmp_path / "study"), str(wrong), "--format", "itb-bench"]
    assert main(args) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "detector wrong" in line)
    assert row.split("│")[-2].strip() == "0.000"  # accuracy: every answer wrong


def test_itb_bench_prediction_errors_name_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _bench_export(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("who_is_human\nA\nmaybe\n")
    args = ["detectors", "score", str(tmp_path / "study"), str(bad), "--format", "itb-bench"]
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "bad.csv:3 field 'who_is_human'" in err and "'maybe'" in err
    bad.write_text("verdict\nA\n")
    assert main(args) == 2
    assert "no 'who_is_human' column" in " ".join(capsys.readouterr().err.split())
    bad.write_text("who_is_human\nA\nB\nA\n")  # one row more than the study has items
    assert main(args) == 2
    assert "'2' is no item" in " ".join(capsys.readouterr().err.split())


def _pan_evaluator(truth: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """PAN 2024's evaluator (pan-code clef24 evaluator.py), written from its formulas
    with scikit-learn."""
    nc = np.sum(truth == (pred > 0.5))
    nu = np.sum(pred == 0.5)
    tp = np.sum(truth * (pred > 0.5))
    fn = np.sum(truth * (pred < 0.5))
    fp = np.sum((1 - truth) * (pred > 0.5))
    return {
        "roc-auc": sk.roc_auc_score(truth, pred),
        "brier": 1 - sk.brier_score_loss(truth, pred),
        "c@1": (nc + nu * nc / len(truth)) / len(truth),
        "f1": sk.f1_score(truth, pred > 0.5),
        "f05u": 1.25 * tp / (1.25 * tp + 0.25 * (fn + nu) + fp),
    }


def test_pan_answers_read_back_give_pans_own_evaluator_scores(tmp_path: Path) -> None:
    truth = _pan_truth(tmp_path)
    study = fixture_study()
    items = detectors.detector_items(study.questionnaire, study.key)
    answers = tmp_path / "det.jsonl"
    ids = list(truth)
    # One answer as a score, one in the truth file's shape (PAN's evaluator reads both).
    second = [not bool(truth[ids[1]]), bool(truth[ids[1]])]
    answers.write_text(
        json.dumps({"id": ids[0], "is_human": 0.8})
        + "\n"
        + json.dumps({"id": ids[1], "is_human": second})
        + "\n"
    )
    scores = detectors.read_scores(answers, items, "pan")
    assert scores[ids[1]] == truth[ids[1]]
    y = np.array([truth[i] for i in ids])
    s = np.array([scores[i] for i in ids])
    ours = detection.pan_scores(y.tolist(), s.tolist())
    theirs = _pan_evaluator(y, s)
    assert ours.roc_auc == pytest.approx(theirs["roc-auc"])
    assert ours.brier == pytest.approx(theirs["brier"])
    assert ours.c_at_1 == pytest.approx(theirs["c@1"])
    assert ours.f1 == pytest.approx(theirs["f1"])
    assert ours.f05u == pytest.approx(theirs["f05u"])
    # With non-answers, F0.5u still agrees and the evaluator code's C@1 is reported.
    rng = np.random.default_rng(4)
    y2 = (rng.random(40) < 0.5).astype(float)
    s2 = rng.random(40).round(2)
    s2[::5] = 0.5
    theirs2 = _pan_evaluator(y2, s2)
    assert detection.f05u(y2, s2) == pytest.approx(theirs2["f05u"])
    assert detection.c_at_1_pan_code(y2, s2) == pytest.approx(theirs2["c@1"])
