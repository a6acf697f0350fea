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
        "chaos latency 1 s at 0.1; http_status 503 at 0.05: injected into httpx, httpx2, requests and "
        "aiohttp calls, the same calls faulted in runs paired with --pair-with"
        in result.stdout.splitlines()
    )


def test_a_benchmarks_inline_case_ids_are_counted_and_the_first_five_shown(prove, workdir) -> None:
    write(workdir, "agent.py", SEEDED_TARGET)
    ids = ", ".join(f'"t{i}"' for i in range(1, 8))
    spec = small_spec(workdir, replicates=2)
    spec.write_text(
        spec.read_text()
        .replace('[axes.x]\ntype = "categorical"\n', '[axes.x]\ntype = "categorical"\ncases = true\n')
        .replace('values = ["a", "b"]', f"values = [{ids}]")
    )
    result = prove("sweep", "--dry-run", "--max-mde", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "plan 14 rollouts of agent: 7 cases x 2 replicates on local, $0 (local)"
    assert "axes x 7 cases: t1, t2, t3, t4, t5, ..." in lines
    assert lines[-2].startswith("if independent one pooled group alone ")
    assert lines[-1].startswith("smallest rise one pooled group alone ")


def test_the_looks_are_named_in_full_when_three_or_fewer() -> None:
    from poisson_prove.render.plan import _looks_text
    from poisson_prove.sweep.stop_when_settled import planned_looks

    assert _looks_text(planned_looks(2)) == "1, 2"
    assert _looks_text(planned_looks(3)) == "1, 2, 3"
    assert _looks_text(planned_looks(25_000)) == "2,500, 5,000, ..., 25,000"
