"""``sdtt serve``: live Turing tests in the browser for remote participants.

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
  - :mod:`sdtt.serve.records`: its clock and event log (committed in batches);
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
- :mod:`sdtt.serve.policy`: the security headers and the origin check, one middleware.
"""
