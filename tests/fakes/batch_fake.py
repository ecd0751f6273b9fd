"""Local fakes of the OpenAI Batch API and Anthropic Message Batches.

Each answers every request of a batch with ``reply(body)`` (the request body a direct
call would send), counts status checks, and reports a batch as ended after
``polls_until_done`` checks, or ``seconds_until_done`` after it was created (real time, for
benchmarks). ``fail_once`` names custom ids whose first attempt fails; ``end_next`` makes
the next batch end expired or cancelled with only some of its requests answered, as a
batch that outlived its 24 hours or that someone cancelled does. ``sent`` counts how
often each custom id was submitted, over all batches (a repeated call shows there).
"""

from __future__ import annotations

import email.parser
import json
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any, Literal

from tests.fakes.anthropic_fake import message
from tests.fakes.http_fake import FakeHTTPServer, RecordedRequest, ScriptedReply
from tests.fakes.openai_fake import chat_completion

Reply = Callable[[Mapping[str, Any]], str]
Ending = Literal["expired", "cancelled"]


def words(value: Any) -> int:
    """Words in a prompt's text parts, as the fakes count tokens."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(words(item.get("text", item.get("content", ""))) for item in value)
    return 0


def multipart_file(request: RecordedRequest) -> bytes:
    """The uploaded file of a multipart/form-data request."""
    head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    parsed = email.parser.BytesParser().parsebytes(head + request.body)
    for part in parsed.get_payload():  # type: ignore[union-attr]
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            return payload
    raise AssertionError("no file in the upload")


class FakeBatchServer(FakeHTTPServer):
    """What both fakes share: the reply function, polling and failures."""

    def __init__(
        self,
        reply: Reply,
        *,
        polls_until_done: int = 1,
        seconds_until_done: float | None = None,
    ) -> None:
        super().__init__(self._respond)
        self.reply = reply
        self.polls_until_done = polls_until_done
        self.seconds_until_done = seconds_until_done
        """When set, a batch ends this many seconds after it was created (not by polls)."""
        self.fail_once: set[str] = set()
        self.always_fail: set[str] = set()
        self.created = 0
        self.sent: Counter[str] = Counter()
        """How many times each custom id was submitted, over all batches."""
        self.hold_from: int | None = None
        """Batches from this number on (the first is 1) do not end while it is set."""
        self.endings: dict[str, Ending] = {}
        """Batch id -> how it ended, for batches that did not complete."""
        self._next_endings: deque[tuple[Ending, int]] = deque()
        self._polls: dict[str, int] = {}
        self._born: dict[str, float] = {}
        self._number: dict[str, int] = {}
        self._failed: set[str] = set()

    def end_next(self, ending: Ending, *, answered: int) -> None:
        """The next batch created ends ``ending`` with only its first ``answered`` requests
        answered (the others come back expired or cancelled)."""
        self._next_endings.append((ending, answered))

    def _ending(self, batch_id: str) -> tuple[Ending | None, int]:
        """How a new batch will end: (None, all) for a batch that completes."""
        self._born[batch_id] = time.monotonic()
        self._number[batch_id] = self.created
        if not self._next_endings:
            return None, 1 << 62
        ending, answered = self._next_endings.popleft()
        self.endings[batch_id] = ending
        return ending, answered

    def failing(self, custom_id: str) -> bool:
        """Whether this request fails now (and note a first failure)."""
        prefix = custom_id.rsplit("-", 1)[0]
        if prefix in self.always_fail:
            return True
        if custom_id in self.fail_once and custom_id not in self._failed:
            self._failed.add(custom_id)
            return True
        return False

    def ended(self, batch_id: str) -> bool:
        """Count a status check; True once the batch has been checked often enough (or,
        with ``seconds_until_done``, once it is old enough)."""
        self._polls[batch_id] = self._polls.get(batch_id, 0) + 1
        if self.hold_from is not None and self._number[batch_id] >= self.hold_from:
            return False
        if self.seconds_until_done is not None:
            return time.monotonic() - self._born[batch_id] >= self.seconds_until_done
        return self._polls[batch_id] > self.polls_until_done

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        raise NotImplementedError


class FakeOpenAIBatchServer(FakeBatchServer):
    """``/v1/files``, ``/v1/batches`` and ``/v1/files/{id}/content``."""

    def __init__(self, reply: Reply, **timing: Any) -> None:
        super().__init__(reply, **timing)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}

    @property
    def base_url(self) -> str:
        """The base URL for an OpenAI client."""
        return f"{self.url}/v1"

    def _add_file(self, content: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = content
        return file_id

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        path = request.path.split("?")[0].rstrip("/")
        if request.method == "POST" and path == "/v1/files":
            content = multipart_file(request)
            file_id = self._add_file(content)
            return ScriptedReply(
                body={
                    "id": file_id,
                    "object": "file",
                    "bytes": len(content),
                    "created_at": 0,
                    "filename": "batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                }
            )
        if request.method == "POST" and path == "/v1/batches":
            return ScriptedReply(body=self._create(request.json()))
        if request.method == "GET" and path.startswith("/v1/batches/"):
            batch = self.batches[path.rsplit("/", 1)[1]]
            if self.ended(batch["id"]):
                batch = {**batch, "status": self.endings.get(batch["id"], "completed")}
            else:
                batch = {**batch, "status": "in_progress", "output_file_id": None}
                batch["error_file_id"] = None
            return ScriptedReply(body=batch)
        if request.method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            return ScriptedReply(body=self.files[path.split("/")[3]])
        return ScriptedReply(status=404, body={"error": {"message": f"no {path}"}})

    def _create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.created += 1
        batch_id = f"batch_{self.created}"
        ending, answered = self._ending(batch_id)
        outputs, errors = [], []
        lines = self.files[body["input_file_id"]].decode().splitlines()
        for index, line in enumerate(lines):
            entry = json.loads(line)
            request = entry["body"]
            self.sent[entry["custom_id"]] += 1
            if index >= answered:
                # What OpenAI writes to the error file for requests a batch never ran.
                errors.append(
                    {
                        "id": "r",
                        "custom_id": entry["custom_id"],
                        "response": None,
                        "error": {
                            "code": f"batch_{ending}",
                            "message": f"This request was not run: the batch {ending}.",
                        },
                    }
                )
                continue
            if self.failing(entry["custom_id"]):
                errors.append(
                    {
                        "id": "r",
                        "custom_id": entry["custom_id"],
                        "response": None,
                        "error": {"code": "server_error", "message": "scripted failure"},
                    }
                )
                continue
            text = self.reply(request)
            completion = chat_completion(
                text,
                model=request["model"],
                prompt_tokens=sum(words(m.get("content", "")) for m in request["messages"]),
                completion_tokens=len(text.split()),
            )
            outputs.append(
                {
                    "id": "r",
                    "custom_id": entry["custom_id"],
                    "response": {"status_code": 200, "request_id": "q", "body": completion},
                    "error": None,
                }
            )
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"],
            "status": "validating",
            "created_at": 0,
            "output_file_id": self._add_file(_jsonl(outputs)) if outputs else None,
            "error_file_id": self._add_file(_jsonl(errors)) if errors else None,
            "request_counts": {"total": len(lines), "completed": len(outputs), "failed": 0},
        }
        self.batches[batch_id] = batch
        return batch


def _jsonl(entries: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(entry) + "\n" for entry in entries).encode()


class FakeAnthropicBatchServer(FakeBatchServer):
    """``/v1/messages/batches``, its status and its results."""

    def __init__(self, reply: Reply, **timing: Any) -> None:
        super().__init__(reply, **timing)
        self.batches: dict[str, dict[str, Any]] = {}
        self.results: dict[str, bytes] = {}
        self.requests_seen: list[Mapping[str, Any]] = []

    @property
    def base_url(self) -> str:
        """The base URL for an Anthropic client."""
        return self.url

    def _respond(self, request: RecordedRequest) -> ScriptedReply:
        path = request.path.split("?")[0].rstrip("/")
        if request.method == "POST" and path == "/v1/messages/batches":
            return ScriptedReply(body=self._create(request.json()))
        if request.method == "GET" and path.endswith("/results"):
            return ScriptedReply(body=self.results[path.split("/")[4]])
        if request.method == "GET" and path.startswith("/v1/messages/batches/"):
            batch = self.batches[path.rsplit("/", 1)[1]]
            if self.ended(batch["id"]):
                batch = {
                    **batch,
                    "processing_status": "ended",
                    "ended_at": "2024-01-01T01:00:00Z",
                    "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results",
                }
            return ScriptedReply(body=batch)
        return ScriptedReply(status=404, body={"type": "error", "error": {"message": path}})

    def _create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self.created += 1
        batch_id = f"msgbatch_{self.created}"
        ending, answered = self._ending(batch_id)
        lines = []
        for index, item in enumerate(body["requests"]):
            params = item["params"]
            self.requests_seen.append(params)
            self.sent[item["custom_id"]] += 1
            if index >= answered:
                # Anthropic's result types for requests a batch never ran.
                kind = "canceled" if ending == "cancelled" else "expired"
                lines.append({"custom_id": item["custom_id"], "result": {"type": kind}})
                continue
            if self.failing(item["custom_id"]):
                result: dict[str, Any] = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "x"}},
                }
            else:
                text = self.reply(params)
                total = words(params.get("system", [])) + sum(
                    words(m["content"]) for m in params["messages"]
                )
                result = {
                    "type": "succeeded",
                    "message": message(
                        text,
                        model=params["model"],
                        input_tokens=total,
                        output_tokens=len(text.split()),
                    ),
                }
            lines.append({"custom_id": item["custom_id"], "result": result})
        self.results[batch_id] = _jsonl(lines)
        batch = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": {
                "processing": len(lines),
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": None,
            "created_at": "2024-01-01T00:00:00Z",
            "expires_at": "2024-01-02T00:00:00Z",
            "cancel_initiated_at": None,
            "results_url": None,
            "archived_at": None,
        }
        self.batches[batch_id] = batch
        return batch
