"""Importers: eval logs written by other tools (Inspect AI, lm-evaluation-harness) as ordinary runs."""

from poisson_prove.importers._writer import ImportResult, OutcomeMapping

__all__ = ["ImportResult", "OutcomeMapping"]
