"""How much the embedded model's prefix reuse saves over a growing persona dialogue.

A persona history of 100 turns from real student chats (``chitchat-dataset``; the most
active sender plays the persona, turns in ping-pong form so the prompt stays near 7,000
tokens) is followed by a live dialogue: each of 10 replies adds the partner's next message
and the model's parsed reply, so every prompt extends the previous one. The same 10
prompts are answered twice on ``local/gemma-3-270m``: reusing the KV cache for the shared
prefix (the product's default), and evaluating every prompt from scratch. The table shows
the prompt tokens processed and the wall time of each reply, both ways, and the ratios;
llama.cpp's own counter of evaluated prompt tokens is printed as a cross-check.

Run from the repository root; it takes 3 to 5 minutes on 2 cores, nearly all of it for
the ten evaluations from scratch (``--turns`` and ``--replies`` make it shorter)::

    python benchmarks/local_prefix_cache.py [--turns 100] [--replies 10] [--max-tokens 16]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trio
from _quick import add_quick

from sdtt.dialogue.message import RESPONSE, USER, Message, segment_turns
from sdtt.dialogue.parse import parse_reply
from sdtt.dialogue.render import render_messages, response_prefix
from sdtt.dialogue.turns import flatten_turns, to_pingpong
from sdtt.errors import EmptyReplyError
from sdtt.models.base import GenerateConfig, Prompt
from sdtt.models.gguf import weights_path
from sdtt.models.local import LoadedModel, LocalModel, load_model

MODEL = "gemma-3-270m"
INSTRUCTIONS = (
    "Below is the text chat history of one person (Response) with other students, "
    "followed by a new chat. Response writes short, casual messages in their own style."
)


@dataclass(frozen=True)
class Call:
    """One measured reply."""

    prompt_tokens: int
    processed: int
    """Prompt tokens evaluated (not taken from the KV cache), as the provider reports."""
    llama_counted: int
    """Prompt tokens evaluated according to llama.cpp's own performance counter."""
    seconds: float
    text: str


def chitchat_persona(turns: int, replies: int) -> tuple[list[Message], list[list[Message]]]:
    """The history of the most active sender and the partner messages for the live part."""
    import chitchat_dataset

    data = chitchat_dataset.Dataset()
    two_person = [
        conv
        for conv in data.values()
        if len({m["sender"] for run in conv["messages"] for m in run}) == 2
    ]
    senders = Counter(m["sender"] for conv in two_person for run in conv["messages"] for m in run)
    persona = senders.most_common(1)[0][0]
    conversations = sorted(
        (
            conv
            for conv in two_person
            if any(m["sender"] == persona for run in conv["messages"] for m in run)
        ),
        key=lambda conv: str(conv["messages"][0][0]["timestamp"]),
    )
    messages = [
        Message(
            side=RESPONSE if m["sender"] == persona else USER,
            text=m["text"],
            time=datetime.fromisoformat(m["timestamp"].replace("Z", "+00:00")),
        )
        for conv in conversations
        for run in conv["messages"]
        for m in run
        if m["text"].strip()
    ]
    all_turns = segment_turns(to_pingpong(messages))
    history = flatten_turns(all_turns[:turns])
    live = [list(turn.user) for turn in all_turns[turns:] if turn.user][:replies]
    return history, live


def evaluated_prompt_tokens(loaded: LoadedModel) -> int:
    """llama.cpp's running count of tokens it evaluated in prompt batches."""
    import llama_cpp

    return int(llama_cpp.llama_perf_context(loaded.llm.ctx).n_p_eval)


async def run(
    model: LocalModel, loaded: LoadedModel, prompts: list[Prompt], configs: list[GenerateConfig]
) -> list[Call]:
    """Answer fixed prompts in order and measure each call."""
    calls = []
    for prompt, config in zip(prompts, configs, strict=True):
        before = evaluated_prompt_tokens(loaded)
        started = time.perf_counter()
        output = await model.generate(prompt, config)
        seconds = time.perf_counter() - started
        usage = output.usage
        calls.append(
            Call(
                prompt_tokens=usage.input_tokens,
                processed=usage.input_tokens - usage.cached_input_tokens,
                llama_counted=evaluated_prompt_tokens(loaded) - before,
                seconds=seconds,
                text=output.text,
            )
        )
    return calls


