"""``sdtt prolific review`` by the spec's ``[prolific.review]`` rules, and how every
``sdtt prolific`` command meets a bad token, a study in the wrong state or a refused call,
against the local fake of Prolific's API (tests/fakes/prolific_fake.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.errors import BadRequestError
from sdtt.models.retry import RetryPolicy
from sdtt.serve import prolific
from sdtt.serve.prolific import ProlificClient, Record
from sdtt.serve.spec import read_study
from tests.fakes.prolific_fake import TOKEN, Killed, ProlificFake, error
from tests.serve.helpers import write_spec

MESSAGE = (
    "We have no record of you on our chat server, so this submission cannot be accepted: "
    "please contact us if you did take part."
)
PROLIFIC = """
[prolific]
description = "Chat, then say whether your partner was a person."
reward = 150
estimated_minutes = 8
places = 3
project = "proj-1"
token_env = "SDTT_TEST_PROLIFIC"
api_url = "{url}"
bonus_per_point = 0.10
"""
POINTS = (
    "participant,session,outcome,completion_code,chats,finished,correct_verdict,points\n"
    "P1,s1,finished,CODE-123,1,1,1,3\nP2,s2,finished,CODE-123,1,1,0,2\n"
)


def _spec(tmp_path: Path, fake: ProlificFake, review: str = "") -> Path:
    path = write_spec(tmp_path, turns=1)
    path.write_text(path.read_text() + PROLIFIC.format(url=fake.url) + review)
    return path


def _published(tmp_path: Path, fake: ProlificFake, review: str = "") -> tuple[Path, str]:
    """A published study P1 and P2 took part in (no server store: the server never saw
    them, so review finds both 'no_record')."""
    spec = _spec(tmp_path, fake, review)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    assert main(["prolific", "publish", str(spec)]) == 0
    study_id = Record.of(read_study(spec)).require_study()
    for pid in ("P1", "P2"):
        fake.start(study_id, pid)
        fake.complete(study_id, pid, "CODE-123")
    (tmp_path / "points.csv").write_text(POINTS)
    return spec, study_id


def _one_line(err: str) -> str:
    assert "\n\n" not in err.strip() and err.count("error:") == 1 and "Traceback" not in err, err
    return " ".join(line.strip() for line in err.strip().splitlines())


def _rule(body: str) -> str:
    return f"\n[prolific.review]\n{body}\n"


REJECT = _rule(f'no_record = {{ action = "reject", category = "NO_DATA", message = "{MESSAGE}" }}')
RETURN = _rule('no_record = { action = "return", reasons = ["Didn\'t finish the study"] }')


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        (
            'no_record = { action = "reject", message = "' + MESSAGE + '" }',
            "no_record",
            "needs category",
        ),
        (
            'wrong_code = { action = "reject", category = "BAD_CODE", message = "Wrong code." }',
            "wrong_code",
            "at least 100 characters",
        ),
        (
            'wrong_code = { action = "reject", category = "BAD", message = "' + MESSAGE + '" }',
            "wrong_code.category",
            "TOO_QUICKLY",
        ),
        ('not_done = { action = "return" }', "not_done", "needs reasons"),
        (
            'timeout = { action = "approve", reasons = ["x"] }',
            "timeout",
            "with action 'return' only",
        ),
        ('other_session = { action = "approve" }', "prolific.review", "never approved by a rule"),
        ('late = { action = "manual" }', "prolific.review", "no_record"),
        ('finished = { action = "pay" }', "finished.action", "reject"),
    ],
)
def test_a_bad_review_rule_is_one_line_naming_its_field(
    tmp_path: Path,
    fake: ProlificFake,
    capsys: pytest.CaptureFixture[str],
    body: str,
    field: str,
    said: str,
) -> None:
    spec = _spec(tmp_path, fake, _rule(body))
    assert main(["prolific", "status", str(spec)]) != 0
    line = _one_line(capsys.readouterr().err)
    assert field in line and said in line and "study.toml" in line, line
    assert fake.server is not None and not fake.server.requests  # refused before any call


def test_without_rules_nothing_is_rejected_or_asked(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, study_id = _published(tmp_path, fake)
    assert main(["prolific", "review", str(spec), "--apply"]) == 0
    out = capsys.readouterr().out
    assert "P1: left for you to review: the server has no record of this participant" in out
    assert not fake.rejected and not fake.return_requests
    assert {s["status"] for s in fake.submissions[study_id]} == {"AWAITING REVIEW"}


def test_an_outcome_rule_overrides_the_approval_of_an_agreeing_submission(
    tmp_path: Path, fake: ProlificFake
) -> None:
    spec = _spec(tmp_path, fake, _rule('finished = { action = "manual" }'))
    verdict = prolific.Verdict("sub1", "P1", True, "", None, "finished")
    other = prolific.Verdict("sub2", "P2", True, "", None, "timeout")
    study = read_study(spec)
    actions = [d.action for d in prolific.decide(study, [verdict, other], Record.of(study))]
    assert actions == ["manual", "approve"]


@pytest.mark.parametrize("rules", [REJECT, RETURN], ids=["reject", "return"])
@pytest.mark.parametrize("step", ["recorded", "call"])
def test_a_kill_while_reviewing_never_acts_twice(
    tmp_path: Path,
    fake: ProlificFake,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    rules: str,
    step: str,
) -> None:
    spec, study_id = _published(tmp_path, fake, rules)
    sent = "reject" if rules == REJECT else "request_return"
    with monkeypatch.context() as patch:
        if step == "call":  # Prolific acted, the answer never came back
            original: Callable[..., Any] = getattr(ProlificClient, sent)

            def dying(*args: Any, **kwargs: Any) -> None:
                original(*args, **kwargs)
                raise Killed

            patch.setattr(ProlificClient, sent, dying)
        else:  # killed once the decision was recorded, before the call
            saving = Record.save

            def die_after_save(self: Record) -> None:
                saving(self)
                raise Killed

            patch.setattr(Record, "save", die_after_save)
        with pytest.raises(Killed):
            main(["prolific", "review", str(spec), "--apply"])
    capsys.readouterr()
    for _ in range(2):  # the researcher runs it again, twice
        assert main(["prolific", "review", str(spec), "--apply"]) == 0
    out = capsys.readouterr().out
    first = fake.submissions[study_id][0]["id"]
    if rules == REJECT:
        # Rejecting is idempotent on Prolific's side: one killed before the call is sent
        # again; one that went out is REJECTED and no longer awaits review.
        assert fake.rejected == {s["id"]: 1 for s in fake.submissions[study_id]}
    elif step == "call":
        assert fake.return_requests == {s["id"]: 1 for s in fake.submissions[study_id]}
    else:
        # A return request a stopped run was sending: sdtt cannot know whether it went
        # out, so it never asks again and says so.
        assert fake.return_requests[first] == 0
        assert "P1: a stopped run was asking them to return their submission" in out
        assert fake.return_requests == {fake.submissions[study_id][1]["id"]: 1}
    record = Record.of(read_study(spec))
    assert record.decisions[first]["action"] == ("reject" if rules == REJECT else "return")


def test_a_refused_rejection_is_struck_from_the_record_and_sent_later(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, _ = _published(tmp_path, fake, REJECT)
    fake.refuse[("POST", "/transition/")] = error(
        422, "Unprocessable", {"message": ["Rejections are closed for this study."]}
    )
    assert main(["prolific", "review", str(spec), "--apply"]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "(HTTP 422)" in line and "message: Rejections are closed" in line
    assert not fake.rejected and not Record.of(read_study(spec)).decisions
    assert main(["prolific", "review", str(spec), "--apply"]) == 0
    assert sum(fake.rejected.values()) == 2


def test_the_fake_enforces_what_prolific_requires_of_a_rejection(
    tmp_path: Path, fake: ProlificFake
) -> None:
    spec, study_id = _published(tmp_path, fake)
    section = read_study(spec).spec.prolific
    assert section is not None
    client = ProlificClient(section, TOKEN, policy=RetryPolicy(max_attempts=1))
    first = fake.submissions[study_id][0]["id"]
    with pytest.raises(BadRequestError, match=r"message: .*at least 100 characters"):
        client.reject(first, "BAD_CODE", "Too short.")
    with pytest.raises(BadRequestError, match=r"rejection_category"):
        client.reject(first, "RUDE", MESSAGE)
    with pytest.raises(BadRequestError, match=r"request_return_reasons"):
        client.request_return(first, [])
    assert not fake.rejected
    client.reject(first, "NO_DATA", MESSAGE)
    client.reject(first, "NO_DATA", MESSAGE)  # idempotent: the second is ignored
    assert fake.rejected == {first: 1}


def test_every_page_of_submissions_is_read(tmp_path: Path, fake: ProlificFake) -> None:
    spec, study_id = _published(tmp_path, fake)
    assert main(["prolific", "places", str(spec), "5"]) == 0  # up: a published study can
    for pid in ("P3", "P4", "P5"):
        fake.start(study_id, pid)  # five submissions: three pages of two
    section = read_study(spec).spec.prolific
    assert section is not None
    client = ProlificClient(section, TOKEN)
    assert fake.server is not None
    before = len(fake.server.requests)
    got = client.submissions(study_id)
    assert [s["participant_id"] for s in got] == ["P1", "P2", "P3", "P4", "P5"]
    pages = [r.path for r in fake.server.requests[before:]]
    assert len(pages) == 3 and pages[-1].endswith("?page=3&page_size=2")


# -- a bad token, a study in the wrong state, a refused call: one line, nothing changes --

COMMANDS: dict[str, tuple[list[str], tuple[str, str]]] = {
    # command -> its arguments, and the first call it makes that would change something
    "publish": ([], ("POST", "/transition/")),
    "status": ([], ("GET", "/submissions/")),
    "places": (["9"], ("PATCH", "/")),
    "review": (["--apply"], ("POST", "/transition/")),  # the rule's rejection
    "bonus": (["{points}", "--pay"], ("POST", "/bonus-payments/")),
}


def _state(fake: ProlificFake, spec: Path) -> str:
    """Everything a command could change: the fake's studies, submissions, bonuses and
    payments, and the local record."""
    record = spec.parent / f"{read_study(spec).name}.prolific.json"
    seen = {
        "studies": fake.studies,
        "submissions": fake.submissions,
        "bulk": fake.bulk,
        "paid": fake.paid,
        "rejected": fake.rejected,
        "returns": fake.return_requests,
        "record": json.loads(record.read_text()) if record.exists() else None,
    }
    return json.dumps(seen, sort_keys=True, default=str)


def _argv(command: str, spec: Path) -> list[str]:
    extra = [a.replace("{points}", str(spec.parent / "points.csv")) for a in COMMANDS[command][0]]
    return ["prolific", command, str(spec), *extra]


@pytest.mark.parametrize("command", ["create", *COMMANDS])
def test_a_bad_token_gets_one_line_and_changes_nothing(
    tmp_path: Path,
    fake: ProlificFake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    if command == "create":
        spec = _spec(tmp_path, fake)
        argv = ["prolific", "create", str(spec), "--url", "https://chat.example.org"]
    else:
        spec, _ = _published(tmp_path, fake, REJECT)
        argv = _argv(command, spec)
        if command == "publish":
            study = next(iter(fake.studies.values()))
            study["status"] = "UNPUBLISHED"  # a draft, so only the token stands in the way
    capsys.readouterr()
    before = _state(fake, spec)
    monkeypatch.setenv("SDTT_TEST_PROLIFIC", "token_wrong-but-secret-123")
    assert main(argv) != 0
    line = _one_line(capsys.readouterr().err)
    assert "refused the token (HTTP 401" in line and "SDTT_TEST_PROLIFIC" in line
    assert "secret" not in line
    assert _state(fake, spec) == before


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_refused_call_gets_one_line_and_changes_nothing(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    if command == "publish":
        spec = _spec(tmp_path, fake)
        assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    else:
        spec, _ = _published(tmp_path, fake, REJECT)
    capsys.readouterr()
    before = _state(fake, spec)
    fake.refuse[COMMANDS[command][1]] = error(
        400, "Bad request", {"detail": ["Your workspace balance is too low."]}
    )
    assert main(_argv(command, spec)) != 0
    line = _one_line(capsys.readouterr().err)
    assert "Prolific refused" in line and "balance is too low" in line, line
    assert not fake.refuse  # the refusal met the command's call
    assert _state(fake, spec) == before


@pytest.mark.parametrize(
    ("command", "argv", "said"),
    [
        ("places", ["5"], "its places can only go up from 6"),
        ("review", ["--apply"], "is UNPUBLISHED: nobody has submitted yet"),
        ("bonus", ["{points}", "--pay"], "is UNPUBLISHED: nobody has taken part yet"),
    ],
)
def test_a_study_in_the_wrong_state_gets_one_line_and_changes_nothing(
    tmp_path: Path,
    fake: ProlificFake,
    capsys: pytest.CaptureFixture[str],
    command: str,
    argv: list[str],
    said: str,
) -> None:
    spec = _spec(tmp_path, fake, REJECT)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    (tmp_path / "points.csv").write_text(POINTS)
    if command == "places":
        assert main(["prolific", "places", str(spec), "6"]) == 0  # a draft's places: any
        assert main(["prolific", "publish", str(spec)]) == 0
    capsys.readouterr()
    before = _state(fake, spec)
    extra = [a.replace("{points}", str(tmp_path / "points.csv")) for a in argv]
    assert main(["prolific", command, str(spec), *extra]) != 0
    assert said in _one_line(capsys.readouterr().err)
    assert _state(fake, spec) == before
    assert fake.server is not None
    assert {r.method for r in fake.server.requests[-1:]} == {"GET"}  # it only looked


def test_the_docs_example_rules_are_a_valid_spec(tmp_path: Path, fake: ProlificFake) -> None:
    page = Path(__file__).resolve().parents[2] / "docs/how-to/prolific.md"
    block = page.read_text(encoding="utf-8").split("```toml\n", 1)[1].split("```", 1)[0]
    tables = block[block.index("[prolific]") :]
    spec = _spec(tmp_path, fake)
    text = spec.read_text()
    spec.write_text(text[: text.index("[prolific]")] + tables)
    section = read_study(spec).spec.prolific
    assert section is not None
    assert {key: rule.action for key, rule in section.review.items()} == {
        "wrong_code": "reject",
        "no_record": "return",
        "partner_left": "manual",
    }
