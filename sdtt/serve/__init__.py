"""``sdtt serve``: live Turing tests in the browser for remote participants.

The names in :data:`__all__` are the package's public face (what the command uses);
the modules:

- :mod:`sdtt.serve.spec`: the study spec (TOML) and its conditions;
- :mod:`sdtt.serve.store`: where participants, rooms, messages and verdicts are kept
  (SQLite in the study folder), each written before it is delivered;
- :mod:`sdtt.serve.pgstore`: the same store in PostgreSQL, for several server processes;
- :mod:`sdtt.serve.storage`: which of the two a study uses;
- :mod:`sdtt.serve.matchmaker`: the lobby as a pure state machine (no I/O, no clock);
- :mod:`sdtt.serve.protocol`: the websocket frames, checked;
- :mod:`sdtt.serve.room`: one chat, with the persona bot run by the engine's session or a
  human witness relayed;
- :mod:`sdtt.serve.indicator`: the typing indicator, by one policy for every witness;
- :mod:`sdtt.serve.phases`: the moves participants and rooms may make (one table);
- :mod:`sdtt.serve.market_room`: a Turing Trade market game (bettors trade on a target);
- :mod:`sdtt.serve.slider`: belief slider readings as belief traces (for the export);
- :mod:`sdtt.serve.server`: the study server that joins these parts on one trio loop:
  - :mod:`sdtt.serve.event_log`: its clock and event log (committed in batches);
  - :mod:`sdtt.serve.connections`: websockets and the frames delivered to them;
  - :mod:`sdtt.serve.state`: what a (re)connecting browser is shown;
  - :mod:`sdtt.serve.handling`: each frame a browser sends (join, consent, send, trade,
    typing, belief, verdict);
  - :mod:`sdtt.serve.participants`: participants into the lobby and done;
  - :mod:`sdtt.serve.lobby`: the waiting participants handed to the matchmaker;
  - :mod:`sdtt.serve.lifecycle`: rooms opened, run and ended (leases on a shared store);
  - :mod:`sdtt.serve.bots`: the conditions' persona bots run in bot rooms;
  - :mod:`sdtt.serve.relay`: what other processes of the study publish;
  - :mod:`sdtt.serve.overview`: the admin page's figures;
- :mod:`sdtt.serve.app`: the ASGI app (Starlette) with the pages and the websocket;
- :mod:`sdtt.serve.policy`: the security headers and the origin check, one middleware;
- :mod:`sdtt.serve.collector`: the garbage collector of a serving process;
- :mod:`sdtt.serve.prolific`: Prolific's API for ``sdtt prolific`` (studies, submissions,
  bonuses).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sdtt.serve.app import build_app
    from sdtt.serve.collector import collect_periodically, serving_collector
    from sdtt.serve.export import export_study
    from sdtt.serve.moderation import moderation_key
    from sdtt.serve.prolific import (
        SUBMISSION_STATES,
        ProlificClient,
        Record,
        bonus_amounts,
        codes_by_outcome,
        decide,
        draft_body,
        pay_bonus,
        prolific_section,
        release_bonus,
        review,
        send_decision,
        set_up_bonuses,
        token,
    )
    from sdtt.serve.protocol import MAX_FRAME
    from sdtt.serve.server import StudyServer
    from sdtt.serve.spec import Study, read_study
    from sdtt.serve.storage import describe_store, open_store

_EXPORTS = {
    "SUBMISSION_STATES": "prolific",
    "ProlificClient": "prolific",
    "Record": "prolific",
    "bonus_amounts": "prolific",
    "codes_by_outcome": "prolific",
    "decide": "prolific",
    "draft_body": "prolific",
    "pay_bonus": "prolific",
    "prolific_section": "prolific",
    "release_bonus": "prolific",
    "review": "prolific",
    "send_decision": "prolific",
    "set_up_bonuses": "prolific",
    "token": "prolific",
    "MAX_FRAME": "protocol",
    "Study": "spec",
    "StudyServer": "server",
    "build_app": "app",
    "collect_periodically": "collector",
    "describe_store": "storage",
    "export_study": "export",
    "moderation_key": "moderation",
    "open_store": "storage",
    "read_study": "spec",
    "serving_collector": "collector",
}
__all__ = [
    "MAX_FRAME",
    "SUBMISSION_STATES",
    "ProlificClient",
    "Record",
    "Study",
    "StudyServer",
    "bonus_amounts",
    "build_app",
    "codes_by_outcome",
    "collect_periodically",
    "decide",
    "describe_store",
    "draft_body",
    "export_study",
    "moderation_key",
    "open_store",
    "pay_bonus",
    "prolific_section",
    "read_study",
    "release_bonus",
    "review",
    "send_decision",
    "serving_collector",
    "set_up_bonuses",
    "token",
]
"""What ``sdtt serve`` uses: each is imported from its module on first use."""


def __getattr__(name: str) -> Any:
    # Imported on first use: the spec alone (read by other commands) must not load the
    # web server, and ``sdtt serve --help`` must not load any of it.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
