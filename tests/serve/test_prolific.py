"""``sdtt prolific``: a serve study created, published and watched on Prolific, against a
local fake of Prolific's API (tests/fakes/prolific_fake.py), with participants played
through the real server on trio's virtual clock."""

from __future__ import annotations

import csv
import json
import logging
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import trio

from sdtt.cli import main
from sdtt.errors import AuthenticationError, BadRequestError, ServerError
from sdtt.models.retry import RetryPolicy
from sdtt.serve.prolific import ProlificClient, Record, codes_by_outcome, draft_body
from sdtt.serve.spec import read_study
from tests.fakes.http_fake import ScriptedReply
from tests.fakes.prolific_fake import TOKEN, ProlificFake, error, running
from tests.serve.helpers import make_server, write_spec
from tests.serve.test_two_party import play_bot_game

CODES = """
[study.completion_codes]
timeout = "CODE-TIMEOUT"
partner_left = "CODE-LEFT"

[study.points]
finished = 1
"""

PROLIFIC = """
[prolific]
description = "Chat for five minutes, then say whether your partner was a person."
reward = 150
estimated_minutes = 8
places = 4
project = "proj-1"
token_env = "SDTT_TEST_PROLIFIC"
api_url = "{url}"
bonus_per_point = 0.10
filters = [{{ filter_id = "current-country-of-residence", selected_values = ["1"] }}]
"""


MESSAGE = (
    "The completion code you entered is not the one our chat server gave you at the end "
    "of the study, so we cannot accept this submission."
)
REVIEW_RULES = f"""
[prolific.review]
wrong_code = {{ action = "reject", category = "BAD_CODE", message = "{MESSAGE}" }}
no_record = {{ action = "return", reasons = ["Didn't finish the study"] }}
"""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProlificFake]:
    monkeypatch.setenv("SDTT_TEST_PROLIFIC", TOKEN)
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "3")
    state = ProlificFake()
    with running(state):
        yield state


def _spec(tmp_path: Path, fake: ProlificFake, *, platform_id: str | None = None) -> Path:
    spec = write_spec(tmp_path, turns=2)
    text = spec.read_text().replace("\n[lobby]", CODES + "\n[lobby]")
    if platform_id:
        text = text.replace(
            "belief_slider = true", f'belief_slider = true\nplatform_study_id = "{platform_id}"'
        )
    spec.write_text(text + PROLIFIC.format(url=fake.url))
    return spec


def _one_line(err: str) -> str:
    """The one error paragraph the command printed (the CLI wraps it to the terminal),
    unwrapped; no traceback, no second message."""
    assert "\n\n" not in err.strip() and err.count("error:") == 1 and "Traceback" not in err, err
    return " ".join(line.strip() for line in err.strip().splitlines())


