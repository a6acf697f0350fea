"""`proveai ci init`: the GitHub Actions workflow that runs the snapshot gate."""
