"""Importers of the formats the Kreiman lab's released Turing-test code and data use."""
