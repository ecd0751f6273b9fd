"""``sdtt chat``: talk to a persona bot live in the terminal (a Textual app)."""

from __future__ import annotations

import argparse

from sdtt.commands.common import check_base_url
from sdtt.commands.console import CliConsole
from sdtt.errors import SdttError
from sdtt.files import output_folder
from sdtt.redact import shown


def run(args: argparse.Namespace) -> int:
    """Run ``sdtt chat`` from parsed arguments."""
    # Textual is imported here so other commands start fast.
    from sdtt.ui.app import ChatApp
    from sdtt.ui.chat_setup import build_live_chat

    output_folder(args.out)
    live = None
    if args.persona is not None or args.model is not None:
        if args.persona is None or args.model is None:
            raise SdttError(
                "give both --persona and --model, or neither to choose them on a setup screen."
            )
        check_base_url(args.base_url, [args.model])
        live = build_live_chat(
            persona=args.persona,
            model=args.model,
            pseudo=args.pseudo,
            mode=args.mode,
            delays=args.delays,
            turns=args.turns,
            out_dir=args.out,
            participant=args.participant,
            t1=args.t1,
            max_messages=args.max_messages,
            seed=args.seed,
            base_url=args.base_url,
            api_key_env=args.api_key_env,
        )
    app = ChatApp(live, out_dir=args.out, base_url=args.base_url)
    outcome = app.run()
    if app.error is not None:
        if isinstance(app.error, SdttError):
            raise app.error
        raise app.error
    console = CliConsole(highlight=False)
    if outcome is None:
        return 0
    done = "finished" if outcome.finished else "ended"
    console.print(f"Chat {done}: {outcome.turns} turn(s), {outcome.messages} message(s).")
    for path in (outcome.transcript_path, outcome.log_path):
        console.print(f"  {shown(str(path))}")
    return 0
