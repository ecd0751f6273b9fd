"""The ``openai`` provider's batch API: OpenAI Batch.

Upload a JSONL file of ``/v1/chat/completions`` requests, create a 24-hour batch over it,
poll it, then download its output and error files. Each request's body is the one
:meth:`OpenAIAPI.request <sdtt.models.openai_api.OpenAIAPI.request>` sends, and each
answer is read by :meth:`OpenAIAPI.output_of
<sdtt.models.openai_api.OpenAIAPI.output_of>`, as for a direct call.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from typing import Any

from sdtt.errors import ModelError
from sdtt.models.batch import BatchRequest, BatchResult, BatchState, SdkBatch
from sdtt.models.model import Model

ENDPOINT = "/v1/chat/completions"
ENDED = ("completed", "failed", "expired", "cancelled")
"""The states of a batch that will not change any more."""


class OpenAIBatch(SdkBatch):
    """The OpenAI Batch API for one ``openai/...`` model."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Upload the requests as a JSONL file and create a 24-hour batch over it.

        The file is written to disk a line at a time and streamed from there, so a
        batch of thousands of prompts is not held in memory a second and third time.
        """
        with tempfile.TemporaryFile() as content:
            for request in requests:
                line = {
                    "custom_id": request.custom_id,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.api.request(request.prompt, request.config),
                }
                content.write((json.dumps(line) + "\n").encode("utf-8"))

            def upload_file(client: Any) -> Any:
                content.seek(0)  # a retried upload sends the file from its start
                return client.files.create(file=("sdtt-batch.jsonl", content), purpose="batch")

            upload = await self._request("batch upload", upload_file)
        batch = await self._request(
            "batch create",
            lambda client: client.batches.create(
                input_file_id=upload.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"source": "sdtt"},
            ),
        )
        return str(batch.id)

    async def state(self, batch_id: str) -> BatchState:
        """'ended' once the batch completed, failed, expired or was cancelled."""
        batch = await self._request(
            "batch status", lambda client: client.batches.retrieve(batch_id)
        )
        return "ended" if batch.status in ENDED else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Read the output and error files of an ended batch."""
        import openai

        batch = await self._request(
            "batch status", lambda client: client.batches.retrieve(batch_id)
        )
        texts = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                texts.append(await self._file_text(file_id))
        results = []
        for text in texts:
            for line in text.splitlines():
                if not line.strip():
                    continue
                entry = json.loads(line)
                custom_id = str(entry.get("custom_id"))
                response = entry.get("response") or {}
                body = response.get("body")
                if response.get("status_code") == 200 and isinstance(body, dict):
                    try:
                        completion = openai.types.chat.ChatCompletion.model_validate(body)
                        output = self.api.output_of(completion)
                    except (ValueError, ModelError) as error:
                        results.append(BatchResult(custom_id, error=f"unusable answer: {error}"))
                        continue
                    results.append(BatchResult(custom_id, output=output))
                else:
                    results.append(BatchResult(custom_id, error=_error(entry)))
        return results

    async def _file_text(self, file_id: str) -> str:
        content = await self._request("batch results", lambda client: client.files.content(file_id))
        return str(content.text)


def _error(entry: dict[str, Any]) -> str:
    error = entry.get("error") or (entry.get("response") or {}).get("body", {}).get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or "failed")
    status = (entry.get("response") or {}).get("status_code")
    return f"HTTP {status}" if status else "failed"


def create_batch(model: Model) -> OpenAIBatch:
    """The batch API of ``model``, an ``openai/...`` model."""
    return OpenAIBatch(model)
