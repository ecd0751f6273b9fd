"""HTML pages from Jinja2 templates, with every value escaped in one place.

The templates (``*.html`` beside this module, shipped as package data) never escape by
hand: every ``{{ value }}`` passes through :func:`escape_html`, which also turns the
braces survey tools read as placeholders into character references. A fragment that is
already HTML (a pair's chat tables, a data URI, inlined scripts) is passed in as
:class:`markupsafe.Markup` and so is written as it is. Jinja2 is imported on first use,
so commands that write no HTML start without it.
"""

from __future__ import annotations

import functools
import html
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

if TYPE_CHECKING:
    import jinja2

_BRACES = {"{": "&#123;", "}": "&#125;"}


def escape_html(text: str) -> str:
    """Escape text for HTML, including the braces survey tools treat as placeholders."""
    escaped = html.escape(text, quote=True)
    return "".join(_BRACES.get(char, char) for char in escaped)


def _escaped(value: Any) -> Markup:
    # Runs on every {{ }} output before autoescaping: plain values get the one escape
    # rule (braces included); Markup marks what is already HTML.
    if isinstance(value, Markup):
        return value
    return Markup(escape_html(str(value)))


@functools.cache
def environment() -> jinja2.Environment:
    """The template environment: autoescape on, undefined names an error."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("sdtt", "templates"),
        autoescape=True,
        finalize=_escaped,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # ``tojson`` output goes inside <script> elements: keep the text as written.
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


def render(name: str, **context: Any) -> str:
    """Render template ``name`` (a file in ``sdtt/templates/``) with ``context``."""
    return environment().get_template(name).render(**context)
