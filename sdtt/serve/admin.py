"""The admin page of ``sdtt serve``: plain HTML built on the server, every value escaped,
no script (it refreshes itself every few seconds with a meta tag)."""

from __future__ import annotations

from html import escape
from typing import Any

REFRESH_SECONDS = 5


def admin_page(study: str, overview: dict[str, Any]) -> str:
    """The page for ``overview`` (see :meth:`StudyServer.overview`); its forms are
    authorised by the admin cookie, so the token is not in the page."""
    e = escape
    waiting = "".join(f"<li>{e(pid)}</li>" for pid in overview["waiting"]) or "<li>nobody</li>"
    live_rows = "".join(
        "<tr>"
        f"<td>{e(room['id'])}</td><td>{e(room['condition'])}</td>"
        f"<td>{e(room['interrogator'])}</td><td>{e(room['witness'] or '')}</td>"
        f"<td>{room['messages']}</td><td>{e(room['created'])}</td>"
        f'<td><form method="post" action="/admin/{e(study)}/end">'
        f'<input type="hidden" name="room" value="{e(room["id"])}">'
        '<button type="submit">End room</button></form></td>'
        "</tr>"
        for room in overview["live"]
    )
    finished = "".join(
        f"<tr><td>{e(label)}</td><td>{count}</td></tr>"
        for label, count in sorted(overview["finished"].items())
    )
    excluded = "".join(
        f"<tr><td>{e(item['pid'])}</td><td>{e(item['outcome'] or '')}</td></tr>"
        for item in overview["excluded"]
    )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{REFRESH_SECONDS}">
<title>Admin: {e(study)}</title>
<link rel="stylesheet" href="/static/style.css">
</head>
<body class="admin">
<main>
<h1>Study {e(study)}</h1>
<h2>Waiting in the lobby ({len(overview["waiting"])})</h2>
<ul id="waiting">{waiting}</ul>
<h2>Live rooms ({len(overview["live"])})</h2>
<table id="live"><tr><th>Room</th><th>Condition</th><th>Interrogator</th><th>Witness</th>
<th>Messages</th><th>Started</th><th></th></tr>{live_rows}</table>
<h2>Finished games per condition</h2>
<table id="finished"><tr><th>Condition</th><th>Games</th></tr>{finished}</table>
<h2>Exclusions</h2>
<table id="excluded"><tr><th>Participant</th><th>Outcome</th></tr>{excluded}</table>
</main>
</body>
</html>
"""
