"""Writing what an import produced besides the persona: the scrub report."""

from __future__ import annotations

import json
from pathlib import Path

from sdtt.errors import InputError
from sdtt.files import write_text_atomic
from sdtt.personas.importers.build import ImportResult, WrittenImport


def write_scrub_report(result: ImportResult | WrittenImport, path: Path) -> None:
    """Write the placeholder -> original table (personal data, on explicit request).

    Without scrubbing there is no table: that is an :class:`InputError`.
    """
    if result.report.scrub is None:
        raise InputError("needs scrubbing; drop --no-scrub.", field="--scrub-report")
    report = {
        "warning": "This file holds the personal data that was scrubbed. Keep it private.",
        "persona": (
            result.persona.info.name if isinstance(result, ImportResult) else result.info.name
        ),
        "counts": result.report.scrub.as_dict(),
        "placeholders": result.scrub_mapping,
        "lower_case_first_names_to_review": result.scrub_review,
    }
    try:
        write_text_atomic(path, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    except OSError as error:
        raise InputError(
            f"cannot write ({error.strerror}).", path=path, field="--scrub-report"
        ) from None
