"""Hides the installed burla: importing it fails as it does when the extra is not installed."""

raise ModuleNotFoundError("No module named 'burla'", name="burla")
