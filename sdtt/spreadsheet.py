"""Cells that a spreadsheet shows as text, never runs as a formula.

Excel, LibreOffice and Google Sheets treat a cell that starts with ``=``, ``+``, ``-``
or ``@`` (and, in some versions, a tab or carriage return) as a formula, so chat text
such as ``=HYPERLINK("http://...")`` in a CSV would become a live link or a calculation
when a researcher opens the file. Every CSV and TSV sdtt writes passes its text through
:func:`safe_cell`, which puts an apostrophe in front of such text: spreadsheets show the
text as it was (most hide the apostrophe), and :func:`restore_cell` takes it off again.
Text that already starts with an apostrophe gets a second one, so restoring is exact.

Cells that hold HTML (LimeSurvey's question texts, say) use :func:`safe_html_cell`
instead: the first character becomes a character reference (``=`` as ``&#61;``), which
the survey tool shows as the character and a spreadsheet as harmless text.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

MARK = "'"
"""What :func:`safe_cell` puts in front of such text."""


def safe_cell(text: str) -> str:
    """``text`` for a CSV/TSV cell: a leading apostrophe when it would start a formula."""
    if text.startswith((*FORMULA_STARTS, MARK)):
        return MARK + text
    return text


def restore_cell(text: str) -> str:
    """The text :func:`safe_cell` was given (a cell without its mark is returned as is)."""
    if text.startswith(MARK) and text[1:].startswith((*FORMULA_STARTS, MARK)):
        return text[1:]
    return text


def safe_html_cell(html: str) -> str:
    """An HTML cell that cannot start a formula; it renders exactly as before."""
    if html.startswith(FORMULA_STARTS):
        return f"&#{ord(html[0])};{html[1:]}"
    return html
