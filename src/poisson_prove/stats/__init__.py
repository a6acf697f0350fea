"""Exact statistics behind every printed number: design power, rates and tests.

Import the submodules directly (`poisson_prove.stats.power`, `.incidence`, `.tests`); this
package imports nothing heavy itself so that `--help` stays instant.
"""
