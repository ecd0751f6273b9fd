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
(``--model openai/<anything> --base-url http://127.0.0.1:8080/v1``). Needs
``pip install 'llama-cpp-python[server]'`` (and ``sdtt[local]`` for the embedded model).

Token log-probabilities are off unless ``--logprobs`` is given: llama-cpp-python's
server keeps the logits of every prompt position for them (``logits_all``), which took
the embedded model from 0.6 GB to 4.6-7.1 GB resident and made a long uncached prompt
take 2-3 times as long.
``sdtt judge --reveal --logprobs`` needs them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from sdtt.errors import ProviderUnavailableError, SdttError

DEFAULT_N_CTX = 8192


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
        help="llama-cpp-python chat format (default: the model's template, else llama-2). "
        "Avoid formats without a system role (such as gemma): they drop the persona.",
    )
    parser.add_argument("--n-threads", type=int, default=None, help="CPU threads")
    parser.add_argument(
        "--logprobs",
        action="store_true",
        help="answer requests for token log-probabilities (sdtt judge --logprobs); keeps "
        "every prompt position's logits: 8-12 times the memory, 2-3 times the time",
    )
    return parser


def server_app(args: argparse.Namespace) -> Any:
    """The server's ASGI app for ``args``, with the AMX guard installed first."""
    from sdtt.models.gguf import weights_path
    from sdtt.models.local import import_llama_cpp, install_amx_guard

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
    if args.chat_format:
        options["chat_format"] = args.chat_format
    if args.n_threads:
        options["n_threads"] = args.n_threads
    return create_app(
        server_settings=ServerSettings(host=args.host, port=args.port),
        model_settings=[ModelSettings(**options)],
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server and serve until interrupted; 2 with a one-line error if it can't."""
    args = build_parser().parse_args(argv)
    try:
        app = server_app(args)
    except SdttError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
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


if __name__ == "__main__":
    sys.exit(main())
