"""The ``anthropic`` provider's batch API: Message Batches.

Create a batch holding the requests, poll it until its processing has ended, then stream
its results. Each request's ``params`` are the ones :meth:`AnthropicAPI.request
<sdtt.models.anthropic_api.AnthropicAPI.request>` sends (cache marks included), and each
answer is read by :meth:`AnthropicAPI.output_of
<sdtt.models.anthropic_api.AnthropicAPI.output_of>`, as for a direct call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sdtt.errors import ModelError
from sdtt.models.batch import BatchRequest, BatchResult, BatchState, SdkBatch
from sdtt.models.model import Model


class AnthropicBatch(SdkBatch):
    """Anthropic Message Batches for one ``anthropic/...`` model."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create a message batch holding the requests."""
        bodies = [
            {
                "custom_id": request.custom_id,
                "params": self.api.request(request.prompt, request.config),
            }
            for request in requests
        ]
        batch = await self._request(
            "batch create", lambda client: client.messages.batches.create(requests=bodies)
        )
        return str(batch.id)

    async def state(self, batch_id: str) -> BatchState:
        """'ended' once the batch's processing has ended."""
        batch = await self._request(
            "batch status", lambda client: client.messages.batches.retrieve(batch_id)
        )
        return "ended" if batch.processing_status == "ended" else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        """Stream the results of an ended batch."""

        async def download(client: Any) -> list[Any]:
            # Read whole inside one request, so a retry starts the stream over.
            return [entry async for entry in await client.messages.batches.results(batch_id)]

        results = []
        for entry in await self._request("batch results", download):
            result = entry.result
            if result.type == "succeeded":
                try:
                    output = self.api.output_of(result.message)
                except ModelError as error:
                    results.append(BatchResult(entry.custom_id, error=f"unusable answer: {error}"))
                    continue
                results.append(BatchResult(entry.custom_id, output=output))
            else:
                results.append(BatchResult(entry.custom_id, error=result.type))
        return results


def create_batch(model: Model) -> AnthropicBatch:
    """The batch API of ``model``, an ``anthropic/...`` model."""
    return AnthropicBatch(model)
