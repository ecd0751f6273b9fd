"""Run llama-cpp-python's OpenAI-compatible server with the AMX guard applied.

``python -m llama_cpp.server`` crashes on the first request on CPUs with AMX, inside
ggml's AMX kernel (see :func:`sdtt.models.local.install_amx_guard`). The server is a
separate process, so the guard the local provider applies in sdtt's own process does not
reach it. This launcher applies the guard, then builds the server's app and runs it with
uvicorn::

    python -m sdtt.models.llama_server --port 8080            # the embedded Gemma model
    python -m sdtt.models.llama_server --model my.gguf --chat-format chatml

It listens on 127.0.0.1 unless ``--host`` says otherwise, and prints one line when it
is ready, with the URL to give sdtt's ``--base-url``
(``--model openai/<anything> --base-url http://127.0.0.1:8080/v1``). Each request then
gets a line on standard error (``--request-log FILE`` to append them to a file): method,
path, status, tokens and seconds, never a key, and the prompt only with
``--log-prompts``. llama.cpp runs on every core the process may use unless
``--n-threads`` says otherwise (llama-cpp-python's own default is half of them). Needs
``pip install 'llama-cpp-python[server]'`` (and ``sdtt[local]`` for the embedded model).

Token log-probabilities are off unless ``--logprobs`` is given: llama-cpp-python's
server keeps the logits of every prompt position for them (``logits_all``), which took
the embedded model from 0.6 GB to 4.6-7.1 GB resident and made a long uncached prompt
take 2-3 times as long.
``sdtt judge --reveal --logprobs`` needs them.

The embedded Gemma 3 270M is a base model whose file has no chat template, so
llama-cpp-python would wrap requests in llama-2's ``[INST] <<SYS>>`` markup, which the
model does not know and only echoes. Unless ``--chat-format`` names another format, the
embedded model is served with :data:`EMBEDDED_CHAT_FORMAT` instead: a request's messages
become the text sdtt's local provider would give the model for the same prompt
(:meth:`sdtt.models.base.Prompt.completion_text`): the system message, a blank line, the
user message without its last paragraph (the task sdtt writes for chat models, which the
local provider never shows a completion model), then a new line to continue on. Replies
stop where the local provider's do, at the other side's ``User:`` line. A chat request
carries no completion cue (``continue_with``): a task asking for Response lines (a bot's or
an interrogator's) gets the local provider's ``Response: [`` and the reply gets it back,
so the base model writes a chat line instead of going on with its instructions; any
other prompt (an LLM judge's question) is answered without one. A ``--model`` file keeps
its own template (else llama-2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from sdtt.errors import ProviderUnavailableError, SdttError
from sdtt.models.base import Prompt
from sdtt.models.gguf import TOY_CAVEAT, stop_strings

DEFAULT_N_CTX = 8192

EMBEDDED_CHAT_FORMAT = "sdtt-completion"
"""The chat format the embedded base model is served with unless ``--chat-format`` says
otherwise: the messages as the single text the local provider would continue."""


def build_parser() -> argparse.ArgumentParser:
    """The launcher's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m sdtt.models.llama_server",
        description="llama-cpp-python's OpenAI-compatible server, safe on CPUs with AMX.",
    )
    parser.add_argument(
        "--model", default=None, help="GGUF file (default: the embedded Gemma 3 270M)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument(
        "--n-ctx", type=int, default=DEFAULT_N_CTX, help=f"context tokens (default {DEFAULT_N_CTX})"
    )
    parser.add_argument(
        "--chat-format",
        default=None,
        help=f"llama-cpp-python chat format (default: {EMBEDDED_CHAT_FORMAT} for the embedded "
        "base model: the messages as the one text the local provider would continue; "
        "for --model, the file's template, else llama-2). "
        "Avoid formats without a system role (such as gemma): they drop the persona.",
    )
    parser.add_argument(
        "--n-threads",
        type=int,
        default=None,
        help="CPU threads for generation and prompt processing (default: every core this "
        "process may use; llama-cpp-python's own default is half of them)",
    )
    parser.add_argument(
        "--logprobs",
        action="store_true",
        help="answer requests for token log-probabilities (sdtt judge --logprobs); keeps "
        "every prompt position's logits: 8-12 times the memory, 2-3 times the time",
    )
    parser.add_argument(
        "--request-log",
        default="-",
        metavar="FILE",
        help="append one line per request (method, path, status, tokens, seconds) to FILE "
        "(default -: standard error); headers and keys are never written",
    )
    parser.add_argument(
        "--log-prompts",
        action="store_true",
        help="also write each request's body (the prompt) to the request log",
    )
    return parser


