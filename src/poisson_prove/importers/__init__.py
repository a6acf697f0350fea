"""Importers: eval logs written by other tools (Inspect AI, lm-evaluation-harness) as ordinary
runs, each imported task a benchmark whose cases are its samples (STATISTICS.md section 7)."""

from poisson_prove.importers._writer import ImportResult
from poisson_prove.importers.outcomes import OutcomeMapping

__all__ = ["ImportResult", "OutcomeMapping"]
