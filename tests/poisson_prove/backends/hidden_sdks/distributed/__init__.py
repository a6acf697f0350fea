"""Hides the installed distributed: importing it fails as it does when the extra is not installed."""

raise ModuleNotFoundError("No module named 'distributed'", name="distributed")
