"""What an import did, for the user to read: counts, warnings, what was left out.

An :class:`ImportReport` holds counts only, never a message text or a replaced value, so
it can be printed or logged freely. ``str(report)`` is the text ``sdtt persona import``
prints; :meth:`ImportReport.lines` gives the same lines with the part worth highlighting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sdtt.personas.scrub import ScrubReport


@dataclass(frozen=True)
class ReportLine:
    """One line of the report; ``flag`` is a leading part to highlight (may be empty)."""

    text: str
    flag: str = ""

    def __str__(self) -> str:
        return self.flag + self.text


@dataclass(frozen=True)
class ImportReport:
    """Counts and warnings of one import."""

    format: str
    """The export format (``whatsapp``, ``telegram``...)."""
    persona: str
    """The persona's name."""
    conversations: int
    persona_messages: int
    """Messages written by the persona."""
    partner_messages: int
    """Messages by the other side."""
    participants: int
    """People who wrote in the export."""
    warnings: list[str] = field(default_factory=list)
    """Things the user must know, e.g. a guessed date order."""
    dropped: dict[str, int] = field(default_factory=dict)
    """Messages (or conversations) left out, by reason."""
    scrub: ScrubReport | None = None
    """Replacements made per kind of personal data; None when scrubbing was off."""
    timing_samples: int = 0
    """Messages the timing profile was fitted from."""
    timing_fallback: list[str] = field(default_factory=list)
    """Why parts of the timing profile kept their defaults."""
    detected: dict[str, str] = field(default_factory=dict)
    """What the importer worked out itself, e.g. ``{"date order": "day/month/year"}``."""

    def lines(self) -> list[ReportLine]:
        """The report, one line per fact."""
        lines = [ReportLine(f" {warning}", flag="warning:") for warning in self.warnings]
        lines.append(
            ReportLine(
                f"persona {self.persona}: {plural(self.conversations, 'conversation')}, "
                f"{plural(self.persona_messages, 'message')} by the persona, "
                f"{self.partner_messages} by the other side."
            )
        )
        left_out = counts_text(self.dropped)
        if left_out:
            lines.append(ReportLine(f"left out: {left_out}."))
        if self.scrub is not None:
            lines.append(ReportLine(f"scrubbed: {self.scrub.summary()}."))
        else:
            lines.append(
                ReportLine(
                    " (--no-scrub): the persona holds personal data; "
                    "do not send it to a remote model provider.",
                    flag="not scrubbed",
                )
            )
        if self.timing_fallback:
            kept = "; ".join(self.timing_fallback)
            lines.append(ReportLine(f"timing profile: defaults kept for {kept}."))
        else:
            lines.append(ReportLine(f"timing profile: fitted from {self.timing_samples} messages."))
        return lines

    def __str__(self) -> str:
        return "\n".join(str(line) for line in self.lines())


def plural(count: int, noun: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def counts_text(counts: Mapping[str, int]) -> str:
    """``2 media, 1 system``: the non-zero counts, by name."""
    return ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items()) if count)