def server_app(args: argparse.Namespace) -> Any:
    """The server's ASGI app for ``args``, with the AMX guard installed first."""
    from sdtt.models.gguf import weights_path
    from sdtt.models.local import cpu_count, import_llama_cpp, install_amx_guard

    llama_cpp = import_llama_cpp()
    install_amx_guard(llama_cpp)
    try:
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as error:
        raise ProviderUnavailableError(
            f"llama-cpp-python's server is not installed ({error}); "
            "install it with: pip install 'llama-cpp-python[server]'"
        ) from None
    path = args.model or str(weights_path("gemma-3-270m"))
    options: dict[str, Any] = {
        "model": path,
        "n_ctx": args.n_ctx,
        "verbose": False,
        # llama-cpp-python's server defaults to True, whatever the request asks.
        "logits_all": args.logprobs,
    }
    chat_format = chat_format_for(args)
    if chat_format == EMBEDDED_CHAT_FORMAT:
        register_embedded_chat_format(llama_cpp)
    if chat_format:
        options["chat_format"] = chat_format
    # llama-cpp-python's server runs on half the cores unless told: 1 thread on 2 cores.
    threads = args.n_threads or cpu_count()
    options["n_threads"] = threads
    options["n_threads_batch"] = threads
    return create_app(
        server_settings=ServerSettings(host=args.host, port=args.port),
        model_settings=[ModelSettings(**options)],
    )


def chat_format_for(args: argparse.Namespace) -> str | None:
    """The chat format to serve with: the user's ``--chat-format``, else
    :data:`EMBEDDED_CHAT_FORMAT` for the embedded model, else ``None`` (llama-cpp-python
    then uses the file's template, or llama-2 without one)."""
    if args.chat_format:
        return str(args.chat_format)
    if args.model is None:
        return EMBEDDED_CHAT_FORMAT
    return None


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message: its content, or the text parts of a list of parts
    (a base model reads no images)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, Mapping)]
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""


RESPONSE_CUE = "Response: ["
"""The start of the line a bot or interrogator writes in sdtt's chat prompts (the local
provider's ``continue_with``): a base model given it writes a chat line; given none it went
on with the instructions ("- You are not an AI, not an assistant...")."""


