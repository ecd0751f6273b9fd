"""``sdtt serve``: live Turing tests in the browser for remote participants.

- :mod:`sdtt.serve.spec`: the study spec (TOML) and its conditions;
- :mod:`sdtt.serve.store`: where participants, rooms, messages and verdicts are kept
  (SQLite in the study folder), each written before it is delivered;
- :mod:`sdtt.serve.matchmaker`: the lobby as a pure state machine (no I/O, no clock);
- :mod:`sdtt.serve.protocol`: the websocket frames, checked;
- :mod:`sdtt.serve.room`: one chat, with the persona bot run by the engine's session or a
  human witness relayed;
- :mod:`sdtt.serve.market_room`: a Turing Trade market game (bettors trade on a target);
- :mod:`sdtt.serve.slider`: belief slider readings as belief traces (for the export);
- :mod:`sdtt.serve.server`: the study server that joins them on one trio loop;
- :mod:`sdtt.serve.app`: the ASGI app (Starlette) with the pages and the websocket.
"""
