"""pytest11 entry point for proveai."""