def completion_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The one text the embedded base model continues for a chat request.

    sdtt's chat providers send :meth:`Prompt.system_text` as the system message and
    :meth:`Prompt.user_text` (the dialogue, a blank line, the task) as the user message.
    This rebuilds that :class:`Prompt` and returns its :meth:`Prompt.completion_text`, the
    text the local provider gives the model. A chat request carries no completion cue
    (``continue_with``): a task asking for Response lines (a bot's or an interrogator's)
    gets :data:`RESPONSE_CUE`, as the local provider's prompt has it, and its reply starts
    with the cue again (:func:`register_embedded_chat_format`), so sdtt reads a chat line.
    """
    system = [message_text(m) for m in messages if m.get("role") in ("system", "developer")]
    dialogue, task, cue = split_request(messages)
    prompt = Prompt(
        instructions="\n\n".join(text for text in system if text),
        dialogue=dialogue,
        task=task,
        continue_with=cue,
    )
    return prompt.completion_text()


def split_request(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str, str]:
    """The dialogue, the task and the completion cue of a chat request."""
    others = [message_text(m) for m in messages if m.get("role") not in ("system", "developer")]
    text = "\n\n".join(text for text in others if text)
    if "Response lines" in text.rpartition("\n\n")[2]:
        # A bot's or interrogator's task: the chat so far (none at an opening) and the cue.
        dialogue, _, task = text.rpartition("\n\n")
        return dialogue, task, RESPONSE_CUE
    dialogue, task = split_task(text)
    return dialogue, task, ""


def split_task(user_text: str) -> tuple[str, str]:
    """The dialogue and the task of a user message, undoing :meth:`Prompt.user_text`.

    The task is the last paragraph. A completion model is never shown it (told what to
    write, this base model writes more instructions instead of chat lines), so it is set
    apart, unless nothing comes before it: a lone paragraph is all the model has to go on.
    """
    dialogue, _, task = user_text.rpartition("\n\n")
    if not dialogue.strip():
        return user_text, ""
    return dialogue, task


def register_embedded_chat_format(llama_cpp: Any) -> None:
    """Register :data:`EMBEDDED_CHAT_FORMAT` with llama-cpp-python's chat formats."""
    formats = llama_cpp.llama_chat_format

    def formatter(*, messages: Sequence[Mapping[str, Any]], **_: Any) -> Any:
        return formats.ChatFormatterResponse(
            prompt=completion_prompt(messages), stop=stop_strings(())
        )

    complete = formats.chat_formatter_to_chat_completion_handler(formatter)

    def handler(*, messages: Sequence[Mapping[str, Any]], **options: Any) -> Any:
        # The model continued after the cue: give the reply its line start back, as the
        # local provider does (continued_from), so it reads as a chat line.
        result = complete(messages=messages, **options)
        cue = split_request(messages)[2]
        if cue and isinstance(result, dict):
            for choice in result.get("choices", []):
                message = choice.get("message") or {}
                if isinstance(message.get("content"), str):
                    message["content"] = cue + message["content"]
        return result

    # register_chat_format refuses a name it already holds; building the app again in one
    # process (tests) registers the same format again.
    formats.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        EMBEDDED_CHAT_FORMAT, handler, overwrite=True
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server and serve until interrupted; 2 with a one-line error if it can't."""
    args = build_parser().parse_args(argv)
    try:
        app = server_app(args)
    except SdttError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if caveat_line(args):
        print(caveat_line(args), file=sys.stderr, flush=True)
    import uvicorn

    from sdtt.models.request_log import RequestLog

    try:
        log = sys.stderr if args.request_log == "-" else open(args.request_log, "a")  # noqa: SIM115
    except OSError as error:
        print(f"error: --request-log {args.request_log}: {error.strerror}", file=sys.stderr)
        return 2
    server = uvicorn.Server(
        uvicorn.Config(
            RequestLog(app, log, prompts=args.log_prompts),
            host=args.host,
            port=args.port,
            log_level="warning",
        )
    )
    listen = server.startup

    async def startup(sockets: Any = None) -> None:
        # Say so once it listens (a port in use ends it here instead): until then requests
        # are refused, and the user needs the URL to pass on.
        await listen(sockets=sockets)
        if not server.should_exit:
            print(ready_line(args), flush=True)

    setattr(server, "startup", startup)  # noqa: B010 (mypy refuses assigning a method)
    server.run()
    return 0


def ready_line(args: argparse.Namespace) -> str:
    """The line printed once the server listens: where, and what to give sdtt."""
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/v1"
    logprobs = "on" if args.logprobs else "off, --logprobs for them"
    use = f"sdtt ... --model openai/gemma --base-url {url}"
    return f"ready: {url} (log-probabilities {logprobs}): {use}"


def caveat_line(args: argparse.Namespace) -> str:
    """What the served model's answers are worth, printed at start ('' for a user's file)."""
    return "" if args.model else f"note: the embedded Gemma 3 270M is {TOY_CAVEAT}."


if __name__ == "__main__":
    sys.exit(main())
