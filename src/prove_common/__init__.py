"""The building blocks both command lines use (`poisson-prove` and `proveai`), written once.

The lowest layer of poisson_prove beside `errors`: nothing here imports the rest of the
package, and proveai imports these public names, never a private module of poisson_prove.

- `cliapp`   — the dispatcher (`run_app`, lazy verbs, `--plain`/`--debug` options), usage
               errors, `error:`/`next:` rendering, the errors log
- `console`  — pretty (terminal) or plain (pipe, --plain, NO_COLOR) output; count formatting
- `tables`   — the one table drawer: a `Table` as data, drawn as aligned text or a Rich table
               whose cells are never read as markup
- `progress` — the one progress display: a Rich bar with rate and ETA, or plain lines
- `text`     — `value_as_text`: a value (an output, a field) as text, one rule
- `jsonio`   — `canonical_json` (hashes, cache keys), `write_json_atomic`, `utc_now`
- `files`    — atomic writes under one temporary-name scheme, stale-temporary cleanup, `lock`
- `children` — child processes in their own session whose whole group is killed on timeout
- `suggest`  — "did you mean" for unknown names
"""