async def grow_dialogue(
    model: LocalModel,
    loaded: LoadedModel,
    history: list[Message],
    live: list[list[Message]],
    max_tokens: int,
) -> tuple[list[Call], list[Prompt], list[GenerateConfig]]:
    """The live dialogue with prefix reuse: each prompt appends a partner message and the
    model's previous reply. Returns the calls and the prompts and configs it used."""
    rng = random.Random(7)
    dialogue: list[Message] = []
    prompts: list[Prompt] = []
    configs: list[GenerateConfig] = []
    calls: list[Call] = []
    for index, partner in enumerate(live):
        dialogue.extend(partner)
        prompt = Prompt(
            instructions=INSTRUCTIONS,
            history=render_messages(history),
            dialogue=render_messages(dialogue),
            continue_with=response_prefix(),
        )
        config = GenerateConfig(max_tokens=max_tokens, temperature=0.8, seed=index, timeout=600)
        [call] = await run(model, loaded, [prompt], [config])
        prompts.append(prompt)
        configs.append(config)
        calls.append(call)
        now = dialogue[-1].time
        try:
            reply = parse_reply(call.text, now=now, rng=rng, continued_from=prompt.continue_with)
        except EmptyReplyError:
            # The base model sometimes writes nothing usable; the engine would retry, the
            # benchmark keeps going with a stand-in so every prompt still grows.
            reply = [Message(side=RESPONSE, text="haha yeah", time=now)]
        dialogue.extend(reply[:1])
    return calls, prompts, configs


def table(reused: list[Call], fresh: list[Call]) -> str:
    """The per-reply and total comparison."""
    header = (
        f"{'reply':>5}  {'prompt':>7}  {'reuse: tokens':>13} {'time':>7}  "
        f"{'no reuse: tokens':>16} {'time':>7}  {'tokens ×':>8} {'time ×':>7}"
    )
    lines = [header, "-" * len(header)]

    def row(
        label: str, prompt: int, a_tokens: int, a_time: float, b_tokens: int, b_time: float
    ) -> str:
        token_ratio = b_tokens / a_tokens if a_tokens else float("inf")
        time_ratio = b_time / a_time if a_time else float("inf")
        return (
            f"{label:>5}  {prompt:>7,}  {a_tokens:>13,} {a_time:>6.2f}s  "
            f"{b_tokens:>16,} {b_time:>6.2f}s  {token_ratio:>7.1f}x {time_ratio:>6.1f}x"
        )

    for index, (a, b) in enumerate(zip(reused, fresh, strict=True), start=1):
        lines.append(
            row(str(index), a.prompt_tokens, a.processed, a.seconds, b.processed, b.seconds)
        )
    lines.append("-" * len(header))
    lines.append(
        row(
            "total",
            sum(c.prompt_tokens for c in reused),
            sum(c.processed for c in reused),
            sum(c.seconds for c in reused),
            sum(c.processed for c in fresh),
            sum(c.seconds for c in fresh),
        )
    )
    if len(reused) > 1:
        lines.append(
            row(
                "2..",
                sum(c.prompt_tokens for c in reused[1:]),
                sum(c.processed for c in reused[1:]),
                sum(c.seconds for c in reused[1:]),
                sum(c.processed for c in fresh[1:]),
                sum(c.seconds for c in fresh[1:]),
            )
        )
    return "\n".join(lines)


async def main(arguments: Any) -> None:
    """Build the dialogue, measure both ways, print the table."""
    history, live = chitchat_persona(arguments.turns, arguments.replies)
    if len(live) < arguments.replies:
        raise SystemExit(f"only {len(live)} partner turns left after the history")
    reuse = LocalModel(MODEL, n_ctx=arguments.n_ctx, prefix_reuse=True)
    fresh = LocalModel(MODEL, n_ctx=arguments.n_ctx, prefix_reuse=False)
    path = weights_path(MODEL)
    started = time.perf_counter()
    loaded = load_model(path, n_ctx=reuse.n_ctx)
    print(
        f"model: local/{MODEL} ({path.name}, n_ctx {reuse.n_ctx:,}), "
        f"loaded in {time.perf_counter() - started:.1f} s"
    )
    # Warm the weights into memory so neither run pays for reading the file.
    await fresh.generate(Prompt(instructions="Hello"), GenerateConfig(max_tokens=2, seed=0))

    reused, prompts, configs = await grow_dialogue(
        reuse, loaded, history, live, arguments.max_tokens
    )
    scratch = await run(fresh, loaded, prompts, configs)

    print(
        f"history: {arguments.turns} turns, {len(history)} messages "
        f"(chitchat-dataset, ping-pong); {len(prompts)} replies of at most "
        f"{arguments.max_tokens} tokens, same prompts and seeds in both runs\n"
    )
    print(table(reused, scratch))
    same = sum(a.text == b.text for a, b in zip(reused, scratch, strict=True))
    print(
        f"\nllama.cpp's own count of evaluated prompt tokens: "
        f"{sum(c.llama_counted for c in reused):,} with reuse, "
        f"{sum(c.llama_counted for c in scratch):,} without"
    )
    print(f"identical replies with and without reuse: {same}/{len(reused)}")


def parse_arguments() -> Any:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100, help="persona history turns")
    parser.add_argument("--replies", type=int, default=10, help="consecutive replies")
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens per reply")
    parser.add_argument("--n-ctx", type=int, default=None, help="context size (model default)")
    add_quick(parser, turns=5, replies=2, max_tokens=4, n_ctx=2048)
    return parser.parse_args()


if __name__ == "__main__":
    trio.run(main, parse_arguments())
