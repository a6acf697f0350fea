"""`poisson-prove init --example | --benchmark [--force] [PATH]`: the example's spec written (the
benchmark's with its cases beside it), existing files kept unless --force, a usage error without
--example or --benchmark."""

from __future__ import annotations

from importlib import resources

from tests.conftest import assert_clean_error


def test_init_example_refuses_to_overwrite_without_force(prove, workdir) -> None:
    assert prove("init", "--example").returncode == 0
    spec = workdir / "prove.toml"
    spec.write_text("# mine\n")
    again = prove("init", "--example")
    assert_clean_error(again, 1, "already exists", "next: poisson-prove init --example --force")
    assert spec.read_text() == "# mine\n"
    forced = prove("init", "--example", "--force")
    assert forced.returncode == 0 and "mock_agent:rollout" in spec.read_text()
    (workdir / "sub").mkdir()
    assert prove("init", "--example", "sub").returncode == 0
    assert (workdir / "sub" / "prove.toml").read_text() == spec.read_text()
    assert_clean_error(prove("init"), 2, "--example")


def test_init_benchmark_writes_the_spec_and_its_cases_beside_it(prove, workdir) -> None:
    shipped = resources.files("poisson_prove.examples")
    result = prove("init", "--benchmark")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "wrote prove.toml and questions.jsonl: the benchmark example's sweep spec (120 cases x 3 replicates)",
        "next: poisson-prove sweep",
    ]
    assert result.stderr == ""
    spec, cases = workdir / "prove.toml", workdir / "questions.jsonl"
    assert spec.read_text() == shipped.joinpath("benchmark.toml").read_text()
    assert cases.read_text() == shipped.joinpath("questions.jsonl").read_text()
    assert 'values_from = "questions.jsonl"' in spec.read_text()

    spec.unlink()
    cases.write_text("mine\n")  # the cases file alone is enough to refuse
    again = prove("init", "--benchmark")
    assert_clean_error(
        again,
        1,
        "error: questions.jsonl already exists; nothing was written",
        "next: poisson-prove init --benchmark --force",
    )
    assert not spec.exists() and cases.read_text() == "mine\n"
    assert prove("init", "--benchmark", "--force").returncode == 0
    assert cases.read_text() == shipped.joinpath("questions.jsonl").read_text()

    (workdir / "sub").mkdir()
    into = prove("init", "--benchmark", "sub")
    assert into.returncode == 0, into.stderr
    assert (workdir / "sub" / "questions.jsonl").exists()
    assert into.stdout.splitlines()[-1] == "next: poisson-prove sweep sub/prove.toml"
    both = prove("init", "--example", "--benchmark")
    assert_clean_error(both, 2, "not allowed with argument")
