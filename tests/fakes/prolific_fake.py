"""A local stand-in for Prolific's researcher API, on :class:`FakeHTTPServer`.

It keeps studies, submissions and bulk bonuses in memory and answers as Prolific's API
reference documents them (docs.prolific.com/api-reference, checked December 2026: "API
Fundamentals", "The study object", "Create a draft study", "Update a study", "Transition a
study's status", "List study submissions", "Approve or reject a submission", "Bulk approve
submissions", "Request the participant who submitted the response to return their
response", "Set up bonuses", "Pay bonuses"; Mephisto's "Prolific API oddities" for what
the reference leaves out):

- ``Authorization: Token <token>`` or HTTP 401; errors as ``{"error": {"status",
  "error_code", "title", "detail", "additional_information"}}``, ``detail`` a string or
  field -> messages; 404 for an unknown thing, 405 for a method an endpoint lacks;
- a draft study (``UNPUBLISHED``) that ``PUBLISH`` makes ``ACTIVE`` and that refuses a
  second publish (HTTP 400); once published only ``total_available_places`` can change,
  and only upwards;
- lists paged ``page_size`` at a time (``?page=``, ``?page_size=``): ``results``,
  ``_links`` (``self``, ``next``, ``previous``, ``last``, each ``{"href", "title"}``,
  ``next.href`` null on the last page) and ``meta.count``;
- submissions with ``id``, ``participant_id``, ``status``, ``started_at``,
  ``completed_at`` and ``study_code`` (the code entered);
- ``REJECT`` only with a ``rejection_category`` Prolific knows and a message of 100
  characters or more (HTTP 400 otherwise); a transition repeated on a submission already
  in that state is ignored (the endpoint is idempotent); bulk approve by
  ``submission_ids``; a return request (``request_return_reasons``, required) sends the
  participant a message each time it is made;
- a bulk bonus set up from ``csv_bonuses`` (``<participant_id>,<amount>\\n`` lines, the
  participants must have taken part, HTTP 400 naming those who did not) and paid by a call
  that pays again each time it is made (the real one is not idempotent either).

Faults (429 with ``Retry-After``, 5xx, delays) are scripted with
:meth:`FakeHTTPServer.enqueue`; :meth:`ProlificFake.hold_at` makes a call wait (before or
after it is carried out) until the test lets it go, so a test can kill the calling
process right there.

Participants are simulated with :meth:`ProlificFake.start` (a place taken: ACTIVE) and
:meth:`ProlificFake.complete` (the browser came back with a code: AWAITING REVIEW).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply

TOKEN = "prolific-test-token-0123456789"
REQUIRED = (
    "name",
    "description",
    "external_study_url",
    "prolific_id_option",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "reward",
)


REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)


def error(status: int, title: str, detail: Any, code: int = 140000) -> ScriptedReply:
    """A reply in Prolific's error shape."""
    body = {
        "error": {
            "status": status,
            "error_code": code,
            "title": title,
            "detail": detail,
            "additional_information": "",
        }
    }
    return ScriptedReply(status=status, body=body)


