"""Where episodes run. Every backend implements `Executor` (backends/base.py)."""
