"""Hides the installed modal: importing it fails as it does when the extra is not installed."""

raise ModuleNotFoundError("No module named 'modal'", name="modal")