@dataclass
class Hold:
    """A call the fake keeps waiting: ``arrived`` is set once it came (and, with
    ``after``, was carried out); it is answered only once ``release`` is set."""

    method: str
    ending: str
    after: bool
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class ProlificFake:
    """The fake's state and its responder; ``server`` is set by :func:`running`."""

    token: str = TOKEN
    page_size: int = 2
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    bulk: dict[str, dict[str, Any]] = field(default_factory=dict)
    paid: Counter[str] = field(default_factory=Counter)
    """Bonus payments made per participant id (each pay call counts again)."""
    paid_amount: dict[str, Decimal] = field(default_factory=dict)
    rejected: Counter[str] = field(default_factory=Counter)
    """Rejections carried out per submission id (a repeated one is ignored, not counted)."""
    return_requests: Counter[str] = field(default_factory=Counter)
    """Return-request messages sent per submission id (each call sends one)."""
    holds: list[Hold] = field(default_factory=list)
    refuse: dict[tuple[str, str], ScriptedReply] = field(default_factory=dict)
    """(method, path ending) -> a reply sent once INSTEAD of carrying the call out (a
    refusal: nothing changes)."""
    acted_then_failed: dict[str, ScriptedReply] = field(default_factory=dict)
    """Path ending -> a reply sent once, instead of the answer, AFTER the request to that
    path was carried out (a 5xx from a server that did act)."""
    server: FakeHTTPServer | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def start(self, study_id: str, pid: str) -> dict[str, Any]:
        """A participant takes a place (their submission is ACTIVE)."""
        with self._lock:
            study = self.studies[study_id]
            assert study["status"] == "ACTIVE", "participants only see a published study"
            assert study["places_taken"] < study["total_available_places"], "study is full"
            submission = {
                "id": f"sub{next(self._ids):04d}",
                "participant_id": pid,
                "status": "ACTIVE",
                "study_code": None,
                "started_at": "2026-12-01T10:00:00Z",
                "completed_at": None,
                "return_requested": None,
            }
            self.submissions[study_id].append(submission)
            study["places_taken"] += 1
            return submission

    def complete(self, study_id: str, pid: str, code: str) -> None:
        """The participant's browser came back with ``code`` (AWAITING REVIEW)."""
        with self._lock:
            for submission in self.submissions[study_id]:
                if submission["participant_id"] == pid and submission["status"] == "ACTIVE":
                    submission.update(
                        status="AWAITING REVIEW",
                        study_code=code,
                        completed_at="2026-12-01T10:09:00Z",
                    )
                    return
        raise AssertionError(f"{pid} has no active submission")

    def set_status(self, study_id: str, pid: str, status: str) -> None:
        """A submission returned or timed out on Prolific's side."""
        with self._lock:
            for submission in self.submissions[study_id]:
                if submission["participant_id"] == pid:
                    submission["status"] = status
                    if status in ("RETURNED", "TIMED-OUT"):  # the place is free again
                        self.studies[study_id]["places_taken"] -= 1

    def hold_at(self, method: str, ending: str, *, after: bool = False) -> Hold:
        """Keep the next ``method`` call whose path ends with ``ending`` waiting, before
        it is carried out (or, with ``after``, once it was): see :class:`Hold`."""
        hold = Hold(method, ending, after)
        self.holds.append(hold)
        return hold

    def release_all(self) -> None:
        """Let every held call go (their callers are gone: they get a 503)."""
        for hold in self.holds:
            hold.release.set()

    def __call__(self, request: RecordedRequest) -> ScriptedReply:
        if request.headers.get("authorization") != f"Token {self.token}":
            return error(401, "Not authenticated", "Invalid token.", 140100)
        parts = urlsplit(request.path)
        path, query = parts.path, parse_qs(parts.query)
        body = request.json() if request.body else None
        hold = next(
            (
                h
                for h in self.holds
                if not h.arrived.is_set() and h.method == request.method and path.endswith(h.ending)
            ),
            None,
        )
        if hold is not None and not hold.after:
            hold.arrived.set()
            hold.release.wait()
            return error(503, "Unavailable", "The caller went away.")
        with self._lock:
            for method, ending in list(self.refuse):
                if request.method == method and path.endswith(ending):
                    return self.refuse.pop((method, ending))
            reply = self._route(request.method, path, query, body)
            for ending in list(self.acted_then_failed):
                if path.endswith(ending):
                    reply = self.acted_then_failed.pop(ending)
                    break
        if hold is not None:
            hold.arrived.set()
            hold.release.wait()
        return reply

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> ScriptedReply:
        if path == "/api/v1/studies/":
            return self._create(body) if method == "POST" else _not_allowed(method, path)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/", path):
            study = self.studies.get(match[1])
            if study is None:
                return error(404, "Not found", "No such study.", 140400)
            if method not in ("GET", "PATCH"):
                return _not_allowed(method, path)
            return self._update(study, body) if method == "PATCH" else ScriptedReply(200, study)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/transition/", path):
            if method != "POST":
                return _not_allowed(method, path)
            return self._transition(match[1], body)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/submissions/", path):
            if method != "GET":
                return _not_allowed(method, path)
            return self._page(match[1], query)
        if path == "/api/v1/submissions/bulk-approve/":
            return self._bulk_approve(body) if method == "POST" else _not_allowed(method, path)
        if match := re.fullmatch(r"/api/v1/submissions/(\w+)/transition/", path):
            if method != "POST":
                return _not_allowed(method, path)
            return self._review(match[1], body)
        if match := re.fullmatch(r"/api/v1/submissions/(\w+)/request-return/", path):
            if method != "POST":
                return _not_allowed(method, path)
            return self._request_return(match[1], body)
        if path == "/api/v1/submissions/bonus-payments/":
            return self._set_up(body) if method == "POST" else _not_allowed(method, path)
        if match := re.fullmatch(r"/api/v1/bulk-bonus-payments/(\w+)/pay/", path):
            return self._pay(match[1]) if method == "POST" else _not_allowed(method, path)
        return error(404, "Not found", f"No endpoint {method} {path}.", 140400)

    def _create(self, body: Any) -> ScriptedReply:
        missing = [key for key in REQUIRED if not isinstance(body, dict) or key not in body]
        if missing:
            return error(400, "Bad request", {key: ["This field is required."] for key in missing})
        if not body["completion_codes"]:
            return error(400, "Bad request", {"completion_codes": ["Give at least one code."]})
        study_id = f"st{next(self._ids):06x}"
        study = dict(body, id=study_id, status="UNPUBLISHED", places_taken=0)
        self.studies[study_id] = study
        self.submissions[study_id] = []
        return ScriptedReply(201, study)

    def _update(self, study: dict[str, Any], body: Any) -> ScriptedReply:
        if not isinstance(body, dict):
            return error(400, "Bad request", "Send a JSON object.")
        published = study["status"] != "UNPUBLISHED"
        if published and set(body) - {"total_available_places"}:
            return error(400, "Bad request", "Only the places of a published study can change.")
        places = body.get("total_available_places", study["total_available_places"])
        if published and places < study["total_available_places"]:
            return error(
                400,
                "Bad request",
                {"total_available_places": ["A published study's places can only increase."]},
            )
        if places < study["places_taken"]:
            return error(400, "Bad request", "Places cannot be fewer than the places taken.")
        study.update(body)
        return ScriptedReply(200, study)

    def _transition(self, study_id: str, body: Any) -> ScriptedReply:
        study = self.studies.get(study_id)
        if study is None:
            return error(404, "Not found", "No such study.", 140400)
        action = body.get("action") if isinstance(body, dict) else None
        if action != "PUBLISH":
            return error(400, "Bad request", f"Unknown action {action!r}.")
        if study["status"] != "UNPUBLISHED":
            return error(400, "Bad request", f"Cannot publish a study that is {study['status']}.")
        study["status"] = "ACTIVE"
        return ScriptedReply(200, study)

    def _page(self, study_id: str, query: dict[str, list[str]]) -> ScriptedReply:
        if study_id not in self.studies:
            return error(404, "Not found", "No such study.", 140400)
        try:
            page = int(query.get("page", ["1"])[0])
            size = min(int(query.get("page_size", [str(self.page_size)])[0]), self.page_size)
        except ValueError:
            return error(400, "Bad request", {"page": ["A page number and size are whole."]})
        items = self.submissions[study_id]
        last = max(1, -(-len(items) // size))
        if page < 1 or page > last:
            return error(404, "Not found", "Invalid page.", 140400)
        chunk = items[(page - 1) * size : page * size]
        base = f"{self.url}/api/v1/studies/{study_id}/submissions/"

        def link(number: int | None) -> dict[str, Any]:
            href = None if number is None else f"{base}?page={number}&page_size={size}"
            return {"href": href, "title": "" if number is None else f"Page {number}"}

        links = {
            "self": link(page),
            "next": link(page + 1 if page < last else None),
            "previous": link(page - 1 if page > 1 else None),
            "last": link(last),
        }
        body = {"results": [dict(s) for s in chunk], "_links": links, "meta": {"count": len(items)}}
        return ScriptedReply(200, body)

    def _submission(self, submission_id: str) -> dict[str, Any] | None:
        found = [s for subs in self.submissions.values() for s in subs if s["id"] == submission_id]
        return found[0] if found else None

    def _review(self, submission_id: str, body: Any) -> ScriptedReply:
        submission = self._submission(submission_id)
        if submission is None:
            return error(404, "Not found", "No such submission.", 140400)
        action = body.get("action") if isinstance(body, dict) else None
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(str(action))
        if target is None:
            return error(400, "Bad request", {"action": [f"{action!r} is not a valid choice."]})
        if action == "REJECT":
            problems: dict[str, list[str]] = {}
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                problems["rejection_category"] = ["A valid category is required to reject."]
            if len(str(body.get("message") or "")) < 100:
                problems["message"] = ["Ensure this field has at least 100 characters."]
            if problems:
                return error(400, "Bad request", problems)
        if submission["status"] == target:
            return ScriptedReply(200, dict(submission))  # the same transition again: ignored
        if submission["status"] != "AWAITING REVIEW":
            return error(
                400, "Bad request", f"Cannot {action} a {submission['status']} submission."
            )
        submission["status"] = target
        if action == "REJECT":
            self.rejected[submission_id] += 1
        return ScriptedReply(200, dict(submission))

    def _bulk_approve(self, body: Any) -> ScriptedReply:
        ids = body.get("submission_ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not ids:
            return error(400, "Bad request", {"submission_ids": ["This field is required."]})
        unknown = [i for i in ids if self._submission(str(i)) is None]
        if unknown:
            return error(400, "Bad request", {"submission_ids": [f"Unknown: {unknown}."]})
        for submission_id in ids:
            submission = self._submission(str(submission_id))
            assert submission is not None
            if submission["status"] == "AWAITING REVIEW":
                submission["status"] = "APPROVED"
        return _json_text(200, "Bulk approval is in progress.")

    def _request_return(self, submission_id: str, body: Any) -> ScriptedReply:
        submission = self._submission(submission_id)
        if submission is None:
            return error(404, "Not found", "No such submission.", 140400)
        reasons = body.get("request_return_reasons") if isinstance(body, dict) else None
        if (
            not isinstance(reasons, list)
            or not reasons
            or not all(isinstance(r, str) and r for r in reasons)
        ):
            return error(
                400, "Bad request", {"request_return_reasons": ["This field is required."]}
            )
        if submission["status"] not in ("ACTIVE", "AWAITING REVIEW"):
            return error(400, "Bad request", f"A {submission['status']} submission is not open.")
        self.return_requests[submission_id] += 1
        submission["return_requested"] = "2026-12-01T11:00:00Z"
        answer = {
            "id": submission_id,
            "status": submission["status"],
            "participant": submission["participant_id"],
            "return_requested": submission["return_requested"],
        }
        return ScriptedReply(200, answer)

    def _set_up(self, body: Any) -> ScriptedReply:
        study_id = body.get("study_id") if isinstance(body, dict) else None
        if study_id not in self.studies:
            return error(400, "Bad request", {"study_id": ["No such study."]})
        known = {s["participant_id"] for s in self.submissions[study_id]}
        rows: dict[str, Decimal] = {}
        for line in str(body.get("csv_bonuses", "")).splitlines():
            pid, _, amount = line.partition(",")
            try:
                value = Decimal(amount)
            except InvalidOperation:
                return error(400, "Bad request", {"csv_bonuses": [f"Bad amount on {line!r}."]})
            if pid not in known:
                return error(400, "Bad request", {"csv_bonuses": [f"{pid} took no part."]})
            rows[pid] = value
        if not rows:
            return error(400, "Bad request", {"csv_bonuses": ["This field is required."]})
        bulk_id = f"bb{next(self._ids):06x}"
        total = sum(rows.values(), Decimal(0))
        self.bulk[bulk_id] = {"study": study_id, "rows": rows}
        fees = (total * Decimal("0.333")).quantize(Decimal("0.01"))
        answer = {  # in minor units, as Prolific answers
            "id": bulk_id,
            "study": study_id,
            "amount": int(total * 100),
            "fees": float(fees * 100),
            "vat": 0,
            "total_amount": float((total + fees) * 100),
        }
        return ScriptedReply(201, answer)

    def _pay(self, bulk_id: str) -> ScriptedReply:
        bulk = self.bulk.get(bulk_id)
        if bulk is None:
            return error(404, "Not found", "No such bulk bonus payment.", 140400)
        for pid, amount in bulk["rows"].items():
            self.paid[pid] += 1
            self.paid_amount[pid] = self.paid_amount.get(pid, Decimal(0)) + amount
        return _json_text(202, f"Bulk bonus payment {bulk_id} is being paid.")


def _json_text(status: int, text: str) -> ScriptedReply:
    """A JSON string as the whole answer, as Prolific gives for bulk approve and pay."""
    body = json.dumps(text).encode("utf-8")
    return ScriptedReply(status, body, headers={"Content-Type": "application/json"})


def _not_allowed(method: str, path: str) -> ScriptedReply:
    return error(405, "Method not allowed", f"{method} is not allowed on {path}.", 140500)


class Killed(BaseException):
    """Raised by a test where the command's process dies (nothing after it runs, no handler
    sees it): the in-process stand-in for a kill at that step."""


def running(fake: ProlificFake) -> FakeHTTPServer:
    """A started server for ``fake`` (use it as a context manager to stop it)."""
    server = FakeHTTPServer(fake)
    fake.server = server
    return server


def body_of(request: RecordedRequest) -> Any:
    """A recorded request's JSON body."""
    return json.loads(request.body.decode("utf-8")) if request.body else None
