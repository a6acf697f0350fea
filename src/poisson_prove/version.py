"""The package's version, in a module of its own so that modules of every layer can name it
without importing the package's public map (`poisson_prove/__init__.py`)."""

__version__ = "0.1.0"
