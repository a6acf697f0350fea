"""Prove: did a change to an LLM agent really change how often it fails?"""

from poisson_prove.episode import Episode
from poisson_prove.errors import ProveError

__version__ = "0.1.0"

__all__ = ["Episode", "ProveError", "__version__"]
