"""Griffe extension: sdtt's reStructuredText in docstrings becomes Markdown on the API page.

The docstrings name other objects the Sphinx way (``:class:`~sdtt.errors.InputError```,
``:func:`load_corpus```, ``:mod:`sdtt.models.batch```), which mkdocstrings' Google style
would print as they are. Each role becomes the name in code (the last part when the
target starts with ``~``), linked to the object's section when the site documents it: an
*optional* autorefs reference, which links when the identifier has an anchor and is plain
code, without a warning, when it has none. Relative names resolve as Python would see
them from the docstring's object (its members, its module's names and imports).

A reStructuredText simple table (columns between ``====  ====`` rules) becomes a Markdown
table, or a list when it has two columns and no header, instead of a paragraph of rules.

mkdocs.yml loads it through mkdocstrings' ``extensions`` option.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|type|any):`(?P<target>[^`]+)`"
)
EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
RULE = re.compile(r"^(?P<indent> *)=+(?: +=+)+ *$")


def _identifier(obj: griffe.Object, target: str) -> str:
    """The full path ``target`` names, seen from ``obj`` (``target`` itself if unknown)."""
    name = target.lstrip(".")
    head, _, rest = name.partition(".")
    try:
        path = obj.resolve(head)
    except griffe.NameResolutionError:
        return name
    full = f"{path}.{rest}" if rest else path
    try:
        found = obj.modules_collection.get_member(full)
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return full
    try:
        return str(found.canonical_path)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return full


def replace_roles(text: str, obj: griffe.Object) -> str:
    """``text`` with each Sphinx role replaced by an optional cross-reference in code."""

    def one(match: re.Match[str]) -> str:
        target = match["target"].strip()
        explicit = EXPLICIT.match(target)
        if explicit:
            title, target = explicit["title"], explicit["target"].strip()
        short = target.startswith("~")
        target = target.lstrip("~")
        if not explicit:
            title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        identifier = _identifier(obj, target)
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>"
        )

    return ROLE.sub(one, text)


def _cells(line: str, starts: list[int]) -> list[str]:
    ends = [*starts[1:], len(line) + 1]
    return [line[start:end].strip() for start, end in zip(starts, ends, strict=True)]


def _markdown_table(rules: list[int], lines: list[str]) -> list[str]:
    """The Markdown of the simple table ``lines[rules[0]:rules[-1] + 1]``."""
    first = lines[rules[0]]
    starts = [match.start() for match in re.finditer(r"=+", first)]
    body = [_cells(line, starts) for line in lines[rules[0] + 1 : rules[-1]] if line.strip()]
    header = None
    if len(rules) == 3:  # a rule under the header row
        header = _cells(lines[rules[0] + 1], starts)
        body = [_cells(line, starts) for line in lines[rules[1] + 1 : rules[2]] if line.strip()]
    if header is None and len(starts) == 2:
        return [f"- {left}: {right}" for left, right in body]
    header = header or [""] * len(starts)
    rows = [header, ["---"] * len(starts), *body]
    return ["| " + " | ".join(row) + " |" for row in rows]


def replace_tables(text: str) -> str:
    """``text`` with each reStructuredText simple table written in Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        if not RULE.match(lines[index]):
            out.append(lines[index])
            index += 1
            continue
        rule = lines[index].rstrip()
        rules = [index] + [i for i in range(index + 1, len(lines)) if lines[i].rstrip() == rule]
        if len(rules) < 2:
            out.append(lines[index])
            index += 1
            continue
        rules = rules[:3] if len(rules) >= 3 and rules[1] == index + 2 else rules[:2]
        out += ["", *_markdown_table(rules, lines), ""]
        index = rules[-1] + 1
    return "\n".join(out)


def _walk(obj: griffe.Object, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        obj.docstring.value = replace_tables(replace_roles(obj.docstring.value, obj))
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, griffe.Object):
            _walk(member, seen)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of a loaded package once its members are all known."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the roles of ``pkg`` and everything in it."""
        _walk(pkg, set())
