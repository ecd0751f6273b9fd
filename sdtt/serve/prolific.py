"""Prolific's researcher API (``https://api.prolific.com/api/v1/``) for ``sdtt prolific``:
the draft study a spec's ``[prolific]`` table describes, its state, its submissions and
bulk bonuses, and the local record (``<name>.prolific.json`` beside the spec) of what was
done on Prolific, so that nothing is created, rejected, asked or paid twice.

Facts of the API this follows (Prolific's API reference, docs.prolific.com/api-reference:
"API Fundamentals", "The study object", "Create a draft study", "Transition a study's
status", "List study submissions", "Approve or reject a submission", "Bulk approve
submissions", "Request the participant who submitted the response to return their
response", "Set up bonuses", "Pay bonuses"):

- the token goes in ``Authorization: Token <token>``; errors are 400, 401, 404, 405, 422
  and 429, with the body ``{"error": {"status", "error_code", "title", "detail",
  "additional_information"}}`` (``detail`` a string, or field -> messages);
- ``POST /studies/`` makes a draft (``UNPUBLISHED``); ``POST /studies/{id}/transition/``
  with ``{"action": "PUBLISH"}`` publishes it, after which only the number of places can
  change, and only upwards (Mephisto's Prolific notes);
- list endpoints are paged: ``{"results": [...], "_links": {"self", "next", "previous",
  "last"} (each ``{"href", "title"}``, ``next.href`` null on the last page),
  "meta": {"count"}}``, ``page``/``page_size`` (20 by default);
- a submission has ``id`` (the ``SESSION_ID`` the study link gets), ``participant_id``,
  ``status`` (ACTIVE, AWAITING REVIEW, APPROVED, REJECTED, RETURNED, TIMED-OUT, ...),
  ``started_at``, ``completed_at`` and ``study_code`` (the code entered); it completes only
  when the participant's browser comes back with one of the study's completion codes;
- ``POST /submissions/bulk-approve/`` with ``{"submission_ids": [...]}`` approves;
  ``POST /submissions/{id}/transition/`` with ``{"action": "REJECT", "rejection_category",
  "message"}`` rejects (category and a message of 100 characters or more required; the
  call is idempotent); ``POST /submissions/{id}/request-return/`` with
  ``{"request_return_reasons": [...]}`` messages the participant (only they can return);
- a bulk bonus is set up (``POST /submissions/bonus-payments/``, ``{"study_id",
  "csv_bonuses": "<participant_id>,<amount>\\n..."}``, amounts in the major unit; the
  answer holds ``id``, ``amount``, ``fees``, ``total_amount`` in minor units) and then paid
  (``POST /bulk-bonus-payments/{id}/pay/``, 202, paid asynchronously); that pay call is
  not idempotent (each call pays again).

Every call goes through the project's one retry policy (:mod:`sdtt.models.retry`): 429
with ``Retry-After``, 5xx and timeouts are retried, but a call that must not happen twice
(creating a study, a return request, paying) is retried only when Prolific surely did not
act on it (429, or no connection made). Every call is logged (method, path, status)
without the token.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any, get_args

from sdtt.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    InputError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from sdtt.files import parse_json, read_text_file, write_text_atomic
from sdtt.models.retry import (
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
    policy_from_env,
    retry_delay,
    scrub,
)
from sdtt.seeds import seeded_rng
from sdtt.serve.spec import Outcome, ProlificSection, ReviewRule, Study, spec_line

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1"
ATTEMPT_SECONDS = 30.0
"""Seconds one call may take unless ``SDTT_ATTEMPT_TIMEOUT`` says otherwise."""
URL_PARAMETERS = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
"""What Prolific appends to the study link (its placeholders), read by the study page."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""Every outcome the server gives a completion code (the spec's ``Outcome``)."""
SUBMISSION_STATES = ("ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED", "RETURNED", "TIMED-OUT")
BULK_APPROVE_MAX = 1000
"""Submissions per bulk-approve call (Prolific recommends no more)."""
"""The submission statuses ``sdtt prolific status`` counts (others are counted as they come)."""


def token(section: ProlificSection) -> str:
    """The API token from the environment variable the spec names."""
    value = os.environ.get(section.token_env, "").strip()
    if not value:
        raise ConfigError(
            f"the environment variable {section.token_env} (named by [prolific] token_env) "
            "is not set: put your Prolific API token in it (Prolific: Settings, API token)."
        )
    return value


