"""Replay: re-send captured model requests with overrides, re-invoke agents replay cannot re-send,
attribute each captured edge a verdict, and the `proveai run` loop with its baselines and
experiments."""