def test_the_draft_carries_the_server_link_and_one_code_per_outcome(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org/"]) == 0
    [study] = fake.studies.values()
    assert study["status"] == "UNPUBLISHED"
    assert study["external_study_url"] == (
        "https://chat.example.org/s/pilot?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert study["prolific_id_option"] == "url_parameters"
    codes = {c["code"]: c["code_type"] for c in study["completion_codes"]}
    assert codes == {"CODE-123": "COMPLETED", "CODE-TIMEOUT": "OTHER", "CODE-LEFT": "OTHER"}
    assert (
        study["reward"],
        study["estimated_completion_time"],
        study["total_available_places"],
    ) == (
        150,
        8,
        4,
    )
    assert study["filters"] == [
        {"filter_id": "current-country-of-residence", "selected_values": ["1"]}
    ]
    assert study["name"] == "Chat study" and study["project"] == "proj-1"
    out = capsys.readouterr().out
    assert (
        "CODE-TIMEOUT: timeout" in out
        and f'platform_study_id = "{study["id"]}" under [study]' in out
    )
    assert Record.of(read_study(spec)).study_id == study["id"]
    # Every outcome of the server has a code on Prolific.
    assert sum(len(o) for o in codes_by_outcome(read_study(spec)).values()) == 8


@pytest.mark.trio
async def test_a_cohort_through_the_server_is_seen_on_prolific(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str], autojump_clock: object
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    study_id = Record.of(read_study(spec)).require_study()
    spec = _spec(tmp_path, fake, platform_id=study_id)  # as the create command advises
    assert main(["prolific", "publish", str(spec)]) == 0
    assert fake.studies[study_id]["status"] == "ACTIVE"
    capsys.readouterr()

    server = make_server(spec)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        for pid in ("P1", "P2", "P3"):
            session = fake.start(study_id, pid)["id"]
            session = "sub-elsewhere" if pid == "P2" else session  # P2's link was not this one
            browser = await play_bot_game(
                server, nursery, pid, study_id=study_id, session_id=session
            )
            done = browser.of("phase")[-1]
            # Prolific completes the submission only when the browser comes back with the code.
            code = parse_qs(urlsplit(done["url"]).query)["cc"][0]
            # P3 types a code of their own instead of following the redirect.
            fake.complete(study_id, pid, "CODE-TIMEOUT" if pid == "P3" else code)
        nursery.cancel_scope.cancel()
    fake.start(study_id, "P4")
    fake.set_status(study_id, "P4", "RETURNED")
    fake.start(study_id, "P5")

    assert main(["prolific", "status", str(spec)]) == 0
    out = capsys.readouterr().out
    assert f"Prolific study {study_id}: ACTIVE, 4 of 4 places taken" in out
    # Five submissions over three pages of two: all counted.
    assert "active 1, awaiting review 3, approved 0, rejected 0, returned 1, timed-out 0" in out
    assert "server: 3 participant(s), 3 room(s); done 3" in out
    assert "done: finished 3" in out
    assert [s["study_code"] for s in fake.submissions[study_id][:3]] == [
        "CODE-123",
        "CODE-123",
        "CODE-TIMEOUT",
    ]

    # Review: P5 typed a code without ever reaching the server, P3 the wrong one, P2
    # came in another session.
    fake.complete(study_id, "P5", "CODE-123")
    assert main(["prolific", "review", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "4 submission(s) awaiting review: 1 to approve, 0 to reject, 0 to ask" in out
    assert "3 left for you" in out and "run it again with --approve" in out
    assert {s["status"] for s in fake.submissions[study_id]} == {"AWAITING REVIEW", "RETURNED"}
    assert main(["prolific", "review", str(spec), "--approve"]) == 0
    out = capsys.readouterr().out
    statuses = {s["participant_id"]: s["status"] for s in fake.submissions[study_id]}
    assert statuses == {
        "P1": "APPROVED",
        "P2": "AWAITING REVIEW",
        "P3": "AWAITING REVIEW",
        "P4": "RETURNED",
        "P5": "AWAITING REVIEW",
    }
    assert "P3: left for you to review: entered code 'CODE-TIMEOUT'; the server gave " in out
    assert "P5: left for you to review: the server has no record of this participant" in out
    assert "P2: left for you to review: the server has them in session 'sub-elsewhere'" in out

    # The spec's rules: a wrong code is rejected, a participant the server never saw is
    # asked to return; another session stays with the researcher (no rule for it).
    spec.write_text(spec.read_text() + REVIEW_RULES)
    sub = {s["participant_id"]: s["id"] for s in fake.submissions[study_id]}
    assert main(["prolific", "review", str(spec)]) == 0  # shown, not done
    out = capsys.readouterr().out
    assert "P3: reject (BAD_CODE): entered code 'CODE-TIMEOUT'" in out
    assert "P5: ask to return: the server has no record of this participant" in out
    assert "0 to approve, 1 to reject, 1 to ask to return, 1 left for you" in out
    assert "run it again with --apply" in out
    assert not fake.rejected and not fake.return_requests
    assert main(["prolific", "review", str(spec), "--apply"]) == 0
    out = capsys.readouterr().out
    assert "P3: rejected (BAD_CODE)" in out and "P5: asked to return" in out
    assert fake.rejected == {sub["P3"]: 1} and fake.return_requests == {sub["P5"]: 1}
    [reject] = [r for r in fake.server.requests if r.path.endswith(f"{sub['P3']}/transition/")]
    assert json.loads(reject.body)["rejection_category"] == "BAD_CODE"
    assert fake.submissions[study_id][2]["status"] == "REJECTED"
    assert main(["prolific", "review", str(spec), "--apply"]) == 0  # a rerun sends nothing
    out = capsys.readouterr().out
    assert "P5: asked to return by an earlier run (not sent again)" in out
    assert fake.rejected == {sub["P3"]: 1} and fake.return_requests == {sub["P5"]: 1}

    # Bonuses from the server's points.csv: a point per finished chat, 0.10 a point.
    assert main(["serve", "export", str(spec), "--out", str(tmp_path / "export")]) == 0
    points = tmp_path / "export" / "points.csv"
    assert main(["prolific", "bonus", str(spec), str(points), "--pay"]) == 0
    with points.open(encoding="utf-8", newline="") as file:
        rows = {r["participant"]: r for r in csv.DictReader(file)}
    assert {pid: row["points"] for pid, row in rows.items()} == {"P1": "1", "P2": "1", "P3": "1"}
    assert fake.paid == {"P1": 1, "P2": 1, "P3": 1}
    assert set(fake.paid_amount.values()) == {Decimal("0.10")}


def test_a_bad_token_gets_one_line_and_creates_nothing(
    tmp_path: Path,
    fake: ProlificFake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = _spec(tmp_path, fake)
    monkeypatch.setenv("SDTT_TEST_PROLIFIC", "token_wrong-but-secret-123")
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "refused the token (HTTP 401" in line and "SDTT_TEST_PROLIFIC" in line
    assert "secret" not in line
    assert not fake.studies and not Record.of(read_study(spec)).path.exists()


def test_an_unset_token_variable_is_named(
    tmp_path: Path,
    fake: ProlificFake,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = _spec(tmp_path, fake)
    monkeypatch.delenv("SDTT_TEST_PROLIFIC")
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) != 0
    assert "SDTT_TEST_PROLIFIC" in _one_line(capsys.readouterr().err)
    assert not fake.server or not fake.server.requests


def test_publishing_a_study_not_in_draft_changes_nothing(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    assert main(["prolific", "publish", str(spec)]) == 0
    capsys.readouterr()
    assert fake.server is not None
    before = len(fake.server.requests)
    assert main(["prolific", "publish", str(spec)]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "is ACTIVE, not a draft" in line and "nothing published" in line
    assert [r.method for r in fake.server.requests[before:]] == ["GET"]  # no transition sent


def test_creating_twice_is_refused(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) != 0
    assert "exists already" in _one_line(capsys.readouterr().err)
    assert len(fake.studies) == 1


def test_a_refused_call_is_one_line_with_prolifics_words(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert fake.server is not None
    fake.server.enqueue(error(400, "Bad request", "Reward is below the minimum hourly rate."))
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "Prolific refused POST /api/v1/studies/ (HTTP 400)" in line
    assert "below the minimum hourly rate" in line
    assert not Record.of(read_study(spec)).path.exists()


def test_a_spec_without_the_completion_redirect_is_refused(
    tmp_path: Path, fake: ProlificFake
) -> None:
    spec = _spec(tmp_path, fake)
    spec.write_text(
        spec.read_text().replace('completion_url = "https://example.org/done?cc=CODE-123"\n', "")
    )
    with pytest.raises(Exception, match=r"field 'study\.completion_url'"):
        draft_body(read_study(spec), "https://chat.example.org")


def _client(fake: ProlificFake, tmp_path: Path, waits: list[float]) -> ProlificClient:
    section = read_study(_spec(tmp_path, fake)).spec.prolific
    assert section is not None
    policy = RetryPolicy(max_attempts=3, jitter=0)
    return ProlificClient(section, TOKEN, policy=policy, sleep=waits.append)


def test_reads_are_retried_after_429_and_5xx_honouring_retry_after(
    tmp_path: Path, fake: ProlificFake
) -> None:
    waits: list[float] = []
    client = _client(fake, tmp_path, waits)
    created = client.create_study(draft_body(read_study(tmp_path / "study.toml"), "https://x.org"))
    assert fake.server is not None
    fake.server.enqueue(
        ScriptedReply(429, {"error": {"title": "Throttled"}}, headers={"Retry-After": "7"}),
        error(503, "Unavailable", "Try later."),
    )
    assert client.study(created["id"])["status"] == "UNPUBLISHED"
    assert waits == [7.0, 2.0]  # the server's wait, then the policy's second backoff


def test_creating_is_not_repeated_after_a_doubtful_failure(
    tmp_path: Path, fake: ProlificFake
) -> None:
    waits: list[float] = []
    client = _client(fake, tmp_path, waits)
    assert fake.server is not None
    fake.server.enqueue(error(502, "Bad gateway", "upstream"))
    with pytest.raises(ServerError, match="HTTP 502"):
        client.create_study(draft_body(read_study(tmp_path / "study.toml"), "https://x.org"))
    assert len(fake.server.requests) == 1 and waits == []
    # A 429 was refused outright: that one is safe to send again.
    fake.server.enqueue(ScriptedReply(429, {}, headers={"Retry-After": "1"}))
    client.create_study(draft_body(read_study(tmp_path / "study.toml"), "https://x.org"))
    assert waits == [1.0] and len(fake.studies) == 1


def test_a_timeout_is_retried_for_reads(
    tmp_path: Path, fake: ProlificFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    section = read_study(_spec(tmp_path, fake)).spec.prolific
    assert section is not None
    policy = RetryPolicy(max_attempts=2, jitter=0, attempt_timeout=0.2)
    client = ProlificClient(section, TOKEN, policy=policy, sleep=waits.append)
    assert fake.server is not None
    fake.server.enqueue(ScriptedReply(200, {}, delay=5), ScriptedReply(200, {}, delay=5))
    with pytest.raises(Exception, match=r"did not answer GET /api/v1/studies/x/ within 0\.2 s"):
        client.study("x")
    assert waits == [1.0]


def test_the_token_is_in_the_header_only_never_in_logs_or_files(
    tmp_path: Path,
    fake: ProlificFake,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = _spec(tmp_path, fake)
    with caplog.at_level(logging.DEBUG):
        assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
        assert main(["prolific", "status", str(spec)]) == 0
    assert fake.server is not None
    assert {r.headers["authorization"] for r in fake.server.requests} == {f"Token {TOKEN}"}
    logged = [r.getMessage() for r in caplog.records if r.name == "sdtt.serve.prolific"]
    assert any("POST /api/v1/studies/ -> HTTP 201" in m for m in logged)
    assert any("GET /api/v1/studies/" in m for m in logged)
    everything = "\n".join(logged) + capsys.readouterr().out
    for path in tmp_path.iterdir():
        everything += path.read_text(errors="replace") if path.is_file() else ""
    assert TOKEN not in everything


def test_an_auth_error_never_echoes_the_token(tmp_path: Path, fake: ProlificFake) -> None:
    section = read_study(_spec(tmp_path, fake)).spec.prolific
    assert section is not None
    client = ProlificClient(section, "token_abcdef-ghijkl", policy=RetryPolicy(max_attempts=1))
    with pytest.raises(AuthenticationError) as caught:
        client.study("x")
    assert "abcdef" not in str(caught.value)
    assert fake.server is not None
    fake.server.enqueue(error(404, "Not found", "token_abcdef-ghijkl is not a study"))
    with pytest.raises(BadRequestError) as refused:
        ProlificClient(section, TOKEN, policy=RetryPolicy(max_attempts=1)).study("x")
    assert "abcdef" not in str(refused.value) and "HTTP 404" in str(refused.value)
    assert json.dumps(Record.of(read_study(tmp_path / "study.toml")).bonuses) == "[]"


def test_a_publish_whose_answer_was_lost_is_not_reported_as_refused(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    # Prolific publishes, then its answer fails; the retry is refused (already ACTIVE).
    fake.acted_then_failed["/transition/"] = error(503, "Unavailable", "Try later.")
    capsys.readouterr()
    assert main(["prolific", "publish", str(spec)]) == 0
    assert "now ACTIVE" in capsys.readouterr().out
    [study] = fake.studies.values()
    assert study["status"] == "ACTIVE" and not fake.acted_then_failed
    assert fake.server is not None
    transitions = [r for r in fake.server.requests if r.path.endswith("/transition/")]
    assert len(transitions) == 2  # the first acted, the retry was refused


def test_a_refused_publish_leaves_the_draft(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    assert fake.server is not None
    fake.server.enqueue(
        ScriptedReply(200, {"id": "x", "status": "UNPUBLISHED"}),  # the state check
        error(400, "Bad request", "Insufficient balance to publish."),
    )
    assert main(["prolific", "publish", str(spec)]) != 0
    assert "Insufficient balance" in _one_line(capsys.readouterr().err)
    [study] = fake.studies.values()
    assert study["status"] == "UNPUBLISHED"


@pytest.mark.skipif(
    not os.environ.get("SDTT_REAL_PROLIFIC_TOKEN"),
    reason="talks to the real Prolific API only when SDTT_REAL_PROLIFIC_TOKEN is set",
)
def test_the_real_api_accepts_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read-only: who the token belongs to (GET /api/v1/users/me/); nothing is created."""
    spec = write_spec(tmp_path)
    spec.write_text(
        spec.read_text()
        + PROLIFIC.format(url="https://api.prolific.com").replace(
            "SDTT_TEST_PROLIFIC", "SDTT_REAL_PROLIFIC_TOKEN"
        )
    )
    section = read_study(spec).spec.prolific
    assert section is not None
    client = ProlificClient(section, os.environ["SDTT_REAL_PROLIFIC_TOKEN"])
    me = client.call("GET", "/users/me/")
    assert isinstance(me, dict) and me.get("id")


def test_a_token_pasted_as_token_env_is_refused_without_echoing_it(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    spec.write_text(spec.read_text().replace('"SDTT_TEST_PROLIFIC"', '"a1b2-c3d4-e5f6-secret"'))
    assert main(["prolific", "status", str(spec)]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "prolific.token_env" in line and "not the token itself" in line
    assert "secret" not in line
    assert fake.server is not None and not fake.server.requests


def test_after_publishing_only_the_places_change_and_never_below_those_taken(
    tmp_path: Path, fake: ProlificFake, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, fake)
    assert main(["prolific", "create", str(spec), "--url", "https://chat.example.org"]) == 0
    assert main(["prolific", "publish", str(spec)]) == 0
    [study] = fake.studies.values()
    fake.start(study["id"], "P1")
    fake.start(study["id"], "P2")
    capsys.readouterr()
    assert main(["prolific", "places", str(spec), "6"]) == 0
    out = capsys.readouterr().out
    assert "6 places (2 taken)" in out and "places = 4: change it to 6" in out
    assert study["total_available_places"] == 6
    assert main(["prolific", "places", str(spec), "5"]) != 0
    line = _one_line(capsys.readouterr().err)
    assert "is ACTIVE: its places can only go up from 6, not down to 5" in line
    assert study["total_available_places"] == 6
    assert fake.server is not None
    assert [r.method for r in fake.server.requests].count("PATCH") == 1
    # The one body a published study accepts: its places only.
    [patch] = [r for r in fake.server.requests if r.method == "PATCH"]
    assert json.loads(patch.body) == {"total_available_places": 6}
