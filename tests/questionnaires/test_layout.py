from __future__ import annotations

import re

from sdtt.tasks.layout import (
    HIGHLIGHT,
    escape_html,
    escape_markdown,
    pair_html,
    pair_text,
    plain_label,
)
from tests.questionnaires.helpers import fixture_study


def test_html_escaping_covers_markup_and_placeholders() -> None:
    assert (
        escape_html('<b a="1">{x} & ${y}')
        == "&lt;b a=&quot;1&quot;&gt;&#123;x&#125; &amp; $&#123;y&#125;"
    )
    assert plain_label("a {b}\nc") == "a (b) / c"


def test_markdown_escaping() -> None:
    assert escape_markdown("a_b *c* [d](e) <s>") == r"a\_b \*c\* \[d\](e) &lt;s&gt;"
    assert escape_markdown("# not a heading") == r"\# not a heading"
    assert escape_markdown("12. not a list") == r"12\. not a list"
    assert escape_markdown("- not a list") == r"\- not a list"


def test_both_chats_of_a_pair_look_alike() -> None:
    item = fixture_study().questionnaire.items[1]
    html = pair_html(item)
    assert "\n" not in html and "\t" not in html
    tables = re.findall(r"<table.*?</table>", html)
    assert len(tables) == 2
    colgroups = [re.search(r"<colgroup>.*?</colgroup>", t).group(0) for t in tables]  # type: ignore[union-attr]
    assert colgroups[0] == colgroups[1]
    b_lines = sum(1 for chat in item.chats for line in chat if line.speaker == "B")
    assert html.count(f'<tr style="background:{HIGHLIGHT}">') == b_lines
    text = pair_text(item)
    assert text.count("\n>") == b_lines