def prolific_section(study: Study) -> ProlificSection:
    """The spec's ``[prolific]`` table, or an error saying to add one."""
    section = study.spec.prolific
    if section is None:
        raise InputError(
            "has no [prolific] table: add one (description, reward, estimated_minutes, "
            "places, project) to run the study on Prolific.",
            path=study.path,
            field="prolific",
            hint="See 'Running it on Prolific' in the README.",
        )
    return section


def codes_by_outcome(study: Study) -> dict[str, list[str]]:
    """Each completion code the server gives, with the outcomes it is given for."""
    spec = study.spec.study
    given: dict[str, str] = {str(k): v for k, v in spec.completion_codes.items()}
    codes: dict[str, list[str]] = {}
    for outcome in OUTCOMES:
        codes.setdefault(given.get(outcome, spec.completion_code), []).append(outcome)
    return codes


def study_link(base_url: str, study: Study) -> str:
    """The study page's address as Prolific sends participants to it, placeholders and all."""
    if not base_url.startswith(("https://", "http://")):
        raise ConfigError(f"--url must start with https:// or http://, not {base_url!r}.")
    return f"{base_url.rstrip('/')}/s/{study.name}?{URL_PARAMETERS}"


def draft_body(study: Study, base_url: str) -> dict[str, Any]:
    """The ``POST /studies/`` body of the draft study ``study`` describes."""
    section = prolific_section(study)
    spec = study.spec.study
    url = spec.completion_url
    if url is None or spec.completion_code not in url:
        raise InputError(
            "must send participants back to Prolific with their code: a submission "
            "completes only then.",
            path=study.path,
            line=spec_line(study.path, "study.completion_url"),
            field="study.completion_url",
            hint="Set it to https://app.prolific.com/submissions/complete?cc=<completion_code>.",
        )
    codes = [
        {
            "code": code,
            "code_type": "COMPLETED" if "finished" in outcomes else "OTHER",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        }
        for code, outcomes in codes_by_outcome(study).items()
    ]
    filters: list[dict[str, Any]] = []
    for item in section.filters:
        entry: dict[str, Any] = {"filter_id": item.filter_id}
        if item.selected_values:
            entry["selected_values"] = item.selected_values
        if item.selected_range:
            entry["selected_range"] = item.selected_range
        filters.append(entry)
    return {
        "name": section.title or spec.title,
        "internal_name": study.name,
        "description": section.description,
        "external_study_url": study_link(base_url, study),
        "prolific_id_option": "url_parameters",
        "completion_codes": codes,
        "total_available_places": section.places,
        "estimated_completion_time": section.estimated_minutes,
        "reward": section.reward,
        "device_compatibility": list(section.devices),
        "filters": filters,
        "project": section.project,
    }


