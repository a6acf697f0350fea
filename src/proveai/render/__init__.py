"""Drawing: proveai's results as people read them, on a terminal and as HTML. Nothing else in
proveai draws; the command line parses, calls one library function and draws through here.

- `verify`: a verify's tables as data, the gate's verdict in words, the summary line, the
  markdown step summary
- `snapshot`: `proveai snapshot` on the terminal (tables, re-run progress, warnings, diffs)
- `traces`: the trace listings of `proveai status` and `proveai list`
- `replay`: `proveai run` on the terminal (progress, summary table, totals, notes)
- `report`, `graph`, `templates/`: the self-contained HTML report (a replay's; its public
  address is proveai.report)
- `verify_page`: a verify's report.html, drawn from its agent verdicts
"""
