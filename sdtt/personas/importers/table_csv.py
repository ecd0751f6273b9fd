"""``sdtt persona import csv``: see :mod:`sdtt.personas.importers.tabular`."""

from __future__ import annotations

from sdtt.personas.importers.tabular import CsvImporter

IMPORTER = CsvImporter()
