"""Hides the installed ray: importing it fails as it does when the extra is not installed."""

raise ModuleNotFoundError("No module named 'ray'", name="ray")
