"""The proveai pytest plugin."""