class ProlificClient:
    """Calls Prolific's API with one token, the retry policy and a log line per call."""

    def __init__(
        self,
        section: ProlificSection,
        api_token: str,
        *,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = section.api_url
        self.token_env = section.token_env
        self._token = api_token
        self.policy = policy or policy_from_env()
        self.sleep = sleep
        self.clock = clock
        self._rng = seeded_rng(0, "prolific-retry")

    def __repr__(self) -> str:
        return f"ProlificClient({self.base_url!r})"  # never the token

    def call(self, method: str, path: str, body: Any = None, *, repeatable: bool = True) -> Any:
        """The decoded answer of ``method path`` (``path`` under ``/api/v1`` or a full
        URL the API gave). ``repeatable=False``: retried only when Prolific surely did
        not act on it (HTTP 429, no connection made)."""
        started = self.clock()
        failures = 0
        while True:
            try:
                return self._attempt(method, path, body)
            except ProviderError as error:
                failures += 1
                unsent = isinstance(error, RateLimitError) or getattr(error, "unsent", False)
                wait = retry_delay(self.policy, error, failures, self._rng)
                deadline = self.policy.deadline
                if (
                    wait is None
                    or (not repeatable and not unsent)
                    or (deadline is not None and self.clock() - started + wait > deadline)
                ):
                    error.attempts = failures
                    raise
                log.info(
                    "prolific: %s %s failed (%s); retrying in %.1f s",
                    method,
                    path,
                    type(error).__name__,
                    wait,
                )
                self.sleep(wait)

    def _attempt(self, method: str, path: str, body: Any) -> Any:
        url = (
            path if path.startswith(("http://", "https://")) else self.base_url + API_PREFIX + path
        )
        shown = url.removeprefix(self.base_url)
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Token {self._token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        timeout = self.policy.attempt_timeout or ATTEMPT_SECONDS
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as failure:
            raw = failure.read()
            log.info("prolific: %s %s -> HTTP %s", method, shown, failure.code)
            raise self._error(method, shown, failure.code, raw, dict(failure.headers)) from None
        except TimeoutError:
            log.info("prolific: %s %s -> no answer in %g s", method, shown, timeout)
            raise ProviderTimeoutError(
                f"Prolific did not answer {method} {shown} within {timeout:g} s."
            ) from None
        except (urllib.error.URLError, ConnectionError) as failure:
            reason = getattr(failure, "reason", failure)
            log.info("prolific: %s %s -> no connection (%s)", method, shown, reason)
            error = ProviderConnectionError(
                f"Prolific could not be reached at {self.base_url} ({reason})."
            )
            # Refused before anything was sent: safe to repeat even a payment.
            error.unsent = isinstance(reason, ConnectionRefusedError)  # type: ignore[attr-defined]
            raise error from None
        log.info("prolific: %s %s -> HTTP %s", method, shown, status)
        if not raw:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ServerError(
                f"Prolific answered {method} {shown} with something not JSON."
            ) from None

    def _error(
        self, method: str, path: str, status: int, raw: bytes, headers: dict[str, str]
    ) -> ProviderError:
        detail = scrub(_detail(raw), [self._token])
        said = f": {detail}" if detail else ""
        if status in (401, 403):
            what = "refused the token" if status == 401 else "does not let this token do that"
            return AuthenticationError(
                f"Prolific {what} (HTTP {status}, {method} {path}). Check that "
                f"{self.token_env} holds a valid API token of the study's workspace."
            )
        if status == 429:
            return RateLimitError(
                f"Prolific rate-limited {method} {path} (HTTP 429){said}",
                retry_after=parse_retry_after(headers),
            )
        if is_retryable_status(status):
            return ServerError(
                f"Prolific failed on {method} {path} (HTTP {status}){said}",
                retry_after=parse_retry_after(headers),
            )
        return BadRequestError(f"Prolific refused {method} {path} (HTTP {status}){said}")

    def pages(self, path: str) -> list[dict[str, Any]]:
        """Every item of a paged list endpoint, following ``_links.next.href``."""
        items: list[dict[str, Any]] = []
        next_url: str | None = path
        seen: set[str] = set()
        while next_url and next_url not in seen:
            seen.add(next_url)
            page = self.call("GET", next_url)
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                raise ServerError(f"Prolific's answer to GET {path} holds no results list.")
            items.extend(item for item in page["results"] if isinstance(item, dict))
            link = (page.get("_links") or {}).get("next") or {}
            next_url = link.get("href") if isinstance(link, dict) else None
        return items

    def create_study(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a draft study (``UNPUBLISHED``); never repeated after a doubtful call."""
        return _object(self.call("POST", "/studies/", body, repeatable=False), "the new study")

    def study(self, study_id: str) -> dict[str, Any]:
        """The study as Prolific has it now."""
        return _object(self.call("GET", f"/studies/{study_id}/"), "the study")

    def set_places(self, study_id: str, places: int) -> dict[str, Any]:
        """Change the number of places: after publishing, the one thing that can change."""
        answer = self.call("PATCH", f"/studies/{study_id}/", {"total_available_places": places})
        return _object(answer, "the study")

    def transition_study(self, study_id: str, action: str) -> dict[str, Any]:
        """Move the study on (``PUBLISH``, ``PAUSE``, ``START``, ``STOP``)."""
        answer = self.call("POST", f"/studies/{study_id}/transition/", {"action": action})
        return _object(answer, "the study")

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        """Every submission of the study, all pages."""
        return self.pages(f"/studies/{study_id}/submissions/")

    def approve(self, submission_ids: list[str]) -> None:
        """Approve submissions (their participants are paid the reward), up to
        :data:`BULK_APPROVE_MAX` a call; approving twice changes nothing."""
        for start in range(0, len(submission_ids), BULK_APPROVE_MAX):
            body = {"submission_ids": submission_ids[start : start + BULK_APPROVE_MAX]}
            self.call("POST", "/submissions/bulk-approve/", body)

    def reject(self, submission_id: str, category: str, message: str) -> None:
        """Reject one submission (idempotent on Prolific's side, so retried as a read)."""
        body = {"action": "REJECT", "rejection_category": category, "message": message}
        self.call("POST", f"/submissions/{submission_id}/transition/", body)

    def request_return(self, submission_id: str, reasons: list[str]) -> None:
        """Ask the participant to return their submission (a message to them): never
        repeated after a doubtful call."""
        body = {"request_return_reasons": reasons}
        path = f"/submissions/{submission_id}/request-return/"
        self.call("POST", path, body, repeatable=False)

    def set_up_bonus(self, study_id: str, rows: dict[str, str]) -> dict[str, Any]:
        """Set up (not pay) a bulk bonus: participant id -> amount in the major unit."""
        csv = "".join(f"{pid},{amount}\n" for pid, amount in rows.items())
        body = {"study_id": study_id, "csv_bonuses": csv}
        answer = self.call("POST", "/submissions/bonus-payments/", body, repeatable=False)
        return _object(answer, "the bonus set-up")

    def pay_bonus(self, bulk_id: str) -> None:
        """Pay a bulk bonus set up before. NOT idempotent: never retried after a doubtful call."""
        self.call("POST", f"/bulk-bonus-payments/{bulk_id}/pay/", {}, repeatable=False)


def _detail(raw: bytes) -> str:
    """Prolific's own words in an error body (its ``error`` object's title and detail)."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", "replace")
    error = body.get("error", body) if isinstance(body, dict) else body
    if not isinstance(error, dict):
        return str(error)
    parts = [_said(error[key]) for key in ("title", "detail") if error.get(key)]
    if error.get("additional_information"):
        parts.append(_said(error["additional_information"]))
    return ": ".join(parts)


def _said(value: Any) -> str:
    """A detail as a line: a string, or each field's messages (``field: message``)."""
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_said(item)}" for key, item in value.items())
    if isinstance(value, list):
        return " ".join(_said(item) for item in value)
    return str(value)


def _object(answer: Any, what: str) -> dict[str, Any]:
    if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
        raise ServerError(f"Prolific's answer gave no id for {what}.")
    return answer


@dataclass
class Record:
    """What sdtt did on Prolific for one spec, kept in ``<name>.prolific.json``."""

    path: Path
    study_id: str | None = None
    bonuses: list[dict[str, Any]] | None = None
    """Each bulk bonus: id, state ("set_up", "paying", "paid"), amounts per participant."""
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Submission id -> a rejection or return request review sent: participant, action,
    category or reasons, state ("sending" before the call, "done" after it)."""

    @classmethod
    def of(cls, study: Study) -> Record:
        """The record beside the spec (empty when nothing was done on Prolific yet)."""
        path = study.folder / f"{study.name}.prolific.json"
        if not path.exists():
            return cls(path=path, bonuses=[])
        data = parse_json(read_text_file(path, what="Prolific record"), path)
        if not isinstance(data, dict):
            raise InputError("is not a Prolific record (a JSON object).", path=path)
        bonuses = data.get("bonuses") or []
        decisions = data.get("decisions") or {}
        return cls(
            path=path,
            study_id=data.get("study_id"),
            bonuses=list(bonuses),
            decisions=dict(decisions),
        )

    def save(self) -> None:
        """Replace the file all at once (a kill leaves the old record or the new)."""
        data = {
            "study_id": self.study_id,
            "bonuses": self.bonuses or [],
            "decisions": self.decisions,
        }
        write_text_atomic(self.path, json.dumps(data, indent=2) + "\n")

    def require_study(self) -> str:
        """The Prolific study id, or an error saying to create the study first."""
        if not self.study_id:
            raise ConfigError(
                f"no Prolific study for this spec yet ({self.path.name} records none): "
                "run sdtt prolific create SPEC --url URL first."
            )
        return self.study_id


def bonus_amounts(study: Study, points_csv: Path) -> dict[str, Decimal]:
    """Each participant's bonus from ``points.csv`` (``sdtt serve export``): their points
    times ``[prolific] bonus_per_point``, in pence/cents rounded down; no zero rows."""
    section = prolific_section(study)
    if section.bonus_per_point <= 0:
        raise InputError(
            "is 0: say what a point pays (e.g. bonus_per_point = 0.10) to pay bonuses.",
            path=study.path,
            line=spec_line(study.path, "prolific.bonus_per_point"),
            field="prolific.bonus_per_point",
        )
    per_point = Decimal(str(section.bonus_per_point))
    text = read_text_file(points_csv, what="points file")
    reader = csv.DictReader(io.StringIO(text))
    missing = {"participant", "points"} - set(reader.fieldnames or ())
    if missing:
        raise InputError(
            f"has no column {', '.join(sorted(missing))}: give the points.csv that sdtt "
            "serve export wrote.",
            path=points_csv,
            line=1,
        )
    amounts: dict[str, Decimal] = {}
    for row in reader:
        pid = (row.get("participant") or "").strip()
        try:
            points = Decimal((row.get("points") or "").strip())
        except InvalidOperation:
            points = Decimal(-1)
        if not pid or not points.is_finite() or points < 0:
            raise InputError(
                f"row {reader.line_num} needs a participant id and points of 0 or more.",
                path=points_csv,
                line=reader.line_num,
            )
        if pid in amounts:
            raise InputError(
                f"lists participant {pid!r} twice.", path=points_csv, line=reader.line_num
            )
        amount = (points * per_point).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
        if amount > 0:
            amounts[pid] = amount
    return amounts


@dataclass(frozen=True)
class BonusPlan:
    """What ``sdtt prolific bonus`` found: bulk bonuses set up and not paid yet, and
    those a stopped run was paying (never paid again by sdtt)."""

    unpaid: list[dict[str, Any]]
    doubtful: list[dict[str, Any]]


def set_up_bonuses(
    record: Record, client: ProlificClient, amounts: dict[str, Decimal]
) -> BonusPlan:
    """Set up one bulk bonus for the participants no earlier bulk bonus holds (paid or
    not) and record it; a participant is in one bulk bonus only, ever."""
    study_id = record.require_study()
    entries = record.bonuses if record.bonuses is not None else []
    record.bonuses = entries
    held = {pid for entry in entries for pid in entry["amounts"]}
    new = {pid: amount for pid, amount in amounts.items() if pid not in held}
    if new:
        rows = {pid: f"{amount:.2f}" for pid, amount in new.items()}
        answer = client.set_up_bonus(study_id, rows)
        entries.append(
            {
                "id": answer["id"],
                "state": "set_up",
                "amounts": rows,
                "total_amount": answer.get("total_amount"),
                "fees": answer.get("fees"),
            }
        )
        record.save()
    return BonusPlan(
        unpaid=[e for e in entries if e["state"] == "set_up"],
        doubtful=[e for e in entries if e["state"] == "paying"],
    )


def pay_bonus(record: Record, client: ProlificClient, entry: dict[str, Any]) -> None:
    """Pay one recorded bulk bonus: marked ``paying`` (saved) before the call, ``paid``
    after it, so a rerun after a kill or a doubtful failure never sends it again. A call
    Prolific surely refused (4xx, 429, no connection) puts it back to ``set_up``."""
    if entry["state"] != "set_up":
        raise ConfigError(f"bulk bonus {entry['id']} is {entry['state']}, not set up: not paid.")
    entry["state"] = "paying"
    record.save()
    try:
        client.pay_bonus(entry["id"])
    except (AuthenticationError, BadRequestError, RateLimitError) as error:
        entry["state"] = "set_up"
        record.save()
        raise error
    except ProviderError as error:
        if getattr(error, "unsent", False):
            entry["state"] = "set_up"
            record.save()
            raise
        raise ServerError(
            f"{error.base_message} Prolific may have paid bulk bonus {entry['id']} or not: "
            "sdtt never sends it again. Check those bonuses on Prolific; if they were not "
            f"paid, run again with --not-paid {entry['id']}."
        ) from None
    entry["state"] = "paid"
    record.save()


def release_bonus(record: Record, bulk_id: str) -> dict[str, Any]:
    """Put a bulk bonus a stopped run was paying back to ``set_up``: only once the
    researcher saw on Prolific that it was not paid."""
    for entry in record.bonuses or []:
        if entry["id"] == bulk_id:
            if entry["state"] != "paying":
                raise ConfigError(
                    f"bulk bonus {bulk_id} is {entry['state']}, not one a stopped run was "
                    "paying: nothing changed."
                )
            entry["state"] = "set_up"
            record.save()
            return entry
    raise ConfigError(f"no bulk bonus {bulk_id} in {record.path.name}: nothing changed.")


@dataclass(frozen=True)
class Verdict:
    """What review makes of one submission awaiting review."""

    submission: str
    participant: str
    approve: bool
    reason: str
    """Why it does not agree with the server ('' when it does)."""
    mismatch: str | None = None
    """Which :data:`~sdtt.serve.spec.Mismatch` it is (None when it agrees)."""
    outcome: str | None = None
    """The server's outcome for the participant, when it has one."""


def review(study: Study, submissions: list[dict[str, Any]]) -> list[Verdict]:
    """Each submission awaiting review against the server's record: it agrees when the
    server has its participant done, in that submission's session, and gave them the
    very code they entered; otherwise the mismatch and the reason are given."""
    from sdtt.serve.state import completion_code
    from sdtt.serve.storage import open_store

    people = {}
    if study.spec.storage.url or study.store_path.exists():
        store = open_store(study)
        try:
            people = {p.pid: p for p in store.participants()}
        finally:
            store.close()
    verdicts = []
    for submission in submissions:
        if submission.get("status") != "AWAITING REVIEW":
            continue
        pid, code = str(submission.get("participant_id")), submission.get("study_code")
        person = people.get(pid)
        reason, mismatch, outcome = "", None, None
        if person is None:
            reason, mismatch = "the server has no record of this participant", "no_record"
        elif person.state != "done" or person.outcome in (None, "declined"):
            reason = f"the server has them {person.state}, not done with a code"
            mismatch = "not_done"
        elif person.platform_session not in (None, submission.get("id")):
            # Prolific's SESSION_ID is the submission's id: another one is another visit.
            reason = f"the server has them in session {person.platform_session!r}, not this one"
            mismatch, outcome = "other_session", person.outcome
        elif code != completion_code(study, person.outcome):
            expected = completion_code(study, person.outcome)
            reason = f"entered code {code!r}; the server gave {expected!r} ({person.outcome})"
            mismatch, outcome = "wrong_code", person.outcome
        else:
            outcome = person.outcome
        verdicts.append(
            Verdict(str(submission.get("id")), pid, not reason, reason, mismatch, outcome)
        )
    return verdicts


@dataclass(frozen=True)
class Decision:
    """What review does with one submission, by the spec's ``[prolific.review]`` rules."""

    verdict: Verdict
    action: str
    """approve, reject, return or manual."""
    rule: ReviewRule | None
    """The rule that decided it (None: the default, approve when it agrees, else manual)."""
    earlier: dict[str, Any] | None = None
    """A rejection or return request an earlier run recorded for it (then never sent
    again, except a rejection still awaiting review, which Prolific takes once only)."""


def decide(study: Study, verdicts: list[Verdict], record: Record) -> list[Decision]:
    """Each verdict's action: a rule for its mismatch, or for its outcome when it agrees;
    with no rule, agreeing ones are approved and the rest left to the researcher."""
    rules: dict[str, ReviewRule] = {str(k): v for k, v in prolific_section(study).review.items()}
    decisions = []
    for verdict in verdicts:
        key = verdict.mismatch or verdict.outcome
        rule = rules.get(key) if key else None
        default = "approve" if verdict.approve else "manual"
        earlier = record.decisions.get(verdict.submission)
        decisions.append(Decision(verdict, rule.action if rule else default, rule, earlier))
    return decisions


def send_decision(record: Record, client: ProlificClient, decision: Decision) -> None:
    """Reject a submission or ask for its return, recorded (``sending``) before the call
    and ``done`` after it, so that no rerun sends it again. A call Prolific surely
    refused (4xx, 429, no connection) is struck from the record; a doubtful one (5xx,
    no answer) stays recorded: a return request is then never repeated."""
    rule, verdict = decision.rule, decision.verdict
    assert rule is not None and decision.action in ("reject", "return")
    entry: dict[str, Any] = {"participant": verdict.participant, "action": decision.action}
    if decision.action == "reject":
        entry.update(category=rule.category, reason=verdict.reason)
    else:
        entry.update(reasons=list(rule.reasons), reason=verdict.reason)
    entry["state"] = "sending"
    record.decisions[verdict.submission] = entry
    record.save()
    try:
        if decision.action == "reject":
            client.reject(verdict.submission, str(rule.category), rule.message.strip())
        else:
            client.request_return(verdict.submission, [r for r in rule.reasons if r.strip()])
    except (AuthenticationError, BadRequestError, RateLimitError):
        del record.decisions[verdict.submission]
        record.save()
        raise
    except ProviderError as error:
        if getattr(error, "unsent", False):
            del record.decisions[verdict.submission]
            record.save()
            raise
        if decision.action == "return":
            raise ServerError(
                f"{error.base_message} Prolific may have asked participant "
                f"{verdict.participant} to return their submission or not: sdtt never "
                "asks again. Check their submission on Prolific."
            ) from None
        raise
    entry["state"] = "done"
    record.save()
