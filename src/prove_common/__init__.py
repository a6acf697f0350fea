"""The building blocks both command lines use (`poisson-prove` and `proveai`), written once.

A package of its own in the `poisson-prove` distribution, beside `poisson_prove` and `proveai`:
it imports neither (tests/prove_common/test_layers.py holds this), and both import its public
names. docs/shared-building-blocks.md says what each module holds and why.

- `errors`   — `UserError`, the base of `ProveError` and `ProveAIError`, and the exit codes both
               CLIs share (usage 2, unexpected 70, interrupted 130); no exit-code table
- `cliapp`   — the dispatcher (`run_app`, lazy verbs, `--version` read on demand, `--plain`/
               `--debug` options), usage errors, `error:`/`next:` rendering, the errors log
- `console`  — pretty (terminal) or plain (pipe, --plain, NO_COLOR) output; count formatting
- `tables`   — the one table drawer: a `Table` as data, drawn as aligned text or a Rich table
               whose cells are never read as markup
- `progress` — the one progress display: a Rich bar with rate and ETA, or plain lines
- `text`     — `value_as_text`: a value (an output, a field) as text, one rule
- `jsonio`   — `canonical_json` (hashes, cache keys), `write_json_atomic`, `utc_now`
- `files`    — atomic writes under one temporary-name scheme, stale-temporary cleanup, `lock`
- `children` — child processes in their own session whose whole group is killed on timeout
- `suggest`  — "did you mean" for unknown names
- `step_summary` — the GitHub Actions run page: Markdown tables for $GITHUB_STEP_SUMMARY and
               `::warning` annotations, for both CI gates
- `loopback` — the rule of both local servers: bound to 127.0.0.1, a foreign Host or Origin refused
- `lazy`     — `lazy_exports`: a package's public names imported on first use
- `version`  — the installed distribution's version, read on first use
"""
