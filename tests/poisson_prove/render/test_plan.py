"""The sweep's plan lines as users read them: the concurrency when not 1, and declared chaos
faults named as injected."""

from __future__ import annotations

from tests.poisson_prove.helpers import SEEDED_TARGET, seeded_spec, small_spec, write


def test_plan_names_the_concurrency_when_not_1(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, replicates=20)
    result = prove("sweep", "--dry-run", "--concurrency", "3", "--max-mde", "0.5")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "plan 40 rollouts of agent: 2 cells x 20 replicates on local (concurrency 3), $0 (local)"
    )


def test_declared_chaos_faults_are_named_on_the_plan_as_injected(prove, workdir) -> None:
    seeded_spec(workdir, extra='[[chaos.faults]]\nkind = "latency"\nrate = 0.1\nseconds = 1\n'
          '[[chaos.faults]]\nkind = "http_status"\nrate = 0.05\nstatus = 503\n')
    result = prove("sweep", "--dry-run", "--max-mde", "0.5")
    assert result.returncode == 0, result.stderr
    assert (
        "chaos latency 1 s at 0.1; http_status 503 at 0.05: injected into httpx and requests calls, "
        "the same calls faulted in runs paired with --pair-with"
        in result.stdout.splitlines()
    )
