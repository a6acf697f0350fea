"""What proveai knows of GitHub Actions.

- `scaffold`: the workflow `proveai ci init` writes (.github/workflows/proveai.yml)
- `targeting`: which snapshots a pull request touched (git diff against $GITHUB_BASE_REF:
  an agent's source, a file it read, a module it imports), what `snapshot verify` auto-targets in CI
- `step_summary`: appending the verify's tables to $GITHUB_STEP_SUMMARY

It sits below the snapshot gate, which asks it what to verify; the tables themselves are
drawn by proveai.render.verify.
"""
