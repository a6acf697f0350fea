"""Capture: @monitor spans grouped by a Trace, labelled by checks, written by exporters."""
