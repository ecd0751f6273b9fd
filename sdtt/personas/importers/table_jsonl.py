"""``sdtt persona import jsonl``: see :mod:`sdtt.personas.importers.tabular`."""

from __future__ import annotations

from sdtt.personas.importers.tabular import JsonlImporter

IMPORTER = JsonlImporter()
