"""A local stand-in for Prolific's researcher API, on :class:`FakeHTTPServer`.

It keeps studies, submissions and bulk bonuses in memory and answers as Prolific's API
reference documents: ``Authorization: Token <token>`` or HTTP 401; a draft study
(``UNPUBLISHED``) that ``PUBLISH`` makes ``ACTIVE`` and that refuses a second publish
(HTTP 400); submissions paged ``page_size`` at a time with ``_links.next.href``; errors
as ``{"error": {"status", "error_code", "title", "detail"}}``; a bulk bonus set up from
``csv_bonuses`` and paid by a call that pays again each time it is made (the real one is
not idempotent either). Faults (429 with ``Retry-After``, 5xx, delays) are scripted with
:meth:`FakeHTTPServer.enqueue`.

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


def error(status: int, title: str, detail: Any, code: int = 140000) -> ScriptedReply:
    """A reply in Prolific's error shape."""
    body = {"error": {"status": status, "error_code": code, "title": title, "detail": detail}}
    return ScriptedReply(status=status, body=body)


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
            }
            self.submissions[study_id].append(submission)
            study["places_taken"] += 1
            return submission

    def complete(self, study_id: str, pid: str, code: str) -> None:
        """The participant's browser came back with ``code`` (AWAITING REVIEW)."""
        with self._lock:
            for submission in self.submissions[study_id]:
                if submission["participant_id"] == pid and submission["status"] == "ACTIVE":
                    submission.update(status="AWAITING REVIEW", study_code=code)
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

    def __call__(self, request: RecordedRequest) -> ScriptedReply:
        if request.headers.get("authorization") != f"Token {self.token}":
            return error(401, "Not authenticated", "Invalid token.", 140100)
        parts = urlsplit(request.path)
        path, query = parts.path, parse_qs(parts.query)
        body = request.json() if request.body else None
        with self._lock:
            reply = self._route(request.method, path, query, body)
            for ending in list(self.acted_then_failed):
                if path.endswith(ending):
                    return self.acted_then_failed.pop(ending)
            return reply

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> ScriptedReply:
        if method == "POST" and path == "/api/v1/studies/":
            return self._create(body)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/", path):
            study = self.studies.get(match[1])
            if study is None or method not in ("GET", "PATCH"):
                return error(404, "Not found", "No such study.", 140400)
            return self._update(study, body) if method == "PATCH" else ScriptedReply(200, study)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/transition/", path):
            return self._transition(match[1], body)
        if match := re.fullmatch(r"/api/v1/studies/(\w+)/submissions/", path):
            return self._page(match[1], int(query.get("page", ["1"])[0]))
        if match := re.fullmatch(r"/api/v1/submissions/(\w+)/transition/", path):
            return self._review(match[1], body)
        if method == "POST" and path == "/api/v1/submissions/bonus-payments/":
            return self._set_up(body)
        if match := re.fullmatch(r"/api/v1/bulk-bonus-payments/(\w+)/pay/", path):
            return self._pay(match[1])
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
        if study["status"] != "UNPUBLISHED" and set(body) - {"total_available_places"}:
            return error(400, "Bad request", "Only the places of a published study can change.")
        places = body.get("total_available_places", study["total_available_places"])
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

    def _page(self, study_id: str, page: int) -> ScriptedReply:
        if study_id not in self.studies:
            return error(404, "Not found", "No such study.", 140400)
        items = self.submissions[study_id]
        chunk = items[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(items)
        base = f"{self.url}/api/v1/studies/{study_id}/submissions/"
        links = {
            "self": {"href": f"{base}?page={page}"},
            "next": {"href": f"{base}?page={page + 1}" if more else None},
        }
        body = {"results": [dict(s) for s in chunk], "_links": links, "meta": {"count": len(items)}}
        return ScriptedReply(200, body)

    def _review(self, submission_id: str, body: Any) -> ScriptedReply:
        found = [s for subs in self.submissions.values() for s in subs if s["id"] == submission_id]
        if not found:
            return error(404, "Not found", "No such submission.", 140400)
        action = body.get("action") if isinstance(body, dict) else None
        if action != "APPROVE" or found[0]["status"] != "AWAITING REVIEW":
            return error(400, "Bad request", f"Cannot {action} a {found[0]['status']} submission.")
        found[0]["status"] = "APPROVED"
        return ScriptedReply(200, dict(found[0]))

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
        bulk_id = f"bb{next(self._ids):06x}"
        total = sum(rows.values(), Decimal(0))
        self.bulk[bulk_id] = {"study": study_id, "rows": rows}
        fees = (total * Decimal("0.333")).quantize(Decimal("0.01"))
        answer = {
            "id": bulk_id,
            "study": study_id,
            "amount": int(total * 100),
            "fees": float(fees * 100),
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
        return ScriptedReply(202, {})


def running(fake: ProlificFake) -> FakeHTTPServer:
    """A started server for ``fake`` (use it as a context manager to stop it)."""
    server = FakeHTTPServer(fake)
    fake.server = server
    return server


def body_of(request: RecordedRequest) -> Any:
    """A recorded request's JSON body."""
    return json.loads(request.body.decode("utf-8")) if request.body else None
